"""What every CUDA test compares: the CUDA backend against both oracles, the CPU backend and
onnxruntime, on the same seeded random inputs.

Tolerance (fp32, no TF32 anywhere): elementwise |cuda - ref| <= RTOL * |ref| + ATOL * max|ref|
and the relative L2 error ||cuda - ref|| / ||ref|| <= L2. cuDNN's FFT and Winograd algorithms
round differently from a direct sum, hence the max|ref| scale of ATOL; TF32 (10-bit mantissa)
would show relative L2 errors near 1e-4 to 1e-3, far above L2, so these bounds also prove that
no TF32 math ran.
"""
from __future__ import annotations

import numpy as np

import dnnx
from ort_check import run_ort

RTOL = 1e-4
ATOL = 1e-5
L2 = 2e-5


def assert_close(got: np.ndarray, want: np.ndarray, what: str) -> None:
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    if got.dtype.kind != "f":
        np.testing.assert_array_equal(got, want, err_msg=what)
        return
    assert np.isfinite(got).all() == np.isfinite(want).all(), f"{what}: non-finite values differ"
    finite = np.isfinite(want)
    g, w = got[finite].astype(np.float64), want[finite].astype(np.float64)
    np.testing.assert_array_equal(got[~finite], want[~finite], err_msg=f"{what}: non-finite values")
    if w.size == 0:
        return
    scale = float(np.abs(w).max())
    np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL * max(scale, 1e-30), err_msg=what)
    norm = float(np.linalg.norm(w))
    if norm > 0:
        rel = float(np.linalg.norm(g - w)) / norm
        assert rel <= L2, f"{what}: relative L2 error {rel:.3g} > {L2}"


def check_cuda(model, feeds: dict, ort: bool = True, **load_kwargs) -> dict:
    """Runs `model` on CUDA and compares every output with the CPU backend and onnxruntime."""
    gpu = dnnx.load(model, device="cuda", **load_kwargs).run_dict(feeds)
    cpu = dnnx.load(model).run_dict(feeds)
    assert set(gpu) == set(cpu)
    for name in cpu:
        assert_close(gpu[name], cpu[name], f"{name} (cuda vs cpu)")
    if ort:
        for name, want in run_ort(model, feeds).items():
            assert_close(gpu[name], want, f"{name} (cuda vs onnxruntime)")
    return gpu
