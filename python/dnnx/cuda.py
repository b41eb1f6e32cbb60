"""Whether the CUDA backend can run here, and why not.

    import dnnx
    dnnx.cuda_available()   # True where libdnnx_cuda.so, cuDNN, cuBLAS, a driver and a GPU are
    dnnx.cuda_status()      # "available: 1 device(s), cuda:0 NVIDIA H200 (sm_90); cuDNN ..."
                            # or "unavailable: <the reason>"

The CUDA backend is its own shared library, ``libdnnx_cuda.so`` beside the compiled core. It is
built where nvcc, cuDNN and cuBLAS are found at install time, and loaded only when a model asks
for ``device="cuda"``, so that everything else works on a machine without a GPU. cuDNN and
cuBLAS come from the ``nvidia-cudnn-cu13`` and ``nvidia-cublas`` wheels (``pip install
dnnx[cuda]``) or from the system; the wheels' libraries are preloaded here before the backend
library is opened, for builds whose relative RPATH does not reach them (a developer build).
"""
from __future__ import annotations

import ctypes
import importlib
import os

from ._native import core

LIBRARY_NAME = "libdnnx_cuda.so"

# (wheel module, libraries in load order): each library's dependencies come before it.
_WHEEL_LIBRARIES = (
    ("nvidia.cu13", ("libcublasLt.so.13", "libcublas.so.13")),
    ("nvidia.cublas", ("libcublasLt.so.12", "libcublas.so.12")),
    ("nvidia.cudnn", ("libcudnn.so.9",)),
)


def library_path() -> str:
    """Where the CUDA backend library is (or would be): next to the compiled core."""
    dev_dir = os.environ.get("DNNX_DEV_BUILD")
    folder = dev_dir if dev_dir else os.path.dirname(os.path.abspath(__file__))
    return os.path.join(folder, LIBRARY_NAME)


def wheel_library_paths() -> list:
    """The nvidia wheels' cuBLAS and cuDNN libraries that exist here, in load order."""
    paths = []
    for module_name, names in _WHEEL_LIBRARIES:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        for folder in getattr(module, "__path__", []):
            paths += [p for p in (os.path.join(folder, "lib", name) for name in names) if os.path.exists(p)]
    return paths


def _preload_wheel_libraries() -> None:
    for path in wheel_library_paths():
        try:
            ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        except OSError:
            pass  # the probe below reports what does not load, with the loader's words


def not_built_message(path: str) -> str:
    return (f"not built: {path} does not exist (dnnx was built without nvcc, cuDNN or cuBLAS; "
            "install them, e.g. pip install nvidia-cudnn-cu13 nvidia-cublas, then reinstall "
            "dnnx, or set DNNX_CUDA=ON to make the build fail where it cannot build the backend)")


def explain(message: str) -> str:
    if "cannot open shared object file" in message and ("libcudnn" in message or "libcublas" in message):
        return (f"{message} (cuDNN and cuBLAS must be loadable: pip install 'dnnx[cuda]', "
                "or install them on the system)")
    return message


def _probe() -> tuple:
    path = library_path()
    if not os.path.exists(path):
        return False, not_built_message(path)
    _preload_wheel_libraries()
    available, message = core.probe_device_library(path)
    return bool(available), message if available else explain(message)


def cuda_available() -> bool:
    """True when a model loaded with ``device="cuda"`` can run here."""
    return _probe()[0]


def cuda_status() -> str:
    """One line: what CUDA device dnnx sees, or why it cannot use one."""
    available, message = _probe()
    return ("available: " if available else "unavailable: ") + message
