"""The CUDA planner's choices: the exhaustive search (cuDNN's timed candidates, times in the
plan), the deterministic restriction, and Conv+Relu fused into one cuDNN call by the
fuse_conv_relu pass. Results are checked against the CPU backend and onnxruntime every time."""
import numpy as np
import pytest
from onnx import helper

import dnnx
from cuda_check import check_cuda
from dnnx.examples import build
from ort_check import make_model, rand


def conv_relu_model(bias=True):
    w = (rand(16, 8, 3, 3, seed=1) / np.sqrt(72)).astype(np.float32)
    inits = {"w": w}
    inputs = ["x", "w"]
    if bias:
        inits["b"] = rand(16, seed=2)
        inputs.append("b")
    nodes = [helper.make_node("Conv", inputs, ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["y"], name="relu")]
    return make_model(nodes, [("x", [4, 8, 12, 12])], [("y", None)], inits)


def test_exhaustive_search_times_every_candidate_and_keeps_the_fastest():
    model = build("lenet")
    plan = dnnx.load(model, device="cuda", algo_search="exhaustive", batch_size=64, passes={"fuse_conv_pool": False}).plan()
    for row in (r for r in plan if r["op"] == "Conv"):
        assert row["time_ms"] is not None and row["time_ms"] > 0, row
        slower = [why for _, why in row["rejected"] if "slower than" in why]
        for why in slower:
            assert float(why.split(" ms")[0]) >= row["time_ms"] - 5e-5, row  # four decimals shown
    assert "ms" in str(plan)
    check_cuda(model, {"x": rand(64, 1, 28, 28)}, algo_search="exhaustive")


def test_exhaustive_search_within_a_zero_workspace_limit():
    model = build("lenet")
    plan = dnnx.load(model, device="cuda", algo_search="exhaustive", workspace_limit=0).plan(batch_size=16)
    assert all(row["workspace"] == 0 for row in plan)
    check_cuda(model, {"x": rand(16, 1, 28, 28)}, algo_search="exhaustive", workspace_limit=0)


def test_fused_pairs_keep_their_inner_value_as_scratch_within_a_zero_workspace_limit():
    # at batch 256 conv2 + pool2 runs as the pair (conv, then pool): the conv's output between the
    # two is the layer's scratch, an activation, not workspace; the algorithms take none
    model = build("lenet")
    plan = dnnx.load(model, device="cuda", workspace_limit=0).plan(batch_size=256)
    assert all(row["workspace"] == 0 for row in plan), [(r["name"], r["workspace"]) for r in plan]
    pairs = [row for row in plan if ", then " in row["algorithm"]]
    assert pairs and all(row["scratch"] >= 256 * 50 * 8 * 8 * 4 for row in pairs), pairs
    assert "scratch" in str(plan)
    check_cuda(model, {"x": rand(256, 1, 28, 28)}, workspace_limit=0)


def test_heuristic_plans_carry_no_time():
    plan = dnnx.load(build("lenet"), device="cuda").plan()
    assert all(row["time_ms"] is None for row in plan)


@pytest.mark.parametrize("search", ["heuristic", "exhaustive"])
def test_deterministic_algorithms_give_identical_results(search):
    model = build("lenet")
    x = rand(32, 1, 28, 28)
    gpu = dnnx.load(model, device="cuda", algo_search=search, deterministic=True)
    first = gpu.run(x)
    np.testing.assert_array_equal(gpu.run(x), first)
    check_cuda(model, {"x": x}, algo_search=search, deterministic=True)


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("search", ["heuristic", "exhaustive"])
def test_conv_relu_runs_fused_in_one_cudnn_call(bias, search):
    model = conv_relu_model(bias)
    plan = dnnx.load(model, device="cuda", algo_search=search).plan()
    assert [row["op"] for row in plan] == ["Conv+Relu"]
    assert "bias+relu fused" in plan[0]["algorithm"]
    check_cuda(model, {"x": rand(4, 8, 12, 12)}, algo_search=search)


def test_conv_relu_unfused_when_the_pass_is_off():
    model = conv_relu_model()
    plan = dnnx.load(model, device="cuda", optimize=False).plan()
    assert [row["op"] for row in plan] == ["Conv", "Relu"]
    check_cuda(model, {"x": rand(4, 8, 12, 12)}, optimize=False)
