"""The layout and shape ops of issue #35 against onnxruntime: DepthToSpace (DCR, CRD),
SpaceToDepth (with and without mode), CenterCropPad (crop, pad, both, axes), Size and EyeLike
(dtypes, k of every sign)."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import dnnx
from ort_check import assert_matches_ort, make_model, rand

F, I32, I64 = TensorProto.FLOAT, TensorProto.INT32, TensorProto.INT64


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_depth_to_space_matches_ort(mode):
    node = helper.make_node("DepthToSpace", ["x"], ["y"], blocksize=2, mode=mode)
    model = make_model([node], [("x", [2, 12, 3, 4])], [("y", None)], opset=13)
    assert_matches_ort(model, {"x": rand(2, 12, 3, 4)})


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_depth_to_space_int64_moves_what_float_moves(mode):
    # onnxruntime has no int64 DepthToSpace: the kernel moves bytes, so float32 is the reference
    def model(elem):
        node = helper.make_node("DepthToSpace", ["x"], ["y"], blocksize=3, mode=mode)
        return make_model([node], [("x", [1, 18, 2, 3], elem)], [("y", None, elem)], opset=13)
    x = np.arange(108).reshape(1, 18, 2, 3)
    want = dnnx.load(model(F)).run(x.astype(np.float32))
    np.testing.assert_array_equal(dnnx.load(model(I64)).run(x), want.astype(np.int64))


@pytest.mark.parametrize("blocksize", [2, 3])
def test_space_to_depth_matches_ort(blocksize):
    node = helper.make_node("SpaceToDepth", ["x"], ["y"], blocksize=blocksize)
    model = make_model([node], [("x", [2, 3, 6, 12])], [("y", None)], opset=13)
    assert_matches_ort(model, {"x": rand(2, 3, 6, 12)})


def test_space_depth_round_trip_and_bad_shape():
    s2d = helper.make_node("SpaceToDepth", ["x"], ["t"], blocksize=2)
    d2s = helper.make_node("DepthToSpace", ["t"], ["y"], blocksize=2, mode="DCR")
    model = make_model([s2d, d2s], [("x", [1, 3, 4, 6])], [("y", None)], opset=13)
    x = rand(1, 3, 4, 6)
    np.testing.assert_array_equal(dnnx.load(model).run(x), x)
    bad = make_model([helper.make_node("SpaceToDepth", ["x"], ["y"], blocksize=4, name="s2d")],
                     [("x", [1, 3, 4, 6])], [("y", [1, 48, 1, 1])], opset=13)
    with pytest.raises(dnnx.InvalidModelError, match="s2d.*multiples of blocksize 4"):
        dnnx.load(bad)


@pytest.mark.parametrize("shape,axes", [
    ([3, 8, 4], None),      # crop (odd and even)
    ([7, 13, 6], None),     # pad (odd and even)
    ([3, 12, 5], None),     # crop and pad
    ([9, 2], [1, 2]),
    ([9, 2], [-3, -1]),
])
def test_center_crop_pad_matches_ort(shape, axes):
    kwargs = {} if axes is None else {"axes": axes}
    node = helper.make_node("CenterCropPad", ["x", "s"], ["y"], **kwargs)
    model = make_model([node], [("x", [5, 10, 4])], [("y", None)], {"s": np.array(shape, np.int64)}, opset=18)
    assert_matches_ort(model, {"x": rand(5, 10, 4)})


def test_size_matches_ort():
    node = helper.make_node("Size", ["x"], ["y"])
    model = make_model([node], [("x", ["n", 3, 4])], [("y", [], I64)], opset=13)
    m = dnnx.load(model)
    for n in (1, 5):
        assert m.run(rand(n, 3, 4)) == n * 12
        assert_matches_ort(model, {"x": rand(n, 3, 4)})


@pytest.mark.parametrize("k", [0, 1, -2, 7])
@pytest.mark.parametrize("dtype", [None, F, I32, I64])
def test_eye_like_matches_ort(k, dtype):
    kwargs = {"k": k} if dtype is None else {"k": k, "dtype": dtype}
    node = helper.make_node("EyeLike", ["x"], ["y"], **kwargs)
    model = make_model([node], [("x", [4, 6], I32)], [("y", None, dtype or I32)], opset=9)
    assert_matches_ort(model, {"x": np.zeros((4, 6), np.int32)})


def test_size_feeding_a_shape_input_folds_without_the_data():
    # Reshape(x, Unsqueeze(Size(x))): Size reads only x's shape, so the plan folds it per shape
    # and x's values do not join the plan key (one plan per batch size, not per value).
    nodes = [helper.make_node("Size", ["x"], ["n"]),
             helper.make_node("Unsqueeze", ["n", "axes"], ["shape"]),
             helper.make_node("Reshape", ["x", "shape"], ["y"])]
    model = make_model(nodes, [("x", ["N", 3, 4])], [("y", ["M"])], {"axes": np.array([0], np.int64)}, opset=13)
    m = dnnx.load(model)
    x = rand(2, 3, 4, seed=1)
    np.testing.assert_array_equal(m.run(x), x.reshape(-1))
    built = m.planner_stats()["plans_built"]
    x = rand(2, 3, 4, seed=2)
    np.testing.assert_array_equal(m.run(x), x.reshape(-1))
    assert m.planner_stats()["plans_built"] == built  # new values, same shape: the same plan
    np.testing.assert_array_equal(m.run(rand(5, 3, 4)), rand(5, 3, 4).reshape(-1))
