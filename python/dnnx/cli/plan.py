"""``dnnx plan MODEL [--batch N]``: the planner's choices per layer and the activation memory."""
from __future__ import annotations

from ..model import load
from ..plan import format_bytes
from ._args import add_batch, add_model

NAME = "plan"
HELP = "show the execution plan on the CPU (per layer: shapes, algorithm, workspace) and memory use"


def add_arguments(parser) -> None:
    add_model(parser)
    add_batch(parser, help_extra=" (symbolic dims are planned as 1 otherwise)")


def memory_line(memory: dict) -> str:
    arena, naive = memory["arena_bytes"], memory["naive_bytes"]
    share = f" ({100.0 * arena / naive:.0f}% of it)" if naive else ""
    return (f"activations: arena {format_bytes(arena)} after liveness placement, "
            f"naive {format_bytes(naive)}{share}; workspace {format_bytes(memory['workspace_bytes'])}")


def main(args) -> int:
    model = load(args.model, batch_size=args.batch)
    print(model.plan())
    print(memory_line(model.memory()))
    return 0
