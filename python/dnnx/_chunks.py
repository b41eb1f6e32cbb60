"""Chunked runs (``Model.run(x, chunk_size=k)``, ``dnnx run --chunk k``): a large batch streamed
through the model k rows at a time, so that activations are bounded by one chunk's plan.

The batch inputs are those whose declared leading dim is symbolic (and whose value decides no
shape): they are sliced along dim 0 (views, no copies); the other inputs go whole to every
chunk. Each output must be batch-major (its leading dim is the chunk's row count); the outputs
are written into arrays of the full batch allocated at the first chunk, so that memory holds
the inputs, the outputs and one chunk's activations, never a list of chunk outputs next to
their concatenation. A smaller last chunk runs its own plan (one more plan, kept like any other).
"""
from __future__ import annotations

import numpy as np


def _chunk_size(value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"chunk_size must be a positive int, got {value!r}")
    return int(value)


def batch_rows(specs, value_inputs, arrays) -> tuple:
    """(indices of the batch inputs, their common row count)."""
    batch = [i for i, spec in enumerate(specs)
             if spec.shape and isinstance(spec.shape[0], str) and spec.name not in value_inputs]
    if not batch:
        leading = ", ".join(f"{s.name} {list(s.shape)}" for s in specs)
        raise ValueError(f"chunk_size: no input has a symbolic leading (batch) dim ({leading}); a model "
                         f"loaded with batch_size= has a fixed batch: load it without batch_size to chunk")
    first = None
    for i in batch:
        array = arrays[i]
        if not isinstance(array, np.ndarray):
            raise ValueError(f"chunk_size: input '{specs[i].name}' must be a host (numpy) array, got "
                             f"{type(array).__name__}; chunked runs slice and gather on the host")
        if array.ndim == 0:
            raise ValueError(f"input '{specs[i].name}': expected {list(specs[i].shape)}, got a scalar")
        if first is None:
            first = (specs[i].name, array.shape[0])
        elif array.shape[0] != first[1]:
            raise ValueError(f"chunk_size: inputs '{first[0]}' and '{specs[i].name}' disagree on the batch: "
                             f"{first[1]} vs {array.shape[0]} rows")
    return batch, first[1]


def run_chunked(run, specs, output_specs, value_inputs, arrays, chunk_size, progress=None) -> list:
    """``run(list of input arrays) -> list of numpy outputs`` over chunks of ``chunk_size`` rows of
    the batch inputs; returns the full outputs. ``progress(rows)`` is called after each chunk."""
    chunk_size = _chunk_size(chunk_size)
    batch, rows = batch_rows(specs, value_inputs, arrays)
    if rows <= chunk_size:
        outputs = list(run(arrays))
        if progress is not None:
            progress(rows)
        return outputs
    results = None
    for start in range(0, rows, chunk_size):
        stop = min(start + chunk_size, rows)
        feed = [a[start:stop] if i in batch else a for i, a in enumerate(arrays)]
        outputs = run(feed)
        if results is None:
            results = [_full_output(spec, out, rows, stop - start) for spec, out in zip(output_specs, outputs)]
        for spec, out, full in zip(output_specs, outputs, results):
            if out.shape[:1] != (stop - start,) or out.shape[1:] != full.shape[1:]:
                raise ValueError(f"chunk_size: output '{spec.name}' is not batch-major: {list(out.shape)} for "
                                 f"a chunk of {stop - start} rows (rows {start}:{stop}), where "
                                 f"{[stop - start] + list(full.shape[1:])} was expected; run it unchunked")
            full[start:stop] = out
        if progress is not None:
            progress(stop - start)
    return results


def _full_output(spec, out, rows, chunk_rows) -> np.ndarray:
    if out.ndim == 0 or out.shape[0] != chunk_rows:
        raise ValueError(f"chunk_size: output '{spec.name}' is not batch-major: {list(out.shape)} for a chunk of "
                         f"{chunk_rows} rows; run it unchunked")
    return np.empty((rows,) + out.shape[1:], dtype=out.dtype)


__all__ = ["run_chunked", "batch_rows"]
