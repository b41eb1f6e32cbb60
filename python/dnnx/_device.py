"""The device a model runs on, from ``dnnx.load``'s arguments. Every option is parsed and checked
once, in C++ (``core.device_options``: engine/runtime/device_options.cc holds the allowed names and
the defaults); this module adds only what needs Python: whether the CUDA library can run here."""
from __future__ import annotations

from . import cuda
from ._native import core
from .errors import DeviceError


def backend_options(device="cpu", precision="fp32", workspace_limit=None, algo_search="auto",
                    deterministic=False, plan_cache=True, memory_limit=None) -> tuple:
    """(kind, options) for ``_core.Engine``: kind "cpu" or "cuda", options {"device_options":
    core.DeviceOptions, "library": path} (no library on the CPU). ValueError for a bad option,
    DeviceError for an unknown device or when CUDA is asked for but unavailable."""
    kind, options = core.device_options(device, precision, workspace_limit, algo_search, bool(deterministic),
                                        plan_cache, memory_limit)
    if kind == "cpu":
        return kind, {}
    available, message = cuda._probe()
    if not available:
        raise DeviceError(f"device {device!r} is not available: {message}")
    return kind, {"library": cuda.library_path(), "device_options": options}
