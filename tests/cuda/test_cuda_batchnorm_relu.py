"""BatchNormalization on CUDA after Note [batchnorm by vectors] (engine/backends/cuda/elementwise/
batchnorm_kernels.cu: V = 4 elements a thread where the plane is a multiple of 4, else 1), and
the fuse_batchnorm_relu pass's BatchNormalization+Relu, one kernel with the Relu in it: against
onnxruntime and the CPU backend at fp32 (cuda_check.py's bounds: the same x * s + t per
element), and at tf32, fp16 and bf16 within each precision's one-layer bounds
(precision_check.py); NaN passes through the Relu as onnxruntime lets it."""
import os
import sys

import numpy as np
import pytest

import dnnx
from cuda_check import check_cuda
from ort_check import rand, run_ort
from precision_check import assert_layer_close

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from test_passes import bn_relu  # noqa: E402

# planes of 4k elements (the vector path), of 7x7 = 49 and 3 (one element a thread), [N, C] rows
# (a plane of 1), and a 5-D tensor
SHAPES = [[2, 8, 4, 4], [3, 5, 7, 7], [2, 6, 3], [4, 6], [1, 3, 2, 2, 3], [2, 64, 14, 14]]


@pytest.mark.parametrize("shape", SHAPES)
def test_batchnorm_relu_is_one_cuda_layer_at_fp32(shape):
    model = bn_relu(shape, shape[1])
    x = rand(*shape, seed=4) * np.float32(2.0)
    x.flat[5] = np.nan
    rows = dnnx.load(model, device="cuda").plan()
    assert [(r["op"], r["algorithm"]) for r in rows] == [("BatchNormalization+Relu", "scale+shift+relu kernel")], rows
    got = check_cuda(model, {"x": x})["y"]
    assert np.isnan(got.flat[5]) and (np.nan_to_num(got) >= 0).all()
    apart = dnnx.load(model, device="cuda", passes={"fuse_batchnorm_relu": False})
    assert [r["op"] for r in apart.plan()] == ["BatchNormalization", "Relu"]
    # the same x * s + t, then the same max; CUDA's unfused Relu (cuDNN's activation) maps NaN to 0,
    # as onnxruntime-gpu's does, where the fused kernel keeps the CPU's and onnxruntime's NaN
    unfused = apart.run(x)
    assert unfused.flat[5] == 0
    finite = ~np.isnan(got)
    np.testing.assert_array_equal(got[finite], unfused[finite])


@pytest.mark.parametrize("shape", SHAPES)
def test_plain_batchnorm_on_vectors_matches(shape):
    model = bn_relu(shape, shape[1], relu=False)
    check_cuda(model, {"x": rand(*shape, seed=6)})


@pytest.mark.parametrize("precision", ["tf32", "fp16", "bf16"])
@pytest.mark.parametrize("shape", [[2, 8, 4, 4], [3, 5, 7, 7], [4, 6]])
def test_batchnorm_relu_at_reduced_precision(precision, shape):
    model = bn_relu(shape, shape[1])
    x = rand(*shape, seed=7) * np.float32(2.0)
    m = dnnx.load(model, device="cuda", precision=precision, measure_precision=False)
    assert "BatchNormalization+Relu" in [r["op"] for r in m.plan()], m.plan()
    assert_layer_close(precision, m.run(x), run_ort(model, {"x": x})["y"], f"{precision} vs onnxruntime")
