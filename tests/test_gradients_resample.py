"""Issue #15's differentiable ops against float64 finite differences (tests/grad_check.py, onnx's
reference evaluator as the oracle): Resize / Upsample, ConvTranspose, the Reduce* ops and
GatherElements, Tile and TopK's values, each
behind a trainable layer (or with trainable inputs) so that the gradient flows through it. The
tolerances are grad_check.py's (float32 gradients against float64 central differences)."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from grad_check import check_gradients
from ort_check import make_model

RNG = np.random.default_rng(15)


def rand(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def out_shape(model):
    return [d.dim_value for d in model.graph.output[0].type.tensor_type.shape.dim]


# --- Resize / Upsample ----------------------------------------------------------------------
# (attributes, scales or None, sizes or None, opset); X is [2, 3, 5, 4] after a 3x3 conv.
RESIZE_CASES = [
    (dict(mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor"), [1, 1, 2, 3], None, 13),
    (dict(mode="nearest", nearest_mode="round_prefer_ceil"), None, [2, 3, 7, 9], 13),
    (dict(mode="linear"), [1, 1, 2, 2], None, 13),
    (dict(mode="linear", coordinate_transformation_mode="align_corners"), None, [2, 3, 8, 7], 13),
    (dict(mode="linear", coordinate_transformation_mode="pytorch_half_pixel"), None, [2, 3, 3, 3], 13),
    (dict(mode="cubic"), [1, 1, 2, 2], None, 13),
    (dict(mode="cubic", cubic_coeff_a=-0.5, exclude_outside=1), None, [2, 3, 7, 6], 13),
    (dict(mode="linear", antialias=1), None, [2, 3, 3, 2], 18),
    (dict(mode="cubic", antialias=1, axes=[2, 3]), None, [2, 3], 18),
]


def resize_ids(case):
    attrs, scales, sizes, opset = case
    return "-".join(f"{v}" for v in attrs.values()) + (f"-scales{scales}" if scales else f"-sizes{sizes}") + f"-op{opset}"


def conv_then(node, extra_inits, opset=13):
    inits = {"w": rand(3, 2, 3, 3, scale=0.4), "b": rand(3, scale=0.1), **extra_inits}
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]), node]
    return make_model(nodes, [("x", [2, 2, 5, 4])], [("y", None)], inits, opset=opset)


@pytest.mark.parametrize("case", RESIZE_CASES, ids=resize_ids)
def test_resize(case):
    attrs, scales, sizes, opset = case
    extra = {"roi": np.zeros(0, np.float32)}
    inputs = ["c", "roi"]
    if scales:
        extra["scales"] = np.array(scales, np.float32)
        inputs.append("scales")
    else:
        extra["sizes"] = np.array(sizes, np.int64)
        inputs += ["", "sizes"]
    model = conv_then(helper.make_node("Resize", inputs, ["y"], **attrs), extra, opset)
    check_gradients(model, ["w", "b"], {"x": rand(2, 2, 5, 4)}, rand(*out_shape(model)))


def test_resize_tf_crop_and_resize():
    extra = {"roi": np.array([0, 0, 0.1, -0.1, 1, 1, 0.8, 1.2], np.float32), "sizes": np.array([2, 3, 4, 6], np.int64)}
    node = helper.make_node("Resize", ["c", "roi", "", "sizes"], ["y"], mode="linear",
                            coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=0.5)
    model = conv_then(node, extra)
    check_gradients(model, ["w", "b"], {"x": rand(2, 2, 5, 4)}, rand(*out_shape(model)))


@pytest.mark.parametrize("mode", ["nearest"])  # onnx's reference runs no linear Upsample: no oracle
def test_upsample(mode):
    node = helper.make_node("Upsample", ["c", "scales"], ["y"], mode=mode)
    model = conv_then(node, {"scales": np.array([1, 1, 2, 3], np.float32)}, opset=9)
    check_gradients(model, ["w", "b"], {"x": rand(2, 2, 5, 4)}, rand(*out_shape(model)))


# --- ConvTranspose ----------------------------------------------------------------------------
CONVT_CASES = [
    dict(kernel_shape=[3, 3]),
    dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 1]),
    dict(kernel_shape=[2, 3], strides=[2, 1], pads=[0, 1, 1, 0]),             # asymmetric pads
    dict(kernel_shape=[2, 2], dilations=[2, 2], group=4),                    # depthwise
    dict(kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_UPPER"),
    dict(kernel_shape=[3, 3], strides=[3, 2], output_shape=[13, 10]),       # one row and column past the last window
    dict(kernel_shape=[1, 1]),
]


def convt_ids(a):
    return "-".join(f"{k}{v}" for k, v in a.items())


def conv_convtranspose_model(attrs, bias):
    """x [2,3,4,4] -> Conv (3x3, pad 1) -> Relu -> ConvTranspose (the case) -> mse. The grouped case
    is depthwise (4 groups, 4 channels in and out): onnx's reference slices W and Y by the output
    channels per group, which is right only when each group has one channel of each."""
    group = attrs.get("group", 1)
    kh, kw = attrs["kernel_shape"]
    m = 6 if group == 1 else 4
    inits = {"w1": rand(4, 3, 3, 3, scale=0.3), "b1": rand(4, scale=0.1), "w2": rand(4, m // group, kh, kw, scale=0.3)}
    inputs = ["r", "w2"]
    if bias:
        inits["b2"] = rand(m, scale=0.1)
        inputs.append("b2")
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r"]), helper.make_node("ConvTranspose", inputs, ["y"], **attrs)]
    return make_model(nodes, [("x", [2, 3, 4, 4])], [("y", None)], inits), inits


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("attrs", CONVT_CASES, ids=convt_ids)
def test_conv_transpose_2d(attrs, bias):
    if bias and attrs.get("group", 1) > 1:
        pytest.skip("onnx's reference adds B[0] to every group's first channel (its group path slices Y, not "
                    "B): no oracle; tests/test_conv_transpose.py checks the grouped bias against onnxruntime")
    model, inits = conv_convtranspose_model(attrs, bias)
    check_gradients(model, list(inits), {"x": rand(2, 3, 4, 4)}, rand(*out_shape(model)))


@pytest.mark.parametrize("dims", [1, 3])
def test_conv_transpose_1d_3d(dims):
    k = [2] * dims
    inits = {"q": rand(2, 2, *([3] * dims)), "w": rand(2, 3, *k, scale=0.5), "b": rand(3)}
    nodes = [helper.make_node("Mul", ["x", "q"], ["h"]),
             helper.make_node("ConvTranspose", ["h", "w", "b"], ["y"], strides=[2] * dims, pads=[1] * dims + [0] * dims)]
    model = make_model(nodes, [("x", [2, 2, *([3] * dims)])], [("y", None)], inits)
    check_gradients(model, list(inits), {"x": rand(2, 2, *([3] * dims))}, rand(*out_shape(model)))


# --- Reduce* ----------------------------------------------------------------------------------
REDUCE_OPS = ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL2"]


@pytest.mark.parametrize("op", REDUCE_OPS)
@pytest.mark.parametrize("axes, keepdims", [([1], 1), ([0, 2], 0), (None, 1)])
@pytest.mark.parametrize("opset", [13, 18])
def test_reduce(op, axes, keepdims, opset):
    # h = x * q (q trainable), y = Reduce(h): ReduceProd reads values near 1 so that the product
    # stays of order 1; Max / Min read distinct values (no ties) with probability 1.
    q = rand(3, 4, 5)
    x = (1 + 0.2 * rand(3, 4, 5)).astype(np.float32) if op == "ReduceProd" else rand(3, 4, 5)
    if op == "ReduceProd":
        q = (1 + 0.2 * q).astype(np.float32)
    inits = {"q": q}
    inputs = ["h"]
    attrs = {"keepdims": keepdims}
    axes_as_input = opset >= (13 if op == "ReduceSum" else 18)
    if axes is not None and axes_as_input:
        inits["axes"] = np.array(axes, np.int64)
        inputs.append("axes")
    elif axes is not None:
        attrs["axes"] = axes
    nodes = [helper.make_node("Mul", ["x", "q"], ["h"]), helper.make_node(op, inputs, ["y"], **attrs)]
    model = make_model(nodes, [("x", [3, 4, 5])], [("y", None)], inits, opset=opset)
    check_gradients(model, ["q"], {"x": x}, rand(*out_shape(model)))


# --- GatherElements, Tile, TopK ---------------------------------------------------------------
@pytest.mark.parametrize("axis", [0, 1, 2])  # onnx's reference mishandles a negative axis here
def test_gather_elements(axis):
    # indices with repeats, so that the scatter-add sums several dY elements into one dData
    q = rand(3, 4, 5)
    idx_shape = list(q.shape)
    idx_shape[axis] = 7  # more indices than the axis holds (onnx's reference wants the other dims equal)
    size = q.shape[axis]
    inits = {"q": q, "idx": RNG.integers(-size, size, size=idx_shape).astype(np.int64)}
    nodes = [helper.make_node("Mul", ["x", "q"], ["h"]),
             helper.make_node("GatherElements", ["h", "idx"], ["y"], axis=axis)]
    model = make_model(nodes, [("x", [3, 4, 5])], [("y", None)], inits)
    check_gradients(model, ["q"], {"x": rand(3, 4, 5)}, rand(*idx_shape))


def test_tile():
    inits = {"q": rand(2, 3, 1), "reps": np.array([2, 1, 3], np.int64)}
    nodes = [helper.make_node("Mul", ["x", "q"], ["h"]), helper.make_node("Tile", ["h", "reps"], ["y"])]
    model = make_model(nodes, [("x", [2, 3, 1])], [("y", None)], inits)
    check_gradients(model, ["q"], {"x": rand(2, 3, 1)}, rand(4, 3, 3))


@pytest.mark.parametrize("axis, largest", [(-1, 1), (1, 0)])
def test_topk_values(axis, largest):
    inits = {"q": rand(3, 6, 4), "k": np.array([3], np.int64)}
    nodes = [helper.make_node("Mul", ["x", "q"], ["h"]),
             helper.make_node("TopK", ["h", "k"], ["y", "i"], axis=axis, largest=largest)]
    model = make_model(nodes, [("x", [3, 6, 4])], [("y", None)], inits)
    check_gradients(model, ["q"], {"x": rand(3, 6, 4)}, rand(*out_shape(model)))
