"""Rows through a model whatever its batch: what dnnx.ray's predictor (and the Serve example) run
on the batches Ray hands over, whose row count is Ray's choice (a dataset's last batch is smaller).

- a model whose batch inputs have a symbolic leading dim runs the rows at once, or ``chunk_size``
  rows at a time (``Model.run_dict(chunk_size=)``: views, no copies of the inputs);
- a model exported with a fixed batch N (mnist-8: 1, a LeNet traced at 10) runs them N at a time:
  slices of the inputs as they are, and a last partial slice padded with zero rows whose outputs
  are dropped. Its outputs must be batch-major (leading dim N), else a ValueError names them.
"""
from __future__ import annotations

from typing import Dict, Optional

import numpy as np


def fixed_batch(model) -> Optional[int]:
    """N when every data input has the fixed leading dim N (no symbolic one), else None."""
    leading = {spec.shape[0] for spec in model.inputs if spec.shape and spec.name not in model.value_inputs}
    if len(leading) == 1:
        (n,) = leading
        if isinstance(n, int) and n >= 1:
            return n
    return None


def row_count(model, feeds: Dict[str, np.ndarray]) -> int:
    """The leading dim of the batch inputs (0 when there are none)."""
    for spec in model.inputs:
        value = feeds.get(spec.name)
        if spec.shape and spec.name not in model.value_inputs and getattr(value, "ndim", 0):
            return int(value.shape[0])
    return 0


def run_rows(model, feeds: Dict[str, np.ndarray], chunk_size: Optional[int] = None) -> Dict[str, np.ndarray]:
    """{output name: array with one row per input row} for ``feeds`` {input name: array}."""
    n = fixed_batch(model)
    rows = row_count(model, feeds)
    if n is None or rows == n:
        return model.run_dict(feeds, chunk_size=chunk_size)
    batch = [s.name for s in model.inputs if s.name not in model.value_inputs]
    outputs = None
    for start in range(0, rows, n):
        stop = min(start + n, rows)
        part = dict(feeds)
        for name in batch:
            part[name] = _padded(feeds[name][start:stop], n)
        got = model.run_dict(part)
        if outputs is None:
            outputs = _allocate(got, n, rows)
        for name, array in got.items():
            outputs[name][start:stop] = array[:stop - start]
    return outputs


def _padded(rows: np.ndarray, n: int) -> np.ndarray:
    if rows.shape[0] == n:
        return rows  # a view of the batch: no copy
    out = np.zeros((n,) + rows.shape[1:], dtype=rows.dtype)
    out[:rows.shape[0]] = rows
    return out


def _allocate(first: Dict[str, np.ndarray], n: int, rows: int) -> Dict[str, np.ndarray]:
    wrong = [f"{name} {list(a.shape)}" for name, a in first.items() if a.ndim == 0 or a.shape[0] != n]
    if wrong:
        raise ValueError(f"a model with a fixed batch of {n} runs {rows} rows {n} at a time, which needs batch-major "
                         f"outputs (leading dim {n}); not: {', '.join(wrong)}")
    return {name: np.empty((rows,) + a.shape[1:], dtype=a.dtype) for name, a in first.items()}
