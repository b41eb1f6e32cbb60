"""Pad against onnxruntime: pads as an attribute (opset < 11) and as a constant input (11+, axes
from 18), negative pads (crop), the fill value constant or computed, int data; edge, reflect and
wrap (19+) modes, also against numpy.pad on the cropped X (negative amounts crop first, as in
onnxruntime; numpy.pad, which onnx's reference calls, where the amounts reach past one period of
X, which onnxruntime refuses)."""
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


MODE_CASES = [  # (x shape, pads)
    ([2, 3, 4, 5], [0, 0, 1, 2, 0, 0, 2, 1]),
    ([3, 4], [1, 3, 2, 0]),
    ([6], [4, 5]),
    ([2, 5, 4], [0, -1, 2, 1, 2, -1]),  # crop one side, pad the other
]


def numpy_pad(x, pads, mode):
    """Negative amounts crop first (onnxruntime), the rest pads the cropped X (numpy.pad)."""
    rank = x.ndim
    begin, end = pads[:rank], pads[rank:]
    x = x[tuple(slice(max(0, -b), x.shape[d] - max(0, -e)) for d, (b, e) in enumerate(zip(begin, end)))]
    return np.pad(x, [(max(0, b), max(0, e)) for b, e in zip(begin, end)], mode=mode)


def mode_model(x_shape, pads, mode, opset=19, dtype=TensorProto.FLOAT, axes=None):
    inputs = ["x", "pads", "", "axes"] if axes is not None else ["x", "pads"]
    inits = {"pads": np.array(pads, np.int64)}
    if axes is not None:
        inits["axes"] = np.array(axes, np.int64)
    node = helper.make_node("Pad", inputs, ["y"], name=f"pad_{mode}", mode=mode)
    return make_model([node], [("x", x_shape, dtype)], [("y", None, dtype)], inits, opset=opset)


@pytest.mark.parametrize("mode,opset", [("edge", 13), ("reflect", 13), ("edge", 19), ("reflect", 19), ("wrap", 19)])
@pytest.mark.parametrize("x_shape,pads", MODE_CASES)
def test_pad_modes_match_onnxruntime(mode, opset, x_shape, pads):
    x = rand(*x_shape)
    got = assert_matches_ort(mode_model(x_shape, pads, mode, opset), {"x": x})
    np.testing.assert_array_equal(got["y"], numpy_pad(x, pads, {"edge": "edge", "reflect": "reflect",
                                                               "wrap": "wrap"}[mode]))


@pytest.mark.parametrize("mode", ["edge", "reflect", "wrap"])
@pytest.mark.parametrize("x_shape,pads", [([3], [7, 8]), ([2, 1], [0, 2, 0, 3]), ([2, 3], [5, 4, 6, 7])])
def test_pad_modes_past_one_period(mode, x_shape, pads):
    # Amounts beyond X's size repeat the pattern (numpy.pad, which onnx's reference calls);
    # a dim of one element reflects onto itself.
    x = np.arange(np.prod(x_shape), dtype=np.float32).reshape(x_shape)
    got = dnnx.load(mode_model(x_shape, pads, mode)).run(x)
    np.testing.assert_array_equal(got, numpy_pad(x, pads, mode))


def test_pad_modes_axes_and_int64_data():
    x = np.arange(24, dtype=np.int64).reshape(2, 3, 4)
    model = mode_model([2, 3, 4], [2, 1, 1, 2], "reflect", opset=18, dtype=TensorProto.INT64, axes=[-1, 1])
    got = assert_matches_ort(model, {"x": x})
    np.testing.assert_array_equal(got["y"], np.pad(x, [(0, 0), (1, 2), (2, 1)], mode="reflect"))


def test_pad_attribute_form_edge():
    node = helper.make_node("Pad", ["x"], ["y"], pads=[0, 2, 1, 1], mode="edge")
    model = make_model([node], [("x", [3, 4])], [("y", None)], opset=10)
    assert_matches_ort(model, {"x": rand(3, 4)})


def test_pad_wrap_needs_opset_19():
    node = helper.make_node("Pad", ["x", "pads"], ["y"], name="pad_wrap", mode="wrap")
    model = make_model([node], [("x", [2, 3])], [("y", [2, 5])], {"pads": np.array([0, 1, 0, 1], np.int64)},
                       opset=18)
    with pytest.raises(dnnx.InvalidModelError, match="pad_wrap.*'wrap' needs opset 19"):
        dnnx.load(model)


def test_pad_unknown_mode_is_invalid():
    node = helper.make_node("Pad", ["x", "pads"], ["y"], name="pad_odd", mode="symmetric")
    model = make_model([node], [("x", [2, 3])], [("y", [2, 5])], {"pads": np.array([0, 1, 0, 1], np.int64)})
    with pytest.raises(dnnx.InvalidModelError, match="pad_odd.*mode 'symmetric' is not one of"):
        dnnx.load(model)


def test_pad_edge_of_a_dim_cropped_away_is_invalid():
    # Cropping dim 1 to nothing, then repeating its edge: there is no element to repeat.
    node = helper.make_node("Pad", ["x", "pads"], ["y"], name="pad_empty", mode="edge")
    model = make_model([node], [("x", [2, 3])], [("y", [2, 1])], {"pads": np.array([0, -3, 0, 1], np.int64)})
    with pytest.raises(dnnx.InvalidModelError, match="pad_empty.*mode 'edge' pads dim 1 .*no element"):
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
