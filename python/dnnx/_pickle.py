"""Models that travel (pickle, Ray's object store, multiprocessing): a ``dnnx.Model`` pickles as
its ONNX bytes (the graph as read, with any fine-tuned weights: what ``Model.save`` writes) and the
options it was loaded with, never as engine state. Unpickling loads it again where it lands: a
new engine, planned there for that machine's device, and on CUDA with ``algo_search="exhaustive"``
answered from that machine's plan cache (so the second process on a node times nothing).

``batch_size`` and ``dims`` are already applied to the bytes (``Model.proto``), so they are not
applied again. ``state(model)`` and ``load_state(state, **overrides)`` are the same two halves for
callers that load somewhere else with another device or precision (dnnx.ray's predictor).
"""
from __future__ import annotations

from typing import Any, Dict

# dnnx.load's keywords a state carries (batch_size and dims live in the bytes)
OPTIONS = ("device", "precision", "workspace_limit", "algo_search", "deterministic", "passes", "optimize",
           "plan_cache", "cuda_graph", "max_plans", "memory_limit", "measure_precision",
           "search_budget", "measure_layout")
SHAPE_OPTIONS = ("batch_size", "dims")  # not in state()'s options, but callers of as_state may add them
FORMAT = "dnnx model state 1"


def state(model) -> Dict[str, Any]:
    """{"format", "onnx": the model's ONNX bytes with its tuned weights, "options": its load
    options}: plain Python values, picklable anywhere."""
    from . import finetune

    model._current_engine()  # a tuner's last weights first
    weights = {name: model._ir["constants"][name] for name in model._tuned}
    proto = finetune.tuned_proto(model.proto, weights) if weights else model.proto
    return {"format": FORMAT, "onnx": proto.SerializeToString(), "options": dict(model._load_options)}


def as_state(src, **options) -> Dict[str, Any]:
    """A state from what a caller names a model by: a path (read here, once, so that workers need
    no copy of the file), ONNX bytes, an onnx.ModelProto, a loaded Model (its bytes, tuned weights
    and options; ``options`` override them) or a state. ``options`` are dnnx.load's keywords,
    batch_size and dims included (applied where the state is loaded)."""
    import os
    from pathlib import Path

    from .model import Model

    if isinstance(src, dict):
        base = src
    elif isinstance(src, Model):
        base = state(src)
    elif isinstance(src, (bytes, bytearray, memoryview)):
        base = {"format": FORMAT, "onnx": bytes(src), "options": {}}
    elif isinstance(src, (str, os.PathLike)):
        path = Path(src)
        if not path.is_file():
            raise FileNotFoundError(f"model file not found: {path}")
        base = {"format": FORMAT, "onnx": path.read_bytes(), "options": {}}
    elif hasattr(src, "SerializeToString"):
        base = {"format": FORMAT, "onnx": src.SerializeToString(), "options": {}}
    else:
        raise ValueError(f"expected a model as a path, ONNX bytes, an onnx.ModelProto, a dnnx.Model or a model "
                         f"state; got {type(src).__name__}")
    _check(base, options)
    return {"format": FORMAT, "onnx": base["onnx"], "options": {**base["options"], **options}}


def _check(model_state, options) -> None:
    if not isinstance(model_state, dict) or model_state.get("format") != FORMAT:
        raise ValueError(f"not a dnnx model state (expected a dict with format {FORMAT!r})")
    unknown = sorted(set(options) - set(OPTIONS) - set(SHAPE_OPTIONS))
    if unknown:
        raise ValueError(f"unknown load option(s) {unknown}; expected some of {list(SHAPE_OPTIONS + OPTIONS)}")


def load_state(model_state: Dict[str, Any], **overrides):
    """A Model from ``state()``'s (or ``as_state()``'s) dict, loaded here; ``overrides`` replace
    load options (e.g. device="cuda:0" for a model pickled on a CPU-only driver)."""
    from .model import load

    _check(model_state, overrides)
    return load(model_state["onnx"], **{**model_state["options"], **overrides})


def load_in_worker(model_state: Dict[str, Any], **overrides):
    """load_state in a worker process: any failure becomes one WorkerLoadError naming the worker
    (host, pid, device) and the reason, which Ray or a process pool hands back to the caller."""
    import os
    import socket

    from .errors import WorkerLoadError

    try:
        return load_state(model_state, **overrides)
    except Exception as e:
        options = {**model_state.get("options", {}), **overrides} if isinstance(model_state, dict) else overrides
        where = f"{socket.gethostname()} pid {os.getpid()}, device {options.get('device', 'cpu')!r}"
        raise WorkerLoadError(f"the model could not be loaded on worker {where}: {type(e).__name__}: {e}") from e


def _unpickle(model_state):
    return load_state(model_state)
