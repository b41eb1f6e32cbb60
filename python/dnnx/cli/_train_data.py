"""The data ``dnnx finetune`` trains on: an .npz of inputs and labels, or ``digits`` (the handwritten
digits scikit-learn bundles, shipped with dnnx: dnnx/_digits.py; resized to the model's input,
split into train and validation)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .._digits import load_digits
from ..finetune import LABEL_LOSSES
from ._files import _load_array_file

DIGITS = "digits"


def _read_xy(path, x_key: str, y_key: str, loss: str, what: str) -> tuple:
    path = Path(path)
    if path.suffix != ".npz":
        raise ValueError(f"{what} {path}: expected an .npz file with arrays '{x_key}' and '{y_key}'")
    with _load_array_file(path) as npz:
        missing = [k for k in (x_key, y_key) if k not in npz.files]
        if missing:
            raise ValueError(f"{what} {path}: no array {missing[0]!r} (it has {sorted(npz.files)}; "
                             f"choose others with --x-key/--y-key)")
        x, y = npz[x_key], npz[y_key]
    if len(x) != len(y):
        raise ValueError(f"{what} {path}: '{x_key}' has {len(x)} rows but '{y_key}' has {len(y)}")
    if len(x) == 0:
        raise ValueError(f"{what} {path}: no rows")
    if x.dtype.kind not in "fiu":
        raise ValueError(f"{what} {path}: '{x_key}' must be numeric, got {x.dtype}")
    if loss in LABEL_LOSSES and y.dtype.kind not in "iu":
        raise ValueError(f"{what} {path}: '{y_key}' must hold integer class labels for {loss}, got {y.dtype}")
    y = y.astype(np.int64 if loss in LABEL_LOSSES else np.float32)
    return np.ascontiguousarray(x, dtype=np.float32), y


def load_training_data(args, input_shape, loss: str) -> tuple:
    """(x_train, y_train, x_val, y_val); the validation pair is None without --val (and for
    digits it is the bundled split's, unless --val names a file)."""
    if args.data == DIGITS:
        if loss not in LABEL_LOSSES:
            raise ValueError("--data digits has class labels: use --loss cross_entropy")
        x_train, y_train, x_val, y_val = load_digits(input_shape, seed=args.seed)
    else:
        x_train, y_train = _read_xy(args.data, args.x_key, args.y_key, loss, "--data")
        x_val = y_val = None
    if args.val:
        x_val, y_val = _read_xy(args.val, args.x_key, args.y_key, loss, "--val")
    return x_train, y_train, x_val, y_val
