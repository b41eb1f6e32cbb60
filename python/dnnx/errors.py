"""The exceptions dnnx raises. They are defined by the C++ core so that both sides raise the same
classes:

- ``DnnxError``: the base of every dnnx-specific error.
- ``UnsupportedModelError`` (also a ``ValueError``): an op, attribute, dtype or opset that dnnx does
  not support, raised at load and naming the node.
- ``InvalidModelError`` (also a ``ValueError``): a malformed or inconsistent model file.
- ``DeviceError``: no such device, out of memory, a backend library failure.
- ``WorkerLoadError``: a model that could not be loaded in a worker process (dnnx.ray's actors,
  ``dnnx run --workers/--ray``), naming the worker and the reason.

Wrong inputs to ``Model.run`` raise plain ``ValueError`` naming the input.

``PlanCacheWarning`` (a ``UserWarning``) says that the CUDA planner dropped a stale entry of the
persistent plan cache, or could not read or write the cache file; planning goes on without it.
``HostFallbackWarning`` (a ``UserWarning``), once per CUDA model at load, names the nodes that run
on the host inside its plans because CUDA has no kernel for them.
"""
from ._native import core

DnnxError = core.DnnxError
UnsupportedModelError = core.UnsupportedModelError
InvalidModelError = core.InvalidModelError
DeviceError = core.DeviceError


class WorkerLoadError(DnnxError):
    """A model could not be loaded in a worker (a Ray actor or task, a worker process): the
    message names the worker (host, pid, device) and the original error."""


class PlanCacheWarning(UserWarning):
    """A plan-cache entry was stale and dropped, or the cache file could not be read or written."""


class NonFiniteWarning(UserWarning):
    """A precision="fp16" run returned inf or NaN in an output: names the output(s) and, where one
    more run with every value visible finds it, the first layer whose output is not finite."""


class HostFallbackWarning(UserWarning):
    """Nodes of a CUDA model run on the host (CPU kernels inside the device plan): CUDA has no
    kernel for them. They are correct, and slower than a device kernel would be."""


__all__ = ["DnnxError", "UnsupportedModelError", "InvalidModelError", "DeviceError", "WorkerLoadError", "PlanCacheWarning",
           "HostFallbackWarning"]
