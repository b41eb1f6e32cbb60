"""Gather against onnxruntime: axes, negative and 2-D indices, constant or computed indices,
float and int data; out-of-range indices fail at load (constant) or at run (computed)."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import dnnx
from ort_check import assert_matches_ort, make_model, rand


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("indices", [np.array(1, np.int64), np.array([2, 0, -1], np.int64),
                                     np.array([[0, 1], [1, 1]], np.int32)])
def test_gather_constant_indices(axis, indices):
    node = helper.make_node("Gather", ["x", "i"], ["y"], axis=axis)
    model = make_model([node], [("x", [3, 4, 5])], [("y", None)], {"i": indices})
    assert_matches_ort(model, {"x": rand(3, 4, 5)})


def test_gather_computed_indices_and_int_data():
    node = helper.make_node("Gather", ["x", "i"], ["y"], axis=1)
    model = make_model([node], [("x", [2, 5], TensorProto.INT64), ("i", [4], TensorProto.INT64)],
                       [("y", None, TensorProto.INT64)])
    x = np.arange(10, dtype=np.int64).reshape(2, 5)
    assert_matches_ort(model, {"x": x, "i": np.array([4, -5, 0, 2], np.int64)})


def test_gather_constant_index_out_of_range():
    node = helper.make_node("Gather", ["x", "i"], ["y"], name="gather_oob")
    model = make_model([node], [("x", [3, 4])], [("y", [1, 4])], {"i": np.array([3], np.int64)})
    with pytest.raises(dnnx.InvalidModelError, match=r"gather_oob.*index 3 is out of range for axis 0"):
        dnnx.load(model)


def test_gather_computed_index_out_of_range():
    node = helper.make_node("Gather", ["x", "i"], ["y"], name="gather_run")
    model = make_model([node], [("x", [3, 4]), ("i", [1], TensorProto.INT64)], [("y", [1, 4])])
    m = dnnx.load(model)
    with pytest.raises(ValueError, match="gather_run.*index -4 is out of range"):
        m.run(rand(3, 4), np.array([-4], np.int64))
    np.testing.assert_array_equal(m.run(rand(3, 4), np.array([-3], np.int64)), rand(3, 4)[:1])
