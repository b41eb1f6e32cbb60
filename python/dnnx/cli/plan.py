"""``dnnx plan MODEL [--batch N] [--device cuda] [--precision P]``: the planner's choices per layer
and the activation memory."""
from __future__ import annotations

from ..model import load
from ..plan import format_bytes
from ._args import add_batch, add_model, add_planning, planning_options

NAME = "plan"
HELP = ("show the execution plan (per layer: shapes, algorithm, math, workspace) and memory use, on the CPU or "
        "(--device cuda) an NVIDIA GPU")


def add_arguments(parser) -> None:
    add_model(parser)
    add_batch(parser, help_extra=" (symbolic dims are planned as 1 otherwise)")
    parser.add_argument("--device", default="cpu", help='"cpu", "cuda" or "cuda:N"')
    add_planning(parser)


def memory_line(memory: dict) -> str:
    arena, naive = memory["arena_bytes"], memory["naive_bytes"]
    share = f" ({100.0 * arena / naive:.0f}% of it)" if naive else ""
    return (f"activations: arena {format_bytes(arena)} after liveness placement, "
            f"naive {format_bytes(naive)}{share}; workspace {format_bytes(memory['workspace_bytes'])}")


def main(args) -> int:
    model = load(args.model, batch_size=args.batch, **planning_options(args))
    print(model.plan())
    print(memory_line(model.memory()))
    return 0
