"""RMSNormalization, LpNormalization and MeanVarianceNormalization against onnxruntime on the
CPU: every axis, broadcast scales, p 1 and 2, zero rows, custom axes, and the errors."""
import numpy as np
import pytest
from onnx import helper

import dnnx
from ort_check import assert_matches_ort, make_model, rand


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -2])
@pytest.mark.parametrize("epsilon", [1e-5, 0.1])
def test_rms_norm(axis, epsilon):
    shape = [2, 3, 4]
    scale_shape = shape[axis:]
    node = helper.make_node("RMSNormalization", ["x", "scale"], ["y"], name="rms_node", axis=axis, epsilon=epsilon)
    model = make_model([node], [("x", shape), ("scale", scale_shape)], [("y", None)], opset=23)
    assert_matches_ort(model, {"x": rand(*shape), "scale": rand(*scale_shape, seed=1)})


@pytest.mark.parametrize("scale_shape", [[1], [4], [1, 4], [3, 1]], ids=str)
def test_rms_norm_broadcast_scale(scale_shape):
    node = helper.make_node("RMSNormalization", ["x", "scale"], ["y"], name="rms_node", axis=1)
    model = make_model([node], [("x", [2, 3, 4]), ("scale", scale_shape)], [("y", None)], opset=23)
    assert_matches_ort(model, {"x": rand(2, 3, 4), "scale": rand(*scale_shape, seed=1)})


def test_rms_norm_refuses_a_scale_that_does_not_broadcast():
    node = helper.make_node("RMSNormalization", ["x", "scale"], ["y"], name="rms_node")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", 1, [2, 3, 4]),
                                            helper.make_tensor_value_info("scale", 1, [3])],
                              [helper.make_tensor_value_info("y", 1, [2, 3, 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    with pytest.raises(dnnx.InvalidModelError, match="rms_node.*scale \\[3\\] does not broadcast"):
        dnnx.load(model)


@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_lp_norm(p, axis):
    x = rand(3, 4, 5)
    x[1, :, :] = 0.0  # zero rows along every axis: output 0
    node = helper.make_node("LpNormalization", ["x"], ["y"], name="lp_node", p=p, axis=axis)
    assert_matches_ort(make_model([node], [("x", [3, 4, 5])], [("y", None)], opset=22), {"x": x})


def test_lp_norm_refuses_p3():
    node = helper.make_node("LpNormalization", ["x"], ["y"], name="lp_node", p=3)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", 1, [2, 3])],
                              [helper.make_tensor_value_info("y", 1, [2, 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])
    with pytest.raises(dnnx.InvalidModelError, match="lp_node.*p 3"):
        dnnx.load(model)


@pytest.mark.parametrize("axes", [None, [0, 2, 3], [1], [-1, -2], [0, 1, 2, 3]], ids=str)
def test_mvn(axes):
    attrs = {} if axes is None else {"axes": axes}
    node = helper.make_node("MeanVarianceNormalization", ["x"], ["y"], name="mvn_node", **attrs)
    x = rand(2, 3, 4, 5) * 3 + 1
    assert_matches_ort(make_model([node], [("x", [2, 3, 4, 5])], [("y", [2, 3, 4, 5])], opset=13), {"x": x})


def test_mvn_tiny_and_zero_variance():
    # two-pass variance (a deviation of 1e-7 still normalizes to +-1.7); a constant row is 0 / 0 = NaN
    node = helper.make_node("MeanVarianceNormalization", ["x"], ["y"], name="mvn_node", axes=[1])
    x = np.array([[1.0, 1.0, 1.0000001], [5.0, 5.0, 5.0]], np.float32)
    assert_matches_ort(make_model([node], [("x", [2, 3])], [("y", None)], opset=13), {"x": x})
