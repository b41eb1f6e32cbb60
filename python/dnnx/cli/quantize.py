"""``dnnx quantize MODEL --out OUT --calibration data.npy|data.npz [--method M] [--tolerance T]
[--per-tensor]``: dnnx.quantize from the shell. Writes the int8 QDQ file (atomically) and prints
the accuracy guard's table: each layer's measured error and precision (docs/precision.md)."""
from __future__ import annotations

import argparse
from pathlib import Path

from .._quant_ranges import METHODS
from .._quantize import DEFAULT_TOLERANCE, quantize
from ..model import load
from ._args import add_model
from ._files import read_feeds

NAME = "quantize"
HELP = ("quantize a float model to int8 (a QDQ ONNX file that onnxruntime runs too), calibrated by dnnx on "
        "your data; layers that int8 would make too inaccurate stay float")


def _tolerance(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number >= 0 (0.01 = 1%), got '{text}'") from None
    if not value >= 0.0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a finite number >= 0 (0.01 = 1%), got {text}")
    return value


def add_arguments(parser) -> None:
    add_model(parser)
    parser.add_argument("--out", required=True, metavar="OUT.onnx", help="the int8 QDQ model to write")
    parser.add_argument("--calibration", required=True, metavar="FILE",
                        help="typical inputs: .npy (a single-input model) or .npz keyed by input name (or arr_0, "
                             "arr_1, ...); a few hundred rows")
    parser.add_argument("--method", default="minmax", choices=METHODS,
                        help="how each activation's range is taken from the calibration data")
    parser.add_argument("--tolerance", type=_tolerance, default=DEFAULT_TOLERANCE, metavar="T",
                        help="the accuracy guard: a layer whose output's relative RMS error in int8 exceeds T "
                             "stays float")
    parser.add_argument("--per-tensor", action="store_true",
                        help="one weight scale per tensor instead of one per output channel")


def main(args) -> int:
    out = Path(args.out)
    if not out.parent.is_dir():
        raise ValueError(f"--out: folder not found: {out.parent}")
    specs = load(args.model).inputs
    feeds = read_feeds(args.calibration, specs)
    report = quantize(args.model, out, calibration=feeds, calibration_method=args.method,
                      per_channel=not args.per_tensor, int8_tolerance=args.tolerance)
    print(report)
    print(f"wrote {out}")
    return 0
