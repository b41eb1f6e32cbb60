"""Fewer, fused kernels on CUDA, each checked against the CPU backend and onnxruntime (fp32
tolerances of cuda_check.py, which also rule out TF32):
  - Gemm and Gemm+Relu as one cublasLtMatmul with the bias / relu epilogues (C a row vector with
    beta 1, or no C); every other C (broadcast columns, full [M,N], scalars, beta != 1) on the
    SGEMM path, with the Relu after it (the dense rows kernel, which takes Gemms of up to 4 rows,
    is switched off here: test_cuda_dense_rows.py covers it)
  - a Conv's bias in cudnnConvolutionBiasActivationForward (IDENTITY) when the algorithm is
    IMPLICIT_PRECOMP_GEMM, else cudnnAddTensor after the conv
  - the direct kernel for convolutions of one input channel, bias and Relu included, and the
    exhaustive planner timing it against cuDNN"""
import numpy as np
import pytest
from onnx import helper

import dnnx
from cuda_check import check_cuda
from dnnx.examples import build
from ort_check import make_model, rand

LT = "cublasLtMatmul"
DIRECT = "direct (1 input channel)"
CUDNN_ALGOS = ("IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT", "FFT", "FFT_TILING", "WINOGRAD",
               "WINOGRAD_NONFUSED")

# a, b, c shapes, attributes, whether cuBLASLt's epilogue takes C
GEMM_RELU_CASES = {
    "bias_row": ([4, 6], [6, 5], [5], {}, True),
    "bias_1xn": ([4, 6], [6, 5], [1, 5], {}, True),
    "no_bias": ([4, 6], [6, 5], None, {}, True),
    "trans_both_alpha": ([6, 4], [5, 6], [5], {"transA": 1, "transB": 1, "alpha": 0.5}, True),
    "lenet_fc1_batch1": ([1, 800], [500, 800], [500], {"transB": 1}, True),
    "lenet_fc1_batch64": ([64, 800], [500, 800], [500], {"transB": 1}, True),
    "wide": ([33, 70], [70, 129], [129], {}, True),
    "beta_two": ([4, 6], [6, 5], [5], {"beta": 2.0}, False),
    "beta_zero": ([4, 6], [6, 5], [5], {"beta": 0.0}, True),
    "bias_full": ([4, 6], [6, 5], [4, 5], {}, False),
    "bias_column": ([4, 6], [6, 5], [4, 1], {}, False),
    "bias_scalar": ([4, 6], [6, 5], [], {}, False),
}


def gemm_model(a_shape, b_shape, c_shape, attrs, relu):
    inits = {"b": rand(*b_shape, seed=2)}
    inputs = ["a", "b"]
    if c_shape is not None:
        inits["c"] = rand(*c_shape, seed=3)
        inputs.append("c")
    nodes = [helper.make_node("Gemm", inputs, ["g" if relu else "y"], name="gemm", **attrs)]
    if relu:
        nodes.append(helper.make_node("Relu", ["g"], ["y"], name="relu"))
    return make_model(nodes, [("a", a_shape)], [("y", None)], inits)


@pytest.mark.parametrize("relu", [True, False])
@pytest.mark.parametrize("case", list(GEMM_RELU_CASES))
def test_gemm_epilogues(case, relu, monkeypatch):
    monkeypatch.setenv("DNNX_TEST_FAIL_ALGO", "dense rows kernel")  # cuBLAS's paths for few rows too
    a_shape, b_shape, c_shape, attrs, lt = GEMM_RELU_CASES[case]
    model = gemm_model(a_shape, b_shape, c_shape, attrs, relu)
    (row,) = dnnx.load(model, device="cuda").plan()
    assert row["op"] == ("Gemm+Relu" if relu else "Gemm"), row
    assert "no TF32" in row["math"], row
    if lt:
        assert row["algorithm"].startswith(LT), row
        assert ("relu" in row["algorithm"]) == relu, row
    else:
        assert row["algorithm"].startswith("cublasSgemm"), row
        assert ("cudnnActivationForward" in row["algorithm"]) == relu, row
    check_cuda(model, {"a": rand(*a_shape, seed=1)})


def test_gemm_relu_unfused_when_the_pass_is_off():
    model = gemm_model([4, 6], [6, 5], [5], {}, True)
    plan = dnnx.load(model, device="cuda", optimize=False).plan()
    assert [row["op"] for row in plan] == ["Gemm", "Relu"]
    check_cuda(model, {"a": rand(4, 6, seed=1)}, optimize=False)


def conv_model(x_shape, w_shape, bias=True, relu=False, **attrs):
    fan_in = int(np.prod(w_shape[1:]))
    inits = {"w": (rand(*w_shape, seed=1) / np.sqrt(fan_in)).astype(np.float32)}
    inputs = ["x", "w"]
    if bias:
        inits["b"] = rand(w_shape[0], seed=2)
        inputs.append("b")
    nodes = [helper.make_node("Conv", inputs, ["c" if relu else "y"], name="conv", **attrs)]
    if relu:
        nodes.append(helper.make_node("Relu", ["c"], ["y"], name="relu"))
    return make_model(nodes, [("x", list(x_shape))], [("y", None)], inits)


