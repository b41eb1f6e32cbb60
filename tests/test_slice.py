"""Slice against onnxruntime: attributes (opset < 10) and constant inputs (10+), negative and
out-of-range bounds, steps (negative too), default axes and steps, int data."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import dnnx
from ort_check import assert_matches_ort, make_model, rand

BIG = np.iinfo(np.int64).max

CASES = {
    "simple": ([0, 1], [2, 3], [0, 1], None),
    "negative_bounds": ([-2], [-1], [2], None),
    "out_of_range": ([-100, 1], [BIG, 100], [1, 2], None),
    "steps": ([0, 1, 0], [5, 4, 6], [0, 1, 2], [2, 2, 3]),
    "negative_steps": ([4, -1], [-BIG, 0], [0, 2], [-2, -1]),
    "default_axes": ([1, 0], [3, 2], None, None),
    "empty": ([3], [1], [0], None),
    "negative_axes": ([1], [3], [-1], None),
}


@pytest.mark.parametrize("case", list(CASES))
def test_slice_input_form(case):
    starts, ends, axes, steps = CASES[case]
    inits = {"starts": np.array(starts, np.int64), "ends": np.array(ends, np.int64)}
    names = ["x", "starts", "ends"]
    if axes is not None or steps is not None:
        inits["axes"] = np.array(axes if axes is not None else range(len(starts)), np.int64)
        names.append("axes")
    if steps is not None:
        inits["steps"] = np.array(steps, np.int64)
        names.append("steps")
    model = make_model([helper.make_node("Slice", names, ["y"])], [("x", [5, 4, 6])], [("y", None)], inits)
    assert_matches_ort(model, {"x": rand(5, 4, 6)})


@pytest.mark.parametrize("attrs,y_shape", [({"starts": [1], "ends": [3]}, [2, 4, 6]),
                                           ({"starts": [0, -3], "ends": [-1, 100], "axes": [2, 0]}, [3, 4, 5])])
def test_slice_attribute_form(attrs, y_shape):
    model = make_model([helper.make_node("Slice", ["x"], ["y"], **attrs)], [("x", [5, 4, 6])], [("y", y_shape)],
                       opset=9)
    assert_matches_ort(model, {"x": rand(5, 4, 6)})


def test_slice_int64_data():
    inits = {"s": np.array([1], np.int64), "e": np.array([3], np.int64)}
    model = make_model([helper.make_node("Slice", ["x", "s", "e"], ["y"])], [("x", [4], TensorProto.INT64)],
                       [("y", None, TensorProto.INT64)], inits)
    assert_matches_ort(model, {"x": np.array([10, 11, 12, 13], np.int64)})


def test_slice_zero_step_is_invalid():
    inits = {"s": np.array([0], np.int64), "e": np.array([2], np.int64), "a": np.array([0], np.int64),
             "st": np.array([0], np.int64)}
    node = helper.make_node("Slice", ["x", "s", "e", "a", "st"], ["y"], name="slice0")
    model = make_model([node], [("x", [4])], [("y", [2])], inits)
    with pytest.raises(dnnx.InvalidModelError, match=r"slice0.*steps \[0\] contain 0"):
        dnnx.load(model)


def test_slice_starts_fed_as_an_input():
    # A value input (Note [value inputs]): each starts value plans anew.
    node = helper.make_node("Slice", ["x", "s", "e"], ["y"], name="slice_dyn")
    model = make_model([node], [("x", [4]), ("s", [1], TensorProto.INT64)], [("y", ["n"])],
                       {"e": np.array([3], np.int64)})
    m = dnnx.load(model)
    x = np.arange(4, dtype=np.float32)
    for start in (0, 2, -4, 0):
        np.testing.assert_array_equal(m.run(x, np.array([start], np.int64)), x[start:3])
