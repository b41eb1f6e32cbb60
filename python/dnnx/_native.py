"""Loads the compiled core (and, for the tests, the test-only _pass_hooks module). OpenBLAS (the
scipy-openblas32 wheel) is preloaded first so that the extension finds it even where its relative
RPATH does not apply (a developer build)."""
from __future__ import annotations

import ctypes
import glob
import importlib.util
import os
import sys
from typing import TYPE_CHECKING


def _preload_openblas() -> None:
    # The wheel's lib folder (scipy_openblas32.get_lib_dir()'s answer), found without importing the
    # package: its __init__ reads its version through importlib.metadata, 40-70 ms of every import
    # of dnnx (measured with python -X importtime).
    spec = importlib.util.find_spec("scipy_openblas32")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = os.path.join(folder, "lib", "libscipy_openblas.so")
        if os.path.exists(path):
            ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
            return


def load_extension(name: str):
    """The compiled module dnnx.<name>: DNNX_DEV_BUILD's <name>*.so where that is set, else the
    installed one. `core` below is _core; the tests load the test-only _pass_hooks this way."""
    qualified = f"dnnx.{name}"
    if qualified in sys.modules:
        return sys.modules[qualified]
    dev_dir = os.environ.get("DNNX_DEV_BUILD")
    if dev_dir:
        # scripts/dev-build.sh DIR builds _core*.so and _pass_hooks*.so there; DNNX_DEV_BUILD=DIR
        # uses them.
        found = sorted(glob.glob(os.path.join(dev_dir, f"{name}*.so")))
        if not found:
            raise ImportError(f"DNNX_DEV_BUILD={dev_dir}: no {name}*.so there (run scripts/dev-build.sh)")
        spec = importlib.util.spec_from_file_location(qualified, found[0])
        module = importlib.util.module_from_spec(spec)
        sys.modules[qualified] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[qualified]
            raise
        return module
    return importlib.import_module(qualified)


def _load_core():
    _preload_openblas()
    return load_extension("_core")


if TYPE_CHECKING:  # type checkers read the stub, _core.pyi
    from . import _core as core
else:
    core = _load_core()