@pytest.mark.parametrize("forced", ["precomp", "not_precomp"])
def test_conv_bias_in_the_cudnn_call_or_added_after(monkeypatch, forced):
    # IMPLICIT_PRECOMP_GEMM alone: the bias goes into cudnnConvolutionBiasActivationForward
    # (IDENTITY); without it, another algorithm and cudnnAddTensor.
    keep = [a for a in CUDNN_ALGOS if (a == "IMPLICIT_PRECOMP_GEMM") == (forced == "precomp")]
    monkeypatch.setenv("DNNX_TEST_FAIL_ALGO", ",".join(a for a in CUDNN_ALGOS if a not in keep))
    model = conv_model([3, 8, 12, 12], [16, 8, 3, 3], pads=[1, 1, 1, 1])
    (row,) = dnnx.load(model, device="cuda", plan_cache=False).plan()
    assert row["algorithm"] in keep, row
    check_cuda(model, {"x": rand(3, 8, 12, 12)}, plan_cache=False)


DIRECT_CASES = {
    "lenet_conv1_batch1": ([1, 1, 28, 28], [20, 1, 5, 5], {}),
    "lenet_conv1_batch64": ([64, 1, 28, 28], [20, 1, 5, 5], {}),
    "odd_width_3x3_pads": ([3, 1, 13, 11], [7, 1, 3, 3], {"pads": [1, 1, 1, 1]}),
    "asymmetric_pads": ([2, 1, 9, 10], [4, 1, 5, 5], {"pads": [2, 0, 1, 3]}),
    "strides_dilations": ([2, 1, 20, 17], [5, 1, 3, 3], {"strides": [2, 3], "dilations": [2, 1], "pads": [1, 1, 0, 2]}),
    "same_upper": ([2, 1, 10, 10], [6, 1, 5, 5], {"auto_pad": "SAME_UPPER", "strides": [2, 2]}),
    "no_bias": ([2, 1, 12, 12], [8, 1, 3, 3], {"bias": False}),
}


@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("case", list(DIRECT_CASES))
def test_direct_single_channel_conv(case, relu):
    x_shape, w_shape, attrs = DIRECT_CASES[case]
    model = conv_model(x_shape, w_shape, relu=relu, **attrs)
    (row,) = dnnx.load(model, device="cuda").plan()
    assert row["op"] == ("Conv+Relu" if relu else "Conv"), row
    assert row["algorithm"].startswith(DIRECT), row
    assert row["math"] == "fp32 (FMA, direct kernel)" and row["workspace"] == 0, row
    check_cuda(model, {"x": rand(*x_shape)})


def test_exhaustive_search_times_the_direct_kernel_against_cudnn():
    model = conv_model([256, 1, 28, 28], [20, 1, 5, 5])
    (row,) = dnnx.load(model, device="cuda", algo_search="exhaustive", plan_cache=False).plan()
    assert row["time_ms"] is not None and row["time_ms"] > 0, row
    if row["algorithm"].startswith(DIRECT):  # cuDNN's best lost, with its time
        slower = [why for algo, why in row["rejected"] if algo in CUDNN_ALGOS and "slower than " + DIRECT in why]
    else:
        slower = [why for algo, why in row["rejected"] if algo == DIRECT and "slower than" in why]
    assert slower, row
    # Reasons show four decimals (format_ms); the exact times are numbers in the plan cache.
    assert all(float(why.split(" ms")[0]) >= row["time_ms"] - 5e-5 for why in slower), row
    check_cuda(model, {"x": rand(256, 1, 28, 28)}, algo_search="exhaustive", plan_cache=False)


def test_multi_channel_and_unsupported_kernels_stay_on_cudnn():
    for x_shape, w_shape in (([2, 3, 12, 12], [4, 3, 5, 5]), ([2, 1, 12, 12], [4, 1, 4, 4])):
        (row,) = dnnx.load(conv_model(x_shape, w_shape), device="cuda").plan()
        assert row["algorithm"] in CUDNN_ALGOS, row
        check_cuda(conv_model(x_shape, w_shape), {"x": rand(*x_shape)})


@pytest.mark.parametrize("batch", [1, 7, 1024])
def test_lenet_fused_plan_and_results(batch):
    model = build("lenet")
    gpu = dnnx.load(model, device="cuda", batch_size=batch)
    ops = [row["op"] for row in gpu.plan()]
    assert ops.count("Gemm+Relu") == 1 and "Relu" not in ops, ops
    x = rand(batch, 1, 28, 28, seed=batch)
    check_cuda(model, {"x": x}, ort=False)
    np.testing.assert_array_equal(gpu.run(x), gpu.run(x))  # replays of the graph agree
