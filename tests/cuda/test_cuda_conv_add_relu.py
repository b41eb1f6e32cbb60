"""A residual join, Conv -> Add(z) -> Relu, as one layer on CUDA (the fuse_conv_add_relu pass: one
cudnnConvolutionBiasActivationForward with the residual as z), against the CPU backend and
onnxruntime with the fp32 tolerances of cuda_check.py, and against the same model with the pass
off; the cases the pass must leave alone keep their three layers."""
import numpy as np
import pytest
from onnx import helper

import dnnx
from cuda_check import assert_close, check_cuda
from ort_check import make_model, rand

FUSED = "Conv+Add+Relu"


def weights(*shape, seed):
    return (rand(*shape, seed=seed) / np.sqrt(np.prod(shape[1:]))).astype(np.float32)


def residual_block(bias=True, z_first=False, downsample=False, channels=8, stride=1):
    """x -> conv_a + relu -> conv_b (-> Add with x, or with a downsample conv of x, placed after
    conv_b in the node order) -> relu."""
    c = channels
    inits = {"wa": weights(c, c, 3, 3, seed=1), "wb": weights(c, c, 3, 3, seed=2)}
    b_inputs = ["a", "wb"]
    if bias:
        inits["bb"] = rand(c, seed=3)
        b_inputs.append("bb")
    nodes = [helper.make_node("Conv", ["x", "wa"], ["ca"], name="conv_a", pads=[1, 1, 1, 1], strides=[stride] * 2),
             helper.make_node("Relu", ["ca"], ["a"], name="relu_a"),
             helper.make_node("Conv", b_inputs, ["cb"], name="conv_b", pads=[1, 1, 1, 1])]
    z = "x"
    if downsample:
        inits["wd"] = weights(c, c, 1, 1, seed=4)
        nodes.append(helper.make_node("Conv", ["x", "wd"], ["d"], name="down", strides=[stride] * 2))
        z = "d"
    nodes.append(helper.make_node("Add", [z, "cb"] if z_first else ["cb", z], ["s"], name="add"))
    nodes.append(helper.make_node("Relu", ["s"], ["y"], name="relu"))
    return make_model(nodes, [("x", ["N", c, 10, 10])], [("y", None)], inits)


@pytest.mark.parametrize("batch", [1, 8])
@pytest.mark.parametrize("bias, z_first, downsample, stride", [
    (True, False, False, 1), (False, False, False, 1), (True, True, False, 1), (True, False, True, 2),
    (False, True, True, 2),
])
def test_residual_join_is_one_layer(bias, z_first, downsample, stride, batch):
    model = residual_block(bias=bias, z_first=z_first, downsample=downsample, stride=stride)
    gpu = dnnx.load(model, device="cuda", batch_size=batch)
    rows = gpu.plan()
    ops = [row["op"] for row in rows]
    assert ops.count(FUSED) == 1 and "Add" not in ops and ops.count("Relu") == 0, ops
    row = next(r for r in rows if r["op"] == FUSED)
    assert "bias+residual+relu fused" in row["algorithm"] and "FMA" in row["math"], row
    x = rand(batch, 8, 10, 10, seed=batch)
    check_cuda(model, {"x": x})
    unfused = dnnx.load(model, device="cuda", passes={"fuse_conv_add_relu": False})
    assert "Add" in [r["op"] for r in unfused.plan(batch_size=batch)]
    assert_close(gpu.run(x), unfused.run(x), "fused vs unfused")


def test_a_broadcast_residual_is_not_fused():
    inits = {"w": weights(4, 4, 3, 3, seed=1), "z": rand(1, 4, 1, 1, seed=2)}
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Add", ["c", "z"], ["s"], name="add"),
             helper.make_node("Relu", ["s"], ["y"], name="relu")]
    model = make_model(nodes, [("x", [2, 4, 6, 6])], [("y", None)], inits)
    assert [r["op"] for r in dnnx.load(model, device="cuda").plan()] == ["Conv", "Add", "Relu"]
    check_cuda(model, {"x": rand(2, 4, 6, 6)})


def test_a_sum_read_elsewhere_is_not_fused():
    inits = {"w": weights(4, 4, 3, 3, seed=1)}
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Add", ["c", "x"], ["s"], name="add"),
             helper.make_node("Relu", ["s"], ["y"], name="relu"),
             helper.make_node("Sigmoid", ["s"], ["t"], name="other")]
    model = make_model(nodes, [("x", [2, 4, 6, 6])], [("y", None), ("t", None)], inits)
    assert [r["op"] for r in dnnx.load(model, device="cuda").plan()] == ["Conv", "Add", "Relu", "Sigmoid"]
    check_cuda(model, {"x": rand(2, 4, 6, 6)})


@pytest.mark.parametrize("search", ["heuristic", "exhaustive"])
def test_deterministic_and_exhaustive_plans_of_the_fused_layer(search):
    model = residual_block(downsample=True, stride=2)
    x = rand(4, 8, 10, 10)
    gpu = dnnx.load(model, device="cuda", algo_search=search, deterministic=True, plan_cache=False)
    first = gpu.run(x)
    np.testing.assert_array_equal(gpu.run(x), first)
    check_cuda(model, {"x": x}, algo_search=search, deterministic=True, plan_cache=False)
