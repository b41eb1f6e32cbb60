"""Split against onnxruntime: the split sizes as an attribute (opset < 13) or a constant input
(13+), equal parts, num_outputs with an uneven last part (18), negative axes."""
import numpy as np
import pytest
from onnx import helper

import dnnx
from ort_check import assert_matches_ort, make_model, rand


def split_model(n_out, x_shape, inputs=("x",), inits=None, opset=17, name="split", y_shape=None, **attrs):
    outs = [f"y{i}" for i in range(n_out)]
    node = helper.make_node("Split", list(inputs), outs, name=name, **attrs)
    return make_model([node], [("x", x_shape)], [(o, y_shape) for o in outs], inits or {}, opset=opset)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_split_equal_parts(axis):
    assert_matches_ort(split_model(2, [4, 6, 8], axis=axis), {"x": rand(4, 6, 8)})


def test_split_sizes_attribute():
    assert_matches_ort(split_model(3, [2, 7, 3], opset=11, axis=1, split=[1, 4, 2]), {"x": rand(2, 7, 3)})


def test_split_sizes_input():
    model = split_model(3, [2, 7, 3], inputs=("x", "s"), inits={"s": np.array([3, 0, 4], np.int64)}, axis=1)
    assert_matches_ort(model, {"x": rand(2, 7, 3)})


def test_split_num_outputs_uneven():
    assert_matches_ort(split_model(3, [7, 2], opset=18, num_outputs=3), {"x": rand(7, 2)})


def test_split_sizes_that_do_not_add_up():
    model = split_model(2, [2, 7], inputs=("x", "s"), inits={"s": np.array([3, 3], np.int64)}, name="split_bad",
                        y_shape=[2, 3], axis=1)
    with pytest.raises(dnnx.InvalidModelError, match=r"split_bad.*split \[3,3\] sums to 6"):
        dnnx.load(model)
