"""The CPU thread count: the size of the CPU backend's thread pool, which splits a conv's batch,
a pooling layer's planes and a large GEMM across its threads (OpenBLAS itself runs single-threaded
under it). It is process-wide: every loaded model shares the pool. The default is the cores this
process may run on (``os.sched_getaffinity``).

    import dnnx.threads
    dnnx.threads.set_num_threads(4)

Kernels are split for the thread count at load time: set it before ``dnnx.load``.
"""
from __future__ import annotations

from ._native import core


def set_num_threads(n: int) -> None:
    """Runs the CPU backend on ``n`` threads (the calling thread included)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"number of threads must be a positive int, got {n!r}")
    core.set_num_threads(n)


def get_num_threads() -> int:
    """The number of threads the CPU backend runs on now."""
    return int(core.get_num_threads())


def blas_core_name() -> str:
    """The OpenBLAS kernels its run-time CPU dispatch picked here ("Haswell", "SkylakeX", ...)."""
    return str(core.blas_core_name())
