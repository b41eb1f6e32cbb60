"""``dnnx models NAME --out FILE [--seed S]``: writes one of the example models dnnx builds itself."""
from __future__ import annotations

from ..examples import BUILDERS, build
from ._files import atomic_write

NAME = "models"
HELP = "write an example model (" + ", ".join(BUILDERS) + ") built with seeded random weights"


def add_arguments(parser) -> None:
    parser.add_argument("name", choices=sorted(BUILDERS), help="which example model")
    parser.add_argument("--out", required=True, metavar="FILE.onnx", help="where to write it")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random weights (default 0)")


def main(args) -> int:
    model = build(args.name, seed=args.seed)
    data = model.SerializeToString()
    atomic_write(args.out, lambda f: f.write(data))
    print(f"wrote {args.out} ({args.name}, seed {args.seed}, {len(data):,} bytes)")
    return 0
