"""Pad (constant mode) against onnxruntime: pads as an attribute (opset < 11) and as a constant
input (11+, axes from 18), negative pads (crop), the fill value constant or computed, int data."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import dnnx
from ort_check import assert_matches_ort, make_model, rand


@pytest.mark.parametrize("x_shape,pads,value", [
    ([2, 3, 4, 5], [0, 0, 1, 2, 0, 0, 3, 1], 0.0),
    ([3, 4], [1, 0, 0, 2], -1.5),
    ([2, 3, 4], [0, 1, -1, 1, 0, -2], 2.0),  # negative pads crop
    ([5], [2, 3], 0.5),
])
def test_pad_attribute_form(x_shape, pads, value):
    node = helper.make_node("Pad", ["x"], ["y"], pads=pads, value=value)
    model = make_model([node], [("x", x_shape)], [("y", None)], opset=10)
    assert_matches_ort(model, {"x": rand(*x_shape)})


@pytest.mark.parametrize("with_value", [False, True])
def test_pad_input_form(with_value):
    inputs = ["x", "pads", "value"] if with_value else ["x", "pads"]
    inits = {"pads": np.array([0, 1, 2, 0, 2, 1], np.int64), "value": np.array(0.75, np.float32)}
    node = helper.make_node("Pad", inputs, ["y"])
    model = make_model([node], [("x", [2, 3, 4])], [("y", None)], {k: inits[k] for k in inputs[1:]}, opset=13)
    assert_matches_ort(model, {"x": rand(2, 3, 4)})


def test_pad_computed_value_and_axes():
    nodes = [helper.make_node("Pad", ["x", "pads", "v", "axes"], ["y"])]
    inits = {"pads": np.array([1, 2, 3, 0], np.int64), "axes": np.array([-1, 1], np.int64)}
    model = make_model(nodes, [("x", [2, 3, 4]), ("v", [])], [("y", None)], inits, opset=18)
    assert_matches_ort(model, {"x": rand(2, 3, 4), "v": np.array(-7.0, np.float32)})


def test_pad_int64_data():
    node = helper.make_node("Pad", ["x", "pads", "v"], ["y"])
    model = make_model([node], [("x", [2, 3], TensorProto.INT64)], [("y", None, TensorProto.INT64)],
                       {"pads": np.array([1, 0, 0, 2], np.int64), "v": np.array(9, np.int64)})
    assert_matches_ort(model, {"x": np.arange(6, dtype=np.int64).reshape(2, 3)})


def test_pad_reflect_is_refused():
    node = helper.make_node("Pad", ["x", "pads"], ["y"], name="pad_reflect", mode="reflect")
    model = make_model([node], [("x", [2, 3])], [("y", [2, 5])], {"pads": np.array([0, 1, 0, 1], np.int64)})
    with pytest.raises(dnnx.UnsupportedModelError, match="pad_reflect.*mode 'reflect'"):
        dnnx.load(model)


def test_pad_pads_from_a_graph_input():
    # A value input (Note [value inputs]): each pads value plans anew.
    node = helper.make_node("Pad", ["x", "pads"], ["y"], name="pad_dyn")
    model = make_model([node], [("x", [2, 3]), ("pads", [4], TensorProto.INT64)], [("y", ["a", "b"])])
    m = dnnx.load(model)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for pads in ([0, 1, 0, 0], [1, 0, 2, 1]):
        want = np.pad(x, [(pads[0], pads[2]), (pads[1], pads[3])])
        np.testing.assert_array_equal(m.run(x, np.array(pads, np.int64)), want)
