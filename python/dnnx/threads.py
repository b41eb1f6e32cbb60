"""The CPU thread count. Every GEMM (and so every Conv, Gemm, MatMul and LSTM) runs in OpenBLAS,
so its thread count is the engine's; it is process-wide, as OpenBLAS keeps one pool per process.

    import dnnx.threads
    dnnx.threads.set_num_threads(4)
"""
from __future__ import annotations

import ctypes
import os


def _openblas() -> ctypes.CDLL:
    # The same file _native.py preloads; dlopen returns the already-loaded handle, so the setting
    # reaches the library the engine calls.
    import scipy_openblas32

    return ctypes.CDLL(os.path.join(scipy_openblas32.get_lib_dir(), "libscipy_openblas.so"))


def set_num_threads(n: int) -> None:
    """Runs OpenBLAS (and so the engine) on ``n`` threads."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"number of threads must be a positive int, got {n!r}")
    _openblas().scipy_openblas_set_num_threads(ctypes.c_int(n))


def get_num_threads() -> int:
    """The number of threads OpenBLAS runs on now."""
    lib = _openblas()
    lib.scipy_openblas_get_num_threads.restype = ctypes.c_int
    return int(lib.scipy_openblas_get_num_threads())
