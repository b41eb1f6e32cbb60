"""``dnnx bench MODEL --batch N [--compare onnxruntime] [--threads T] [--warmup W] [--iters K]``.

Prints its settings as soon as the model is loaded, shows a progress bar over the calls (on a
terminal, on stderr) and prints the timings when they are done."""
from __future__ import annotations

from ._args import add_batch, add_model, non_negative_int, positive_int
from .timing import ORT, available_cores, format_header, format_report, measure

NAME = "bench"
HELP = ("time a model on random inputs on the CPU (median, p90, throughput), optionally against "
        "onnxruntime's CPU provider")


def add_arguments(parser) -> None:
    add_model(parser)
    add_batch(parser, required=True, help_extra="; also the value of any other symbolic dim")
    parser.add_argument("--compare", choices=[ORT], help="also time onnxruntime on the same inputs and threads")
    parser.add_argument("--threads", type=positive_int, metavar="T",
                        help=f"threads for each engine (default: the cores available, {available_cores()})")
    parser.add_argument("--warmup", type=non_negative_int, default=10, metavar="W", help="untimed calls first")
    parser.add_argument("--iters", type=positive_int, default=100, metavar="K", help="timed calls")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs")


def main(args) -> int:
    report = measure(args.model, args.batch, threads=args.threads, warmup=args.warmup, iters=args.iters,
                     compare=args.compare == ORT, seed=args.seed, progress=True,
                     announce=lambda r: print(format_header(r), flush=True))
    print(format_report(report, header=False))
    return 0
