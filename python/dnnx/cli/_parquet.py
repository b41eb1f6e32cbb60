"""Inputs from a Parquet file for ``dnnx run --input``: one column of arrays per model input, one
row per sample. A column is a (nested) list column of regular sizes, a fixed-size list column,
or Ray Data's tensor column (an Arrow extension type with a ``shape``). Its values keep their
stored type (dnnx's input rule: a double column for a float32 input is refused, naming the file,
the column and both dtypes). A flat column whose row size equals the input's fixed trailing dims
(784 values for [N, 1, 28, 28]) takes those dims. Needs pyarrow (Ray Data brings it)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .._tensors import dtype_named


def _pyarrow():
    try:
        import pyarrow
        import pyarrow.compute
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        raise ValueError("reading .parquet files needs pyarrow: pip install pyarrow") from None
    return pyarrow


def _columns(names: list, available: list, path: Path) -> dict:
    """{input name: column}: the columns named as the inputs, or a one-input model's only column."""
    if all(name in available for name in names):
        return {name: name for name in names}
    if len(names) == 1 and len(available) == 1:
        return {names[0]: available[0]}
    raise ValueError(f"{path}: columns {available} do not name the model's inputs {names} (a one-input model "
                     f"also takes a file's only column)")


def _regular(pa, array, path: Path, column: str) -> np.ndarray:
    """A list column (or Ray's tensor extension column) as one [rows, ...] array, without copying
    the values where Arrow allows."""
    rows = len(array)
    shape = ()
    if isinstance(array.type, pa.ExtensionType):
        shape = tuple(getattr(array.type, "shape", ()) or ())
        array = array.storage
    dims = []
    while pa.types.is_list(array.type) or pa.types.is_large_list(array.type) or \
            pa.types.is_fixed_size_list(array.type):
        lengths = pa.compute.list_value_length(array).to_numpy(zero_copy_only=False)
        if lengths.size and (lengths != lengths[0]).any():
            raise ValueError(f"{path}: column '{column}' holds arrays of different sizes "
                             f"({int(lengths.min())} to {int(lengths.max())} values per level)")
        dims.append(int(lengths[0]) if lengths.size else 0)
        array = array.flatten()
    if array.null_count:
        raise ValueError(f"{path}: column '{column}' has missing values")
    values = array.to_numpy(zero_copy_only=False)
    if shape:
        return values.reshape((rows,) + shape)
    return values.reshape([rows] + dims)  # each level's (equal) lengths are one dim


def _fit(array: np.ndarray, spec) -> np.ndarray:
    """A flat [rows, k] column for an input with fixed trailing dims of k values: those dims."""
    trailing = spec.shape[1:]
    if array.ndim != len(spec.shape) and trailing and all(isinstance(d, int) for d in trailing) and \
            int(np.prod(trailing)) == int(np.prod(array.shape[1:])):
        return array.reshape((array.shape[0],) + tuple(trailing))
    return array


def read_parquet_feeds(path, specs) -> dict:
    """{input name: array} from a Parquet file (see the module's doc)."""
    pa = _pyarrow()
    path = Path(path)
    try:
        table = pa.parquet.read_table(path)
    except (OSError, pa.ArrowException) as e:
        raise ValueError(f"{path} is not a readable Parquet file ({e})") from None
    names = [s.name for s in specs]
    columns = _columns(names, table.column_names, path)
    feeds = {}
    for spec in specs:
        column = columns[spec.name]
        array = _fit(_regular(pa, table.column(column).combine_chunks(), path, column), spec)
        want = dtype_named(spec.dtype)
        if array.dtype != want:
            raise ValueError(f"{path}: column '{column}' for input '{spec.name}': expected dtype {want}, got "
                             f"{array.dtype} (dnnx converts no arrays: store it as {want})")
        feeds[spec.name] = array
    return feeds
