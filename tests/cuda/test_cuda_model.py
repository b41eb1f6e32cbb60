"""Whole models on CUDA, the plan the CUDA planner makes, its workspace limit, and its errors."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import dnnx
from cuda_check import check_cuda
from dnnx.examples import build
from ort_check import make_model, rand

CUDNN_ALGOS = {"IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT", "FFT", "FFT_TILING", "WINOGRAD",
               "WINOGRAD_NONFUSED"}


@pytest.mark.parametrize("batch", [1, 64])
def test_lenet_end_to_end(batch):
    probs = check_cuda(build("lenet"), {"x": rand(batch, 1, 28, 28)})["probs"]
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-5)


def test_new_batch_size_replans_and_stays_right():
    model = build("lenet")
    gpu = dnnx.load(model, device="cuda")
    cpu = dnnx.load(model)
    for batch in (3, 17, 3):
        x = rand(batch, 1, 28, 28, seed=batch)
        np.testing.assert_allclose(gpu.run(x), cpu.run(x), rtol=1e-4, atol=1e-6)


def test_device_index_and_repr():
    gpu = dnnx.load(build("lenet"), device="cuda:0")
    assert "cuda:0" in repr(gpu)


def test_plan_rows_show_cudnn_algorithm_math_and_workspace():
    plan = dnnx.load(build("lenet"), device="cuda", workspace_limit="64MiB", passes={"fuse_conv_pool": False}).plan(batch_size=64)
    convs = [row for row in plan if row["op"] == "Conv"]
    assert len(convs) == 2
    direct = "direct (1 input channel)"  # conv1's one input channel: the direct kernel, bias fused
    assert convs[0]["algorithm"] == direct + " (bias fused)", convs[0]
    for row in convs:
        assert row["algorithm"] in CUDNN_ALGOS or row["algorithm"].startswith(direct), row
        assert "FMA" in row["math"], row
        assert 0 <= row["workspace"] <= 64 << 20
        for algo, why in row["rejected"]:
            assert (algo in CUDNN_ALGOS or algo == direct) and why, row
    # fc1 -> relu1 is one Gemm+Relu (cuBLASLt's bias+relu epilogue); fc2 -> softmax one Gemm+Softmax
    # (the dense rows kernel, bias and softmax fused)
    gemms = [row for row in plan if row["op"].startswith("Gemm")]
    assert [row["op"] for row in gemms] == ["Gemm+Relu", "Gemm+Softmax"], gemms
    assert gemms[0]["algorithm"] == "cublasLtMatmul (bias+relu epilogue)", gemms[0]
    assert gemms[1]["algorithm"] == "dense rows kernel (bias+softmax fused)", gemms[1]
    assert all("no TF32" in row["math"] for row in gemms)
    assert "cudnnPoolingForward" in [row["algorithm"] for row in plan if row["op"] == "MaxPool"][0]
    text = str(plan)
    assert "conv1" in text and "FMA" in text


def test_workspace_limit_zero_is_honoured():
    model = build("lenet")
    plan = dnnx.load(model, device="cuda", workspace_limit=0, passes={"fuse_conv_pool": False}).plan(batch_size=32)
    assert all(row["workspace"] == 0 for row in plan), [(r["name"], r["workspace"]) for r in plan]
    for row in (r for r in plan if r["op"] == "Conv"):
        assert all("limit" in why or "ranked below" in why or "cuDNN" in why or "math" in why
                   for _, why in row["rejected"]), row
    check_cuda(model, {"x": rand(32, 1, 28, 28)}, workspace_limit=0)


def test_asymmetric_padding_beyond_the_workspace_limit_is_a_device_error_naming_the_layer():
    w = (rand(4, 3, 3, 2) / 4).astype(np.float32)
    node = helper.make_node("Conv", ["x", "w"], ["y"], name="padded_conv", pads=[1, 0, 2, 1])
    model = make_model([node], [("x", [2, 3, 9, 7])], [("y", None)], {"w": w})
    with pytest.raises(dnnx.DeviceError, match="padded_conv.*workspace"):
        dnnx.load(model, device="cuda", workspace_limit=0)
    check_cuda(model, {"x": rand(2, 3, 9, 7)}, workspace_limit="1MiB")


def test_missing_device_is_a_device_error():
    with pytest.raises(dnnx.DeviceError, match="cuda:99"):
        dnnx.load(build("lenet"), device="cuda:99")


def test_wrong_input_is_a_value_error_and_the_model_stays_usable():
    gpu = dnnx.load(build("lenet"), device="cuda")
    with pytest.raises(ValueError, match="input 'x'"):
        gpu.run(rand(2, 3, 28, 28))
    x = rand(2, 1, 28, 28)
    np.testing.assert_allclose(gpu.run(x), dnnx.load(build("lenet")).run(x), rtol=1e-4, atol=1e-6)


def test_graph_input_that_is_also_an_output():
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="relu")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", 1, [2, 3])],
                              [helper.make_tensor_value_info("y", 1, [2, 3]),
                               helper.make_tensor_value_info("x", 1, [2, 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    x = rand(2, 3)
    y, x_out = dnnx.load(model, device="cuda").run(x)
    np.testing.assert_array_equal(x_out, x)
    np.testing.assert_array_equal(y, np.maximum(x, 0))


def test_runs_from_several_threads_agree():
    from concurrent.futures import ThreadPoolExecutor

    gpu = dnnx.load(build("lenet"), device="cuda")
    xs = [rand(8, 1, 28, 28, seed=s) for s in range(8)]
    want = [gpu.run(x) for x in xs]
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(gpu.run, xs))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
