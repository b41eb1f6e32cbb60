"""LeakyRelu, Elu and Clip against onnxruntime. Clip's bounds are attributes before opset 11 and
optional inputs (constant or computed) from 11 on; integer Clip from opset 12."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import dnnx
from ort_check import assert_matches_ort, make_model, rand


@pytest.mark.parametrize("op,attrs", [("LeakyRelu", {}), ("LeakyRelu", {"alpha": 0.2}),
                                      ("Elu", {}), ("Elu", {"alpha": 0.5})])
def test_alpha_activations(op, attrs):
    node = helper.make_node(op, ["x"], ["y"], **attrs)
    model = make_model([node], [("x", [2, 3, 4, 5])], [("y", None)])
    assert_matches_ort(model, {"x": 3 * rand(2, 3, 4, 5)})


@pytest.mark.parametrize("opset,attrs", [(6, {"min": -0.5, "max": 0.7}), (10, {"min": -0.5}), (10, {"max": 0.2}),
                                         (9, {})])
def test_clip_attributes_before_opset_11(opset, attrs):
    node = helper.make_node("Clip", ["x"], ["y"], **attrs)
    model = make_model([node], [("x", [3, 4])], [("y", None)], opset=opset)
    assert_matches_ort(model, {"x": rand(3, 4)})


@pytest.mark.parametrize("bounds", [("lo", "hi"), ("lo", ""), ("", "hi"), ()])
def test_clip_constant_bounds(bounds):
    node = helper.make_node("Clip", ["x", *bounds], ["y"])
    inits = {k: np.array(v, np.float32) for k, v in (("lo", -0.3), ("hi", 0.6)) if k in bounds}
    model = make_model([node], [("x", [2, 5])], [("y", None)], inits)
    assert_matches_ort(model, {"x": rand(2, 5)})


def test_clip_computed_bounds():
    # Bounds computed from graph inputs: the kernel reads them as it runs.
    nodes = [helper.make_node("Sub", ["zero", "b"], ["lo"]),
             helper.make_node("Clip", ["x", "lo", "b"], ["y"])]
    model = make_model(nodes, [("x", [2, 5]), ("b", [])], [("y", None)], {"zero": np.array(0, np.float32)})
    for b in (0.25, 1.0):
        assert_matches_ort(model, {"x": rand(2, 5), "b": np.array(b, np.float32)})


@pytest.mark.parametrize("elem,dtype", [(TensorProto.INT32, np.int32), (TensorProto.INT64, np.int64)])
def test_clip_integers(elem, dtype):
    node = helper.make_node("Clip", ["x", "lo", "hi"], ["y"])
    model = make_model([node], [("x", [10], elem)], [("y", None, elem)],
                       {"lo": np.array(-3, dtype), "hi": np.array(4, dtype)})
    assert_matches_ort(model, {"x": np.arange(-5, 5).astype(dtype)})


def test_clip_non_scalar_bound():
    node = helper.make_node("Clip", ["x", "lo"], ["y"], name="clip_vec")
    model = make_model([node], [("x", [2, 2])], [("y", [2, 2])], {"lo": np.zeros(2, np.float32)})
    with pytest.raises(dnnx.InvalidModelError, match=r"clip_vec.*'min' must be a scalar, got \[2\]"):
        dnnx.load(model)
