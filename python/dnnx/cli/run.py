"""``dnnx run MODEL --input x.npy|x.npz|--random [--output y.npz] [--batch N] [--chunk K]``: inference from
the shell. Inputs follow dnnx's input rule (dnnx/_inputs.py): a file of another dtype than the
input's is refused, naming the file, the input and both dtypes; a shape the model refuses names
the file too. ``--output`` is checked (an .npz name in a writable folder) before the model is
loaded. ``--chunk K`` streams the batch K
rows at a time through one plan per chunk size (a progress bar on a terminal's stderr).

``--input DIR_OR_GLOB --output DIR [--workers N] [--ray ADDRESS|local]`` runs many files, here, in
worker processes or on Ray, each output under its input's name (_many.py)."""
from __future__ import annotations

import numpy as np

from .._progress import bar
from ..model import load
from ._args import add_batch, add_model, add_planning, planning_options, positive_int
from ._files import check_output_npz, read_feeds, write_npz
from ._many import is_many, run_many
from .timing import random_inputs

NAME = "run"
HELP = "run a model on arrays from an .npy/.npz file and print (and optionally save) the outputs"
SHOWN = 8  # how many rows or values the summary shows before eliding the rest


def add_arguments(parser) -> None:
    add_model(parser)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--input", metavar="FILE",
                        help=".npy (a single-input model) or .npz keyed by input name (or arr_0, arr_1, ...); "
                             "a folder or a quoted glob runs every .npy/.npz/.parquet file there (--output DIR)")
    source.add_argument("--random", action="store_true",
                        help="feed seeded standard-normal inputs (symbolic dims take --batch, default 1)")
    parser.add_argument("--output", metavar="FILE.npz",
                        help="save the outputs here, keyed by output name (many inputs: a folder, one "
                             "<input stem>.npz each)")
    add_batch(parser)
    parser.add_argument("--chunk", type=positive_int, metavar="K",
                        help="run the batch K rows at a time (bounded memory; outputs concatenated)")
    parser.add_argument("--device", default="cpu", help='"cpu", "cuda" or "cuda:N"')
    add_planning(parser)
    parser.add_argument("--workers", type=positive_int, metavar="N",
                        help="many inputs: N worker processes (default 1: this one), or with --ray at most N "
                             "tasks at once (default: the cluster's CPUs, GPUs with --device cuda)")
    parser.add_argument("--ray", metavar="ADDRESS",
                        help='many inputs: run them as Ray tasks on the cluster at ADDRESS ("auto": the one '
                             'this machine joined), or "local": a Ray instance started here (pip install '
                             '"dnnx[ray]")')


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
    if args.input is not None and is_many(args.input):
        return run_many(args, {"batch_size": args.batch, **planning_options(args)})
    if args.workers is not None or args.ray is not None:
        raise ValueError("--workers and --ray run many files: give --input a folder or a glob")
    if args.output:
        check_output_npz(args.output)  # before the model is loaded and run, not after
    model = load(args.model, batch_size=args.batch, **planning_options(args))
    if args.random:
        feeds, _ = random_inputs(model.inputs, 1 if args.batch is None else args.batch)
    else:
        feeds = read_feeds(args.input, model.inputs)
    try:
        outputs = model.run_dict(feeds) if args.chunk is None else _run_chunked(model, feeds, args.chunk)
    except ValueError as e:
        if args.random:
            raise
        raise _naming_file(e, args.input) from e
    for name, array in outputs.items():
        print("\n".join(summarize(name, array)))
    if args.output:
        write_npz(args.output, outputs)
        print(f"wrote {args.output}")
    return 0


def _naming_file(error: ValueError, path) -> ValueError:
    """The run's error (a shape the model refuses, ...) of the same class, prefixed with the file
    the arrays came from, as read_feeds names it for a dtype."""
    try:
        return type(error)(f"{path}: {error}")
    except TypeError:  # a class that does not take one message
        return ValueError(f"{path}: {error}")


def _run_chunked(model, feeds: dict, chunk: int) -> dict:
    """model.run_dict(feeds, chunk_size=chunk), with a progress bar over the rows."""
    rows = _batch_rows(model, feeds)
    with bar(total=rows, desc="run", unit="row") as progress:
        outputs = model._outputs((feeds,), {}, "numpy", chunk, progress=progress.update)
    return {spec.name: out for spec, out in zip(model.outputs, outputs)}


def _batch_rows(model, feeds: dict) -> int:
    for spec in model.inputs:
        array = feeds[spec.name]
        if spec.shape and isinstance(spec.shape[0], str) and spec.name not in model.value_inputs and array.ndim:
            return int(array.shape[0])
    return 0  # the run names what is wrong
