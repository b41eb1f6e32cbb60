"""Loads the compiled core. OpenBLAS (the scipy-openblas32 wheel) is preloaded first so that the
extension finds it even where its relative RPATH does not apply (a developer build)."""
from __future__ import annotations

import ctypes
import glob
import importlib.util
import os
import sys


def _preload_openblas() -> None:
    import scipy_openblas32

    path = os.path.join(scipy_openblas32.get_lib_dir(), "libscipy_openblas.so")
    if os.path.exists(path):
        ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)


def _load_core():
    _preload_openblas()
    dev_dir = os.environ.get("DNNX_DEV_BUILD")
    if dev_dir:
        # scripts/dev-build.sh DIR builds _core*.so there; DNNX_DEV_BUILD=DIR uses it.
        found = sorted(glob.glob(os.path.join(dev_dir, "_core*.so")))
        if not found:
            raise ImportError(f"DNNX_DEV_BUILD={dev_dir}: no _core*.so there (run scripts/dev-build.sh)")
        spec = importlib.util.spec_from_file_location("dnnx._core", found[0])
        module = importlib.util.module_from_spec(spec)
        sys.modules["dnnx._core"] = module
        spec.loader.exec_module(module)
        return module
    from . import _core

    return _core


core = _load_core()
