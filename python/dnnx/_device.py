"""The device a model runs on, from ``dnnx.load``'s arguments. Every option is parsed and checked
once, in C++ (``core.device_options``: engine/runtime/device_options.cc holds the allowed names and
the defaults); this module adds only what needs Python: whether the CUDA library can run here."""
from __future__ import annotations

import os
from typing import Any, Optional

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


class StartedDevice:
    """What ``start_device`` gives: the backend kind, the Engine's options, and on CUDA the
    ``core.DeviceStart`` opening the backend meanwhile (Note [overlapped device start] in
    engine/runtime/device_start.h). ``checked()`` raises the DeviceError ``backend_options``
    would have raised, once the start is done."""

    def __init__(self, device: Any, kind: str, options: dict, start: Optional[Any]):
        self.device, self.kind, self.options, self.start = device, kind, options, start

    def checked(self) -> Optional[Any]:
        """The DeviceStart for ``core.Engine(started=...)`` (None on the CPU); DeviceError where
        the device is not available."""
        if self.start is None:
            return None
        available, message = self.start.probe()
        if not available:
            raise DeviceError(f"device {self.device!r} is not available: {cuda.explain(message)}")
        return self.start


def start_device(device="cpu", precision="fp32", workspace_limit=None, algo_search="auto",
                 deterministic=False, plan_cache=True, memory_limit=None) -> StartedDevice:
    """``backend_options``, with the CUDA backend's opening begun on its own thread: the caller
    reads the model meanwhile and hands ``.checked()`` to ``core.Engine``. ValueError for a bad
    option at once; DeviceError at once where the CUDA library was not built, else from
    ``checked()``."""
    kind, options = core.device_options(device, precision, workspace_limit, algo_search, bool(deterministic),
                                        plan_cache, memory_limit)
    if kind == "cpu":
        return StartedDevice(device, kind, {}, None)
    path = cuda.library_path()
    if not os.path.exists(path):
        raise DeviceError(f"device {device!r} is not available: {cuda.not_built_message(path)}")
    start = core.DeviceStart(cuda.wheel_library_paths(), path, options)
    return StartedDevice(device, kind, {"library": path, "device_options": options}, start)
