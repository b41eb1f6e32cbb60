"""ReduceMean against onnxruntime: axes as an attribute (opset < 18) and as a constant input
(18+), keepdims, negative axes, all axes, noop_with_empty_axes."""
import numpy as np
import pytest
from onnx import helper

from ort_check import assert_matches_ort, make_model, rand


@pytest.mark.parametrize("axes", [None, [1], [2, 3], [-1], [0, 2], [0, 1, 2, 3]])
@pytest.mark.parametrize("keepdims", [0, 1])
def test_reduce_mean_attribute_axes(axes, keepdims):
    attrs = {"keepdims": keepdims} if axes is None else {"axes": axes, "keepdims": keepdims}
    model = make_model([helper.make_node("ReduceMean", ["x"], ["y"], **attrs)], [("x", [2, 3, 4, 5])],
                       [("y", None)], opset=13)
    assert_matches_ort(model, {"x": rand(2, 3, 4, 5)})


@pytest.mark.parametrize("axes", [None, [2, 3], [-3]])
@pytest.mark.parametrize("keepdims", [0, 1])
def test_reduce_mean_axes_input(axes, keepdims):
    inputs, inits = ["x"], {}
    if axes is not None:
        inputs.append("axes")
        inits["axes"] = np.array(axes, np.int64)
    model = make_model([helper.make_node("ReduceMean", inputs, ["y"], keepdims=keepdims)], [("x", [2, 3, 4, 5])],
                       [("y", None)], inits, opset=18)
    assert_matches_ort(model, {"x": rand(2, 3, 4, 5)})


def test_reduce_mean_noop_with_empty_axes():
    model = make_model([helper.make_node("ReduceMean", ["x"], ["y"], noop_with_empty_axes=1)], [("x", [2, 3])],
                       [("y", None)], opset=18)
    assert_matches_ort(model, {"x": rand(2, 3)})
