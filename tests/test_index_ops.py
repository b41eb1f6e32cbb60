"""The indexing ops of issue #35 against onnxruntime: GatherND (batch_dims, negative indices),
ScatterElements (every reduction, negative axes and indices, duplicates), Scatter (opset 10),
OneHot (axes, negative and out-of-range indices, int and float depth), Trilu (upper / lower, k
of every sign) and ReverseSequence (both layouts); indices out of range fail with the node's
name."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import dnnx
from ort_check import assert_matches_ort, make_model, rand

F, I32, I64 = TensorProto.FLOAT, TensorProto.INT32, TensorProto.INT64


# --- GatherND --------------------------------------------------------------------------------
@pytest.mark.parametrize("data_shape,indices,batch_dims", [
    ((4, 5, 6), np.array([[0, 1], [3, -1], [-4, 2]], np.int64), 0),       # tuples of 2 -> slices [6]
    ((4, 5, 6), np.array([[[1]], [[-1]]], np.int64), 0),                  # whole rows
    ((4, 5, 6), np.array([[0, 1, 2], [3, 4, -6]], np.int64), 0),          # single elements
    ((3, 5, 6), np.array([[[1], [4]], [[0], [0]], [[-1], [2]]], np.int64), 1),
    ((2, 3, 4, 5), np.array([[[1, 2], [0, -1]], [[2, 3], [1, 0]]], np.int64), 1),
    ((2, 3, 4, 5), np.array([[[1, 2]], [[0, 4]], [[3, 3]]] * 2, np.int64).reshape(2, 3, 1, 2), 2),
])
def test_gather_nd_matches_ort(data_shape, indices, batch_dims):
    node = helper.make_node("GatherND", ["x", "i"], ["y"], batch_dims=batch_dims)
    model = make_model([node], [("x", list(data_shape)), ("i", list(indices.shape), I64)], [("y", None)], opset=13)
    assert_matches_ort(model, {"x": rand(*data_shape), "i": indices})


def test_gather_nd_int_data():
    node = helper.make_node("GatherND", ["x", "i"], ["y"])
    model = make_model([node], [("x", [3, 4], I32), ("i", [2, 1], I64)], [("y", None, I32)], opset=13)
    assert_matches_ort(model, {"x": np.arange(12, dtype=np.int32).reshape(3, 4), "i": np.array([[2], [-3]], np.int64)})


def test_gather_nd_index_out_of_range_names_the_node():
    node = helper.make_node("GatherND", ["x", "i"], ["y"], name="gnd")
    model = make_model([node], [("x", [3, 4]), ("i", [1, 2], I64)], [("y", [1])], opset=13)
    m = dnnx.load(model)
    with pytest.raises(ValueError, match="gnd.*index 4 is out of range"):
        m.run(rand(3, 4), np.array([[0, 4]], np.int64))


def test_gather_nd_bad_batch_dims_names_the_node():
    node = helper.make_node("GatherND", ["x", "i"], ["y"], name="gnd_b", batch_dims=1)
    model = make_model([node], [("x", [3, 4]), ("i", [2, 1], I64)], [("y", None)], opset=13)
    with pytest.raises(dnnx.InvalidModelError, match="gnd_b.*batch_dims"):
        dnnx.load(model)


# --- ScatterElements, Scatter ----------------------------------------------------------------
@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min"])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_scatter_elements_matches_ort(reduction, axis):
    rng = np.random.default_rng(1)
    data, updates = rand(4, 5, seed=2), rand(3, 4, seed=3)
    size = data.shape[axis]
    if reduction == "none":  # distinct targets: ONNX leaves the order of duplicate writes open
        if axis == 0:
            indices = np.stack([rng.permutation(size)[:3] for _ in range(4)], axis=1)
        else:
            indices = np.stack([rng.permutation(size)[:4] for _ in range(3)], axis=0)
        indices = np.where(rng.random(indices.shape) < 0.5, indices - size, indices).astype(np.int64)
    else:  # duplicates and negative indices
        indices = rng.integers(-size, size, updates.shape).astype(np.int64)
    node = helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], axis=axis, reduction=reduction)
    model = make_model([node], [("x", [4, 5]), ("i", [3, 4], I64), ("u", [3, 4])], [("y", None)], opset=18)
    assert_matches_ort(model, {"x": data, "i": indices, "u": updates})


@pytest.mark.parametrize("reduction", ["add", "mul", "max", "min"])
def test_scatter_elements_int_reductions(reduction):
    node = helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], axis=0, reduction=reduction)
    model = make_model([node], [("x", [5], I64), ("i", [4], I32), ("u", [4], I64)], [("y", None, I64)], opset=18)
    assert_matches_ort(model, {"x": np.array([1, -2, 3, 4, 5], np.int64), "i": np.array([0, 0, -1, 2], np.int32),
                               "u": np.array([7, -3, 2, 9], np.int64)})


def test_scatter_opset10_and_refused_from_11():
    node = helper.make_node("Scatter", ["x", "i", "u"], ["y"], axis=1)
    inputs = [("x", [2, 4]), ("i", [2, 2], I64), ("u", [2, 2])]
    feeds = {"x": rand(2, 4), "i": np.array([[0, 3], [-1, 1]], np.int64), "u": rand(2, 2, seed=5)}
    assert_matches_ort(make_model([node], inputs, [("y", None)], opset=10), feeds)
    model11 = make_model([node], inputs, [("y", [2, 4])], opset=10)
    model11.opset_import[0].version = 11
    with pytest.raises((dnnx.InvalidModelError, dnnx.UnsupportedModelError), match="deprecated"):
        dnnx.load(model11)


def test_scatter_elements_index_out_of_range_names_the_node():
    node = helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], name="se")
    model = make_model([node], [("x", [3]), ("i", [1], I64), ("u", [1])], [("y", [3])], opset=18)
    with pytest.raises(ValueError, match="se.*index -4 is out of range"):
        dnnx.load(model).run(rand(3), np.array([-4], np.int64), rand(1))


# --- OneHot ----------------------------------------------------------------------------------
@pytest.mark.parametrize("axis", [-1, 0, 1, -2])
@pytest.mark.parametrize("depth_type", [I64, F, I32])
def test_one_hot_matches_ort(axis, depth_type):
    depth = np.array(5, helper.tensor_dtype_to_np_dtype(depth_type))
    node = helper.make_node("OneHot", ["i", "d", "v"], ["y"], axis=axis)
    model = make_model([node], [("i", [2, 3], I64), ("v", [2])], [("y", None)], {"d": depth}, opset=11)
    indices = np.array([[0, 4, -1], [-5, 7, -6]], np.int64)  # 7 and -6: out of range, a line of off
    assert_matches_ort(model, {"i": indices, "v": np.array([-1.5, 2.0], np.float32)})


def test_one_hot_float_indices_int_values():
    node = helper.make_node("OneHot", ["i", "d", "v"], ["y"])
    model = make_model([node], [("i", [4]), ("v", [2], I64)], [("y", None, I64)], {"d": np.array([3], np.int64)},
                       opset=11)
    assert_matches_ort(model, {"i": np.array([0.0, 2.7, -1.0, 1.2], np.float32), "v": np.array([0, 9], np.int64)})


# --- Trilu -----------------------------------------------------------------------------------
@pytest.mark.parametrize("upper", [0, 1])
@pytest.mark.parametrize("k", [None, 0, 2, -1, -7, 9])
@pytest.mark.parametrize("shape", [(4, 5), (2, 5, 3), (1, 1)])
def test_trilu_matches_ort(upper, k, shape):
    inputs = ["x"] if k is None else ["x", "k"]
    node = helper.make_node("Trilu", inputs, ["y"], upper=upper)
    specs = [("x", list(shape))] + ([] if k is None else [("k", [], I64)])
    feeds = {"x": rand(*shape)}
    if k is not None:
        feeds["k"] = np.array(k, np.int64)
    assert_matches_ort(make_model([node], specs, [("y", None)], opset=14), feeds)


def test_trilu_bool():
    node = helper.make_node("Trilu", ["x"], ["y"], upper=0)
    model = make_model([node], [("x", [3, 3], TensorProto.BOOL)], [("y", None, TensorProto.BOOL)], opset=14)
    x = np.ones((3, 3), bool)
    np.testing.assert_array_equal(dnnx.load(model).run(x), np.tril(x))


# --- ReverseSequence -------------------------------------------------------------------------
@pytest.mark.parametrize("batch_axis,time_axis", [(0, 1), (1, 0)])
def test_reverse_sequence_matches_ort(batch_axis, time_axis):
    shape = [3, 5, 2] if batch_axis == 0 else [5, 3, 2]
    node = helper.make_node("ReverseSequence", ["x", "l"], ["y"], batch_axis=batch_axis, time_axis=time_axis)
    model = make_model([node], [("x", shape), ("l", [3], I64)], [("y", None)], opset=10)
    assert_matches_ort(model, {"x": rand(*shape), "l": np.array([5, 0, 3], np.int64)})


def test_reverse_sequence_length_out_of_range_names_the_node():
    node = helper.make_node("ReverseSequence", ["x", "l"], ["y"], name="rs")
    model = make_model([node], [("x", [4, 2]), ("l", [2], I64)], [("y", [4, 2])], opset=10)
    with pytest.raises(ValueError, match="rs.*sequence_lens\\[1\\] = 5"):
        dnnx.load(model).run(rand(4, 2), np.array([1, 5], np.int64))
