"""AveragePool's, GlobalAveragePool's and GlobalMaxPool's backward on the CPU against float64
finite differences (tests/grad_check.py), the conv before each pool trainable so the gradient
flows through it; and a small ResNet-shaped model (residual Add, GlobalAveragePool, Flatten,
Gemm) fine-tuned whole."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper
from onnx.reference.op_run import OpRun

from grad_check import check_gradients
from ort_check import make_model
from seeded_rand import SeededRand

import dnnx

rand = SeededRand()


@pytest.fixture(autouse=True)
def seeded_rng(request):
    rand.reseed(request.node.nodeid)


def out_shape(model):
    return [d.dim_value for d in model.graph.output[0].type.tensor_type.shape.dim]


# (attributes, opset): AveragePool's dilations came with opset 19
AVG_POOL_CASES = [
    (dict(kernel_shape=[2, 2], strides=[2, 2]), 17),
    (dict(kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1]), 17),                       # overlapping
    (dict(kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1], count_include_pad=1), 17),
    (dict(kernel_shape=[3, 2], strides=[2, 2], ceil_mode=1), 17),                              # partial windows
    (dict(kernel_shape=[3, 2], strides=[2, 2], ceil_mode=1, pads=[1, 0, 0, 1], count_include_pad=1), 17),
    (dict(kernel_shape=[2, 2], strides=[1, 1], dilations=[2, 2]), 19),
    (dict(kernel_shape=[3, 3], strides=[2, 2], pads=[0, 1, 1, 0]), 17),                        # asymmetric pads
]


def avg_pool_ids(case):
    attrs, opset = case
    return "-".join(f"{k}{v}" for k, v in attrs.items()) + f"-opset{opset}"


def conv_then(pool_node, x_shape, kernel, opset=17):
    """A trainable Conv (w, b) then the pool: the pool's gradient reaches w and b."""
    channels, spatial = x_shape[1], len(x_shape) - 2
    inits = {"w": rand(3, channels, *[kernel] * spatial, scale=0.5), "b": rand(3, scale=0.1)}
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[kernel] * spatial,
                              pads=[kernel // 2] * (2 * spatial)), pool_node]
    return make_model(nodes, [("x", list(x_shape))], [("y", None)], inits, opset=opset), list(inits)


@pytest.mark.parametrize("case", AVG_POOL_CASES, ids=avg_pool_ids)
def test_average_pool(case):
    attrs, opset = case
    model, trainable = conv_then(helper.make_node("AveragePool", ["c"], ["y"], **attrs), (2, 2, 7, 7), 3, opset)
    check_gradients(model, trainable, {"x": rand(2, 2, 7, 7)}, rand(*out_shape(model)))


@pytest.mark.parametrize("x_shape, attrs", [
    ((3, 1, 10), dict(kernel_shape=[3], strides=[2], pads=[1, 1], count_include_pad=1)),
    ((2, 1, 5, 6, 5), dict(kernel_shape=[2, 2, 2], strides=[1, 2, 1])),
], ids=["1d", "3d"])
def test_average_pool_other_ranks(x_shape, attrs):
    model, trainable = conv_then(helper.make_node("AveragePool", ["c"], ["y"], **attrs), x_shape, 3)
    check_gradients(model, trainable, {"x": rand(*x_shape)}, rand(*out_shape(model)))


class GlobalMaxPool(OpRun):
    """The maximum over every dim after N and C: onnx 1.23's reference reduces a 3-D X [N, C, L]
    over C as well (onnxruntime and dnnx give [N, C, 1])."""

    def _run(self, x):
        return (x.max(axis=tuple(range(2, x.ndim)), keepdims=True),)


@pytest.mark.parametrize("op", ["GlobalAveragePool", "GlobalMaxPool"])
@pytest.mark.parametrize("x_shape", [(2, 2, 6, 5), (3, 1, 9), (2, 1, 3, 4, 3)], ids=["2d", "1d", "3d"])
def test_global_pool(op, x_shape):
    # No Relu before GlobalMaxPool: a plane of random conv outputs has one maximum.
    model, trainable = conv_then(helper.make_node(op, ["c"], ["y"]), x_shape, 3)
    check_gradients(model, trainable, {"x": rand(*x_shape)}, rand(*out_shape(model)), reference_ops=[GlobalMaxPool])


def test_global_max_pool_splits_ties_evenly():
    # GlobalMaxPool's gradient is ReduceMax's over the plane: equal maxima share dY.
    x0 = np.array([[[[1.0, 3.0], [3.0, 2.0]], [[5.0, 0.0], [1.0, 4.0]]]], np.float32)  # [1, 2, 2, 2]
    nodes = [helper.make_node("Add", ["z", "x0"], ["x"]), helper.make_node("GlobalMaxPool", ["x"], ["y"])]
    model = make_model(nodes, [("z", [1, 2, 2, 2])], [("y", None)], {"x0": x0})
    target = np.array([[[[1.0]], [[3.0]]]], np.float32)  # mse: dL/dy = 2 (y - t) / 2 = (2, 2)
    _, grads = dnnx.load(model, optimize=False).finetune(trainable=["x0"], loss="mse").gradients(
        np.zeros((1, 2, 2, 2), np.float32), target)
    want = np.array([[[[0.0, 1.0], [1.0, 0.0]], [[2.0, 0.0], [0.0, 0.0]]]], np.float32)
    np.testing.assert_allclose(grads["x0"], want, rtol=1e-6)


def residual_net():
    """conv -> relu -> conv + skip -> relu -> AveragePool -> GlobalAveragePool -> Flatten -> Gemm:
    ResNet's tail, every layer trainable. x [N, 4, 8, 8] -> logits [N, 5]."""
    inits = {"w1": rand(4, 4, 3, 3, scale=0.3), "b1": rand(4, scale=0.1),
             "w2": rand(4, 4, 3, 3, scale=0.3), "b2": rand(4, scale=0.1),
             "fc.w": rand(5, 4, scale=0.5), "fc.b": rand(5, scale=0.1)}
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("Add", ["c2", "x"], ["s"]),
             helper.make_node("Relu", ["s"], ["r2"]),
             helper.make_node("AveragePool", ["r2"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("GlobalAveragePool", ["p"], ["g"]),
             helper.make_node("Flatten", ["g"], ["f"]),
             helper.make_node("Gemm", ["f", "fc.w", "fc.b"], ["y"], transB=1)]
    return make_model(nodes, [("x", [6, 4, 8, 8])], [("y", [6, 5])], inits), list(inits)


def test_a_residual_net_trains_whole():
    model, trainable = residual_net()
    check_gradients(model, trainable, {"x": rand(6, 4, 8, 8)}, np.arange(6) % 5, loss="cross_entropy")
    tuner = dnnx.load(model).finetune(trainable="all", lr=0.1, momentum=0.9)
    x, labels = rand(6, 4, 8, 8), np.arange(6) % 5
    losses = [tuner.step(x, labels) for _ in range(60)]
    assert losses[-1] < 0.5 * losses[0], losses
