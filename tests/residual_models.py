"""Residual-join models (Conv -> Add(z) -> Relu) shared by the CPU and CUDA tests of the
fuse_conv_add_relu pass (tests/test_conv_add_relu.py, tests/cuda/test_cuda_conv_add_relu.py)."""
import numpy as np
from onnx import helper

from ort_check import make_model, rand


def weights(*shape, seed):
    """Conv weights scaled by 1/sqrt(fan-in), so activations stay near unit size."""
    return (rand(*shape, seed=seed) / np.sqrt(np.prod(shape[1:]))).astype(np.float32)


def residual_block(bias=True, z_first=False, downsample=False, channels=8, stride=1, size=11, down_bias=False):
    """x [N, channels, size, size] -> conv_a + relu -> conv_b (-> Add with x, or with a downsample
    conv of x, with a bias when down_bias, placed after conv_b in the node order) -> relu."""
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
        down_inputs = ["x", "wd"]
        if down_bias:
            inits["bd"] = rand(c, seed=5)
            down_inputs.append("bd")
        nodes.append(helper.make_node("Conv", down_inputs, ["d"], name="down", strides=[stride] * 2))
        z = "d"
    nodes.append(helper.make_node("Add", [z, "cb"] if z_first else ["cb", z], ["s"], name="add"))
    nodes.append(helper.make_node("Relu", ["s"], ["y"], name="relu"))
    return make_model(nodes, [("x", ["N", c, size, size])], [("y", None)], inits)


def broadcast_residual():
    """conv + z [1, 4, 1, 1] (a broadcast Add, which the pass must leave alone); x [2, 4, 6, 6]."""
    inits = {"w": weights(4, 4, 3, 3, seed=1), "z": rand(1, 4, 1, 1, seed=2)}
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Add", ["c", "z"], ["s"], name="add"),
             helper.make_node("Relu", ["s"], ["y"], name="relu")]
    return make_model(nodes, [("x", [2, 4, 6, 6])], [("y", None)], inits)


def sum_read_elsewhere():
    """conv + x whose sum also feeds a Sigmoid (an output of its own: no fusion); x [2, 4, 6, 6]."""
    inits = {"w": weights(4, 4, 3, 3, seed=1)}
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Add", ["c", "x"], ["s"], name="add"),
             helper.make_node("Relu", ["s"], ["y"], name="relu"),
             helper.make_node("Sigmoid", ["s"], ["t"], name="other")]
    return make_model(nodes, [("x", [2, 4, 6, 6])], [("y", None), ("t", None)], inits)
