"""Precision on CUDA: fp32 runs FMA math only (no TF32 anywhere), tf32 lets convolutions
(CUDNN_TENSOR_OP_MATH), GEMMs (CUBLAS_TF32_TENSOR_OP_MATH) and LSTMs (CUDNN_DEFAULT_MATH) use TF32
tensor cores with fp32 accumulation, and the plan records the math each layer ran.

Tolerance at tf32: TF32 keeps 10 of fp32's 23 mantissa bits, so every operand is rounded with a
relative error up to 2^-11 (about 4.9e-4) and a product of two up to about 1e-3; sums of such
products over K terms of mixed sign leave errors of that order relative to the largest terms. The
checks are therefore |got - want| <= 5e-3 * |want| + 5e-3 * max|want| elementwise and a relative
L2 error <= 2e-3: ten times looser than those bounds' typical values, yet a hundred times tighter
than what a wrong kernel gives. fp32's own bounds (cuda_check.py) are 50 times tighter still."""
import numpy as np
import pytest
from onnx import helper

import dnnx
from cuda_check import L2 as FP32_L2
from cuda_check import check_cuda
from dnnx.examples import build
from ort_check import make_model, rand

TF32_RTOL = 5e-3
TF32_ATOL = 5e-3  # times max|want|
TF32_L2 = 2e-3
DENSE_MATH = "fp32 (FMA, dense rows kernel, no TF32)"  # the few-row / Gemm+Softmax kernel


def relative_l2(got, want):
    return float(np.linalg.norm(got.astype(np.float64) - want) / np.linalg.norm(want.astype(np.float64)))


def assert_tf32_close(got, want, what):
    np.testing.assert_allclose(got, want, rtol=TF32_RTOL, atol=TF32_ATOL * float(np.abs(want).max()), err_msg=what)
    assert relative_l2(got, want) <= TF32_L2, f"{what}: relative L2 {relative_l2(got, want):.3g}"


def conv_model(channels=64, size=32):
    w = (rand(channels, channels, 3, 3, seed=1) / np.sqrt(9 * channels)).astype(np.float32)
    node = helper.make_node("Conv", ["x", "w"], ["y"], name="conv", pads=[1, 1, 1, 1])
    return make_model([node], [("x", [8, channels, size, size])], [("y", None)], {"w": w})


def matmul_model(m=256, k=1024, n=256):
    node = helper.make_node("MatMul", ["a", "b"], ["y"], name="matmul")
    return make_model([node], [("a", [m, k])], [("y", None)], {"b": rand(k, n, seed=2)})


def test_fp32_plans_fma_math_everywhere():
    plan = dnnx.load(build("lenet"), device="cuda", batch_size=64).plan()
    for row in plan:
        if row["op"].startswith("Conv"):  # conv1 (one input channel) may run as the direct kernel
            assert row["math"] in ("fp32 (CUDNN_FMA_MATH)", "fp32 (FMA, direct kernel)"), row
        if row["op"].startswith("Gemm"):  # fc2 + softmax: the dense rows kernel, fp32 FMAs
            assert row["math"] in ("fp32 (CUBLAS_DEFAULT_MATH, no TF32)", DENSE_MATH), row


@pytest.mark.parametrize("search", ["heuristic", "exhaustive"])
def test_tf32_lenet_within_the_tf32_tolerance(search):
    model = build("lenet")
    x = rand(64, 1, 28, 28)
    gpu = dnnx.load(model, device="cuda", precision="tf32", algo_search=search, batch_size=64, plan_cache=False)
    plan = gpu.plan()
    for row in plan:
        if row["op"].startswith("Conv"):
            assert row["math"] in ("tf32 (CUDNN_TENSOR_OP_MATH)", "fp32 (CUDNN_FMA_MATH)",
                                   "fp32 (FMA, direct kernel)"), row
        if row["op"].startswith("Gemm"):  # the dense rows kernel stays fp32 (more precise than TF32)
            assert row["math"] in ("tf32 (CUBLAS_TF32_TENSOR_OP_MATH)", DENSE_MATH), row
    assert_tf32_close(gpu.run(x), dnnx.load(model).run(x), "lenet tf32 vs cpu")


def test_tf32_convolution_runs_on_tensor_ops():
    model = conv_model()
    x = rand(8, 64, 32, 32)
    gpu = dnnx.load(model, device="cuda", precision="tf32")
    (row,) = [r for r in gpu.plan() if r["op"].startswith("Conv")]  # between Transposes: channels last
    assert row["math"] == "tf32 (CUDNN_TENSOR_OP_MATH)", row
    want = dnnx.load(model).run(x)
    got = gpu.run(x)
    assert_tf32_close(got, want, "conv tf32 vs cpu")
    # K = 576 products rounded to TF32 leave an error far above fp32's: proof that tensor ops ran.
    assert relative_l2(got, want) > FP32_L2, relative_l2(got, want)
    fp32 = dnnx.load(model, device="cuda").run(x)
    assert relative_l2(fp32, want) <= FP32_L2


def test_tf32_matmul_is_visibly_tf32_and_fp32_is_not():
    model = matmul_model()
    a = rand(256, 1024)
    want = dnnx.load(model).run(a)
    tf32 = dnnx.load(model, device="cuda", precision="tf32")
    assert tf32.plan()[0]["math"] == "tf32 (CUBLAS_TF32_TENSOR_OP_MATH)"
    got = tf32.run(a)
    assert_tf32_close(got, want, "matmul tf32 vs cpu")
    # K = 1024 products rounded to TF32 leave an error far above fp32's: proof that TF32 ran.
    assert relative_l2(got, want) > FP32_L2, relative_l2(got, want)
    check_cuda(model, {"a": a})  # fp32: within fp32's bounds, so no TF32 there


def test_tf32_lstm_plan_and_tolerance():
    model = build("lstm")
    x = rand(16, 4, 8)
    gpu = dnnx.load(model, device="cuda", precision="tf32")
    row = [r for r in gpu.plan() if r["op"] == "LSTM"][0]
    assert row["math"] == "tf32 permitted (CUDNN_DEFAULT_MATH)", row
    assert_tf32_close(gpu.run(x), dnnx.load(model).run(x), "lstm tf32 vs cpu")

