"""ConvTranspose's forward against onnxruntime (tests/ort_check.py's fp32 tolerances): the
attribute combinations the node tests leave out (groups with several channels each, asymmetric
pads, output_shape smaller and larger than the natural size, SAME_LOWER), 1-D and 3-D."""
import numpy as np
import pytest
from onnx import helper

from ort_check import assert_matches_ort, make_model

RNG = np.random.default_rng(3)

CASES = [
    ([2, 4, 4, 4], dict(kernel_shape=[3, 3], group=2, strides=[2, 2], pads=[1, 0, 0, 1])),
    ([2, 4, 4, 4], dict(kernel_shape=[2, 2], dilations=[2, 2], group=4)),
    ([2, 4, 4, 4], dict(kernel_shape=[3, 3], strides=[3, 2], output_shape=[13, 10])),
    ([2, 4, 4, 4], dict(kernel_shape=[3, 3], strides=[2, 2], output_shape=[6, 5])),
    ([2, 4, 4, 4], dict(kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_LOWER")),
    ([2, 4, 4, 4], dict(kernel_shape=[3, 3], strides=[2, 2], output_padding=[1, 0], pads=[1, 1, 1, 1])),
    ([2, 4, 4, 4], dict(kernel_shape=[1, 1])),
    ([2, 4, 7], dict(kernel_shape=[3], strides=[2], pads=[1, 2], group=2)),
    ([1, 4, 3, 4, 3], dict(kernel_shape=[2, 3, 2], strides=[2, 1, 2], pads=[0, 1, 0, 1, 0, 1])),
]


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("x_shape, attrs", CASES, ids=lambda c: str(c))
def test_conv_transpose_matches_onnxruntime(x_shape, attrs, bias):
    group = attrs.get("group", 1)
    w = RNG.standard_normal((x_shape[1], 6 // group if group < 4 else 1, *attrs["kernel_shape"])).astype(np.float32)
    inits = {"w": w}
    inputs = ["x", "w"]
    if bias:
        inits["b"] = RNG.standard_normal(w.shape[1] * group).astype(np.float32)
        inputs.append("b")
    model = make_model([helper.make_node("ConvTranspose", inputs, ["y"], **attrs)], [("x", x_shape)], [("y", None)],
                       inits)
    assert_matches_ort(model, {"x": RNG.standard_normal(x_shape).astype(np.float32)})
