"""``dnnx profile MODEL [--device cuda] [--batch N] [--repeat K]``: per-layer times on random inputs."""
from __future__ import annotations

from ..model import load
from ._args import add_batch, add_model, positive_int
from .timing import random_inputs

NAME = "profile"
HELP = "time every layer (GPU time from CUDA events on --device cuda) and print the median per layer"


def add_arguments(parser) -> None:
    add_model(parser)
    parser.add_argument("--device", default="cpu", metavar="DEVICE", help="cpu (default), cuda or cuda:N")
    add_batch(parser, help_extra="; also the value of any other symbolic dim (default 1)")
    parser.add_argument("--repeat", type=positive_int, default=20, metavar="K",
                        help="runs to take the median over (default 20)")
    parser.add_argument("--no-graph", action="store_true",
                        help="on CUDA, queue the layers one by one instead of replaying a CUDA graph "
                             "(times then include launch gaps)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")


def main(args) -> int:
    model = load(args.model, batch_size=args.batch, device=args.device, cuda_graph=not args.no_graph)
    feeds, _ = random_inputs(model.inputs, args.batch or 1, seed=args.seed)
    model.run_dict(feeds)  # plans and warms up (cuDNN and cuBLAS load their kernels on first use)
    print(model.profile(feeds, repeat=args.repeat))
    return 0
