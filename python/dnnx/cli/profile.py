"""``dnnx profile MODEL [--device cuda] [--batch N] [--repeat K] [--plot layers.png] [--trace trace.json]``:
per-layer times on random inputs, as a table, a bar chart and a Chrome trace (Perfetto)."""
from __future__ import annotations

from pathlib import Path

from .._plot import layer_times, require_matplotlib
from .._trace import write_chrome_trace
from ..model import load
from ._args import add_batch, add_model, add_planning, planning_options, positive_int
from .timing import random_inputs

NAME = "profile"
HELP = ("time every layer and print the median per layer: on the CPU (host wall-clock time) or, with "
        "--device cuda, on an NVIDIA GPU (GPU time from CUDA events)")


def add_arguments(parser) -> None:
    add_model(parser)
    parser.add_argument("--device", default="cpu", metavar="DEVICE", help="cpu, cuda or cuda:N")
    add_planning(parser)
    add_batch(parser, help_extra="; also the value of any other symbolic dim (default 1)")
    parser.add_argument("--repeat", type=positive_int, default=20, metavar="K", help="runs to take the median over")
    parser.add_argument("--no-graph", action="store_true",
                        help="on CUDA, queue the layers one by one instead of replaying a CUDA graph "
                             "(times then include launch gaps)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    parser.add_argument("--plot", metavar="FILE.png",
                        help="also draw the time per layer as a bar chart (needs matplotlib: dnnx[plot])")
    parser.add_argument("--trace", metavar="FILE.json",
                        help="also write the layers as a Chrome trace (open it in ui.perfetto.dev or chrome://tracing)")


def _check_output_folder(option: str, path) -> None:
    folder = Path(path).parent
    if not folder.is_dir():
        raise FileNotFoundError(f"{option} {path}: output folder not found: {folder}")


def main(args) -> int:
    if args.plot:
        require_matplotlib()  # before any work: a missing extra fails at once
        _check_output_folder("--plot", args.plot)
    if args.trace:
        _check_output_folder("--trace", args.trace)
    model = load(args.model, batch_size=args.batch, **planning_options(args),
                 cuda_graph=not args.no_graph)
    feeds, _ = random_inputs(model.inputs, 1 if args.batch is None else args.batch, seed=args.seed)
    model.run_dict(feeds)  # plans and warms up (cuDNN and cuBLAS load their kernels on first use)
    table = model.profile(feeds, repeat=args.repeat)
    print(table)
    name = Path(args.model).name
    if args.trace:
        write_chrome_trace(table, args.trace, model=name)
        print(f"wrote {args.trace} (Chrome trace: {len(table)} layer events)")
    if args.plot:
        layer_times(table, args.plot, title=f"{name}: time per layer on {table.device}, median of "
                                            f"{table.repeat} runs, total {table.total_ms:.3f} ms")
        print(f"wrote {args.plot}")
    return 0
