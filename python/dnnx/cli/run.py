"""``dnnx run MODEL --input x.npy|x.npz|--random [--output y.npz] [--batch N]``: inference from the shell."""
from __future__ import annotations

import numpy as np

from ..model import load
from ._args import add_batch, add_model
from ._files import read_feeds, write_npz
from .timing import random_inputs

NAME = "run"
HELP = "run a model on arrays from an .npy/.npz file and print (and optionally save) the outputs"
SHOWN = 8  # how many rows or values the summary shows before eliding the rest


def add_arguments(parser) -> None:
    add_model(parser)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--input", metavar="FILE",
                        help=".npy (a single-input model) or .npz keyed by input name (or arr_0, arr_1, ...)")
    source.add_argument("--random", action="store_true",
                        help="feed seeded standard-normal inputs (symbolic dims take --batch, default 1)")
    parser.add_argument("--output", metavar="FILE.npz", help="save the outputs here, keyed by output name")
    add_batch(parser)


def _elided(values) -> str:
    values = list(values)
    shown = ", ".join(f"{v:.6g}" if isinstance(v, float) else str(v) for v in values[:SHOWN])
    return f"[{shown}{', ...' if len(values) > SHOWN else ''}]"


def summarize(name: str, array: np.ndarray) -> list:
    lines = [f"{name}  {array.dtype}  {list(array.shape)}"]
    if array.size == 0:
        return lines
    flat = array.reshape(-1)
    if array.dtype.kind == "f":
        lines.append(f"  min {flat.min():.6g}  mean {flat.mean():.6g}  max {flat.max():.6g}")
    if array.ndim == 2:  # [batch, classes]: the predicted class per row is what one usually wants
        lines.append(f"  argmax per row: {_elided(array.argmax(axis=1).tolist())}")
    lines.append(f"  first values: {_elided(flat[:SHOWN].tolist())}")
    return lines


def main(args) -> int:
    model = load(args.model, batch_size=args.batch)
    if args.random:
        feeds, _ = random_inputs(model.inputs, args.batch or 1)
    else:
        feeds = read_feeds(args.input, model.inputs)
    outputs = model.run_dict(feeds)
    for name, array in outputs.items():
        print("\n".join(summarize(name, array)))
    if args.output:
        write_npz(args.output, outputs)
        print(f"wrote {args.output}")
    return 0
