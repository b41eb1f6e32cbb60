"""Expand against onnxruntime: new leading dims, 1s in the shape that keep the input's dim,
broadcast both ways, int data; the shape must be constant."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import dnnx
from ort_check import assert_matches_ort, make_model, rand


@pytest.mark.parametrize("x_shape,shape", [([3, 1], [2, 3, 4]), ([3, 4], [1, 1]), ([1, 4, 1], [3, 1, 5]),
                                           ([], [2, 2]), ([2, 1, 3], [2, 4, 3])])
def test_expand_matches_ort(x_shape, shape):
    model = make_model([helper.make_node("Expand", ["x", "shape"], ["y"])], [("x", x_shape)], [("y", None)],
                       {"shape": np.array(shape, np.int64)})
    assert_matches_ort(model, {"x": rand(*x_shape)})


def test_expand_int32():
    model = make_model([helper.make_node("Expand", ["x", "shape"], ["y"])], [("x", [3], TensorProto.INT32)],
                       [("y", None, TensorProto.INT32)], {"shape": np.array([2, 3], np.int64)})
    assert_matches_ort(model, {"x": np.array([1, 2, 3], np.int32)})


def test_expand_shape_fed_as_an_input():
    # A value input (Note [value inputs]): each shape value plans anew.
    node = helper.make_node("Expand", ["x", "shape"], ["y"], name="expand_dyn")
    model = make_model([node], [("x", [3]), ("shape", [2], TensorProto.INT64)], [("y", ["a", "b"])])
    m = dnnx.load(model)
    x = np.arange(3, dtype=np.float32)
    for shape in ([2, 3], [4, 1], [2, 3]):
        np.testing.assert_array_equal(m.run(x, np.array(shape, np.int64)), np.broadcast_to(x, np.broadcast_shapes((3,), shape)))
    assert m.planner_stats()["plans_built"] == 2
