"""The callable class that ``Dataset.map_batches`` runs in each actor: one model per actor, loaded
once in ``__init__``, then every numpy batch Ray hands over run through it (dnnx/_rows.py).

Ray Data gives tensor columns as read-only, C-contiguous numpy arrays over its Arrow buffers; they
go to the engine as they are (the engine reads, never writes, its inputs): no copy per batch.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Union

from .. import _pickle
from .._rows import run_rows

Columns = Union[None, str, Sequence[str], Dict[str, str]]


def _resolve(model):
    """An ObjectRef (a model put into the object store once, shared by the actors) read here."""
    try:
        import ray
    except ImportError:  # the class also runs without Ray (tests, a plain loop)
        return model
    return ray.get(model) if isinstance(model, ray.ObjectRef) else model


def _named(columns: Columns, names: List[str], what: str) -> Optional[Dict[str, str]]:
    """{model name: column} from a str (one-name models), a list in model order or a dict."""
    if columns is None:
        return None
    if isinstance(columns, str):
        columns = [columns]
    if isinstance(columns, dict):
        unknown = sorted(set(columns) - set(names))
        if unknown:
            raise ValueError(f"{what}_columns: {unknown} are not the model's {what}s {names}")
        return dict(columns)
    columns = list(columns)
    if len(columns) != len(names):
        raise ValueError(f"{what}_columns: expected {len(names)} column name(s), one per model {what} {names}, "
                         f"got {columns}")
    return dict(zip(names, columns))


class Predictor:
    """A dnnx model inside a Ray actor, for ``Dataset.map_batches``::

        ds.map_batches(dnnx.ray.Predictor, fn_constructor_kwargs={"model": "lenet.onnx"},
                       batch_format="numpy", batch_size=256,
                       compute=ray.data.ActorPoolStrategy(size=2), num_cpus=1)   # num_gpus=1 on GPUs

    ``model``: a path (read where the actor runs: ``dnnx.ray.predict`` reads it on the driver
    instead), ONNX bytes, an onnx.ModelProto, a ``dnnx.Model`` (its bytes, tuned weights and
    options) or an ObjectRef to any of these. ``input_columns``: the batch's column for each
    model input (a str, a list in input order or {input: column}); by default the columns named
    as the inputs, or, for a one-input model, the batch's only column. ``output_columns``: the
    same for the outputs (default: the output names). Columns the model does not read pass
    through (labels, ids). ``device``: "cpu", or "cuda" (the actor's GPU: with ``num_gpus=1``
    Ray shows each actor its own). ``chunk_size``: rows per run inside a batch (bounded memory);
    a model with a fixed batch N runs N rows at a time (dnnx/_rows.py). ``threads``: the CPU
    backend's threads in this actor (dnnx.threads; default: all the actor's cores). Other
    keywords go to ``dnnx.load`` (batch_size, dims, algo_search, plan_cache, ...).

    A model that cannot load raises ``dnnx.WorkerLoadError`` naming the worker and the reason;
    Ray reports it as the actor's death, once, to the caller.
    """

    def __init__(self, model, input_columns: Columns = None, output_columns: Columns = None, device: str = "cpu",
                 precision: str = "fp32", chunk_size: Optional[int] = None, threads: Optional[int] = None,
                 **load_options: Any):
        if threads is not None:
            from .. import threads as _threads  # before the load: kernels are split for it there
            _threads.set_num_threads(int(threads))
        state = _pickle.as_state(_resolve(model))
        self.model = _pickle.load_in_worker(state, device=device, precision=precision, **load_options)
        self.chunk_size = chunk_size
        self._inputs = _named(input_columns, [s.name for s in self.model.inputs], "input")
        outputs = [s.name for s in self.model.outputs]
        self._outputs = _named(output_columns, outputs, "output") or {name: name for name in outputs}

    def _input_columns(self, batch: Dict[str, Any]) -> Dict[str, str]:
        if self._inputs is None:
            names = [s.name for s in self.model.inputs]
            if all(name in batch for name in names):
                self._inputs = {name: name for name in names}
            elif len(names) == 1 and len(batch) == 1:
                self._inputs = {names[0]: next(iter(batch))}
            else:
                raise ValueError(f"dnnx.ray.Predictor: which columns feed the model's inputs {names}? the batch has "
                                 f"{sorted(batch)}: pass input_columns=")
        missing = sorted(col for col in self._inputs.values() if col not in batch)
        if missing:
            raise ValueError(f"dnnx.ray.Predictor: column(s) {missing} not in the batch (it has {sorted(batch)})")
        return self._inputs

    def __call__(self, batch: Dict[str, Any]) -> Dict[str, Any]:
        """{column: array} in (batch_format="numpy"), the pass-through columns and the outputs out."""
        inputs = self._input_columns(batch)
        outputs = run_rows(self.model, {name: batch[col] for name, col in inputs.items()}, self.chunk_size)
        used = set(inputs.values())
        result = {col: value for col, value in batch.items() if col not in used}
        result.update({self._outputs[name]: array for name, array in outputs.items()})
        return result
