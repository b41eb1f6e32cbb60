"""The integer and bool forms of Clip (every integer type, opset 12+), MaxPool (int8, uint8,
opset 12+: padding counts as the type's lowest value) and ReduceMax/ReduceMin (the integer types;
bool from opset 20: any / all) on the CPU, against onnxruntime where it has the kernel."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import dnnx
from ort_check import assert_matches_ort, make_model

ORT_CLIP = {TensorProto.INT8: np.int8, TensorProto.UINT8: np.uint8, TensorProto.INT32: np.int32,
            TensorProto.UINT32: np.uint32, TensorProto.INT64: np.int64, TensorProto.UINT64: np.uint64}


def _values(np_type, shape, seed=0):
    info = np.iinfo(np_type)
    rng = np.random.default_rng(seed)
    return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=np_type)


@pytest.mark.parametrize("onnx_type", list(ORT_CLIP))
@pytest.mark.parametrize("bounds", ["both", "min", "max", "none", "crossed"])
def test_clip_integers_match_ort(onnx_type, bounds):
    np_type = ORT_CLIP[onnx_type]
    info = np.iinfo(np_type)
    lo, hi = np_type(info.min // 3 + 1), np_type(info.max // 2)
    if bounds == "crossed":  # min > max: every element becomes max
        lo, hi = hi, lo
    names = {"both": ["x", "lo", "hi"], "min": ["x", "lo"], "max": ["x", "", "hi"], "none": ["x"],
             "crossed": ["x", "lo", "hi"]}[bounds]
    feeds = {"x": _values(np_type, [3, 7])}
    inputs = [("x", [3, 7], onnx_type)]
    for name, value in (("lo", lo), ("hi", hi)):
        if name in names:
            feeds[name] = np.array(value, np_type)
            inputs.append((name, [], onnx_type))
    model = make_model([helper.make_node("Clip", names, ["y"])], inputs, [("y", [3, 7], onnx_type)], opset=13)
    got = assert_matches_ort(model, feeds, rtol=0, atol=0)
    assert got["y"].dtype == np_type


def test_clip_narrow_integers_saturate():
    # int16/uint16: onnx's T, no onnxruntime kernel (its CPU Clip lacks them): numpy's clip
    for np_type, onnx_type in ((np.int16, TensorProto.INT16), (np.uint16, TensorProto.UINT16)):
        x = _values(np_type, [50])
        lo, hi = np.array(100, np_type), np.array(30000, np_type)
        model = make_model([helper.make_node("Clip", ["x", "lo", "hi"], ["y"])],
                           [("x", [50], onnx_type), ("lo", [], onnx_type), ("hi", [], onnx_type)],
                           [("y", [50], onnx_type)], opset=13)
        got = dnnx.load(model).run_dict({"x": x, "lo": lo, "hi": hi})["y"]
        np.testing.assert_array_equal(got, np.clip(x, lo, hi))


@pytest.mark.parametrize("onnx_type,np_type", [(TensorProto.INT8, np.int8), (TensorProto.UINT8, np.uint8)])
@pytest.mark.parametrize("attrs", [
    dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1]),               # padding taps never win, even at the lowest value
    dict(kernel_shape=[2, 2], strides=[2, 2]),                  # the 2-wide stride-2 loop
    dict(kernel_shape=[3, 2], strides=[1, 2], dilations=[2, 1], ceil_mode=1),
])
def test_max_pool_bytes_match_ort(onnx_type, np_type, attrs):
    x = _values(np_type, [2, 3, 9, 8])
    x[0, 0, :3, :3] = np.iinfo(np_type).min  # a corner window of the type's lowest value beside the padding
    model = make_model([helper.make_node("MaxPool", ["x"], ["y"], **attrs)], [("x", [2, 3, 9, 8], onnx_type)],
                       [("y", None, onnx_type)], opset=12)
    assert_matches_ort(model, {"x": x}, rtol=0, atol=0)


@pytest.mark.parametrize("onnx_type,np_type", [(TensorProto.INT8, np.int8), (TensorProto.UINT8, np.uint8)])
def test_max_pool_bytes_with_indices_match_ort(onnx_type, np_type):
    x = _values(np_type, [1, 2, 6, 5], seed=3)
    model = make_model([helper.make_node("MaxPool", ["x"], ["y", "i"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                                         strides=[2, 2])],
                       [("x", [1, 2, 6, 5], onnx_type)], [("y", None, onnx_type), ("i", None, TensorProto.INT64)],
                       opset=12)
    assert_matches_ort(model, {"x": x}, rtol=0, atol=0)


def test_max_pool_bytes_before_opset_12_are_refused():
    model = make_model([helper.make_node("MaxPool", ["x"], ["y"], name="mp", kernel_shape=[2, 2])],
                       [("x", [1, 1, 4, 4], TensorProto.UINT8)], [("y", None, TensorProto.UINT8)], opset=11)
    with pytest.raises(dnnx.UnsupportedModelError, match="mp.*input X must be a float type.*got uint8"):
        dnnx.load(model)


@pytest.mark.parametrize("op", ["ReduceMax", "ReduceMin"])
@pytest.mark.parametrize("onnx_type,np_type", [(TensorProto.INT8, np.int8), (TensorProto.UINT8, np.uint8),
                                               (TensorProto.INT32, np.int32), (TensorProto.INT64, np.int64)])
@pytest.mark.parametrize("axes,keepdims", [([1], 1), ([0, 2], 0), ([], 1)])
def test_reduce_max_min_integers_match_ort(op, onnx_type, np_type, axes, keepdims):
    x = _values(np_type, [3, 4, 5])
    model = make_model([helper.make_node(op, ["x", "axes"], ["y"], keepdims=keepdims)], [("x", [3, 4, 5], onnx_type)],
                       [("y", None, onnx_type)], initializers={"axes": np.array(axes, np.int64)}, opset=18)
    assert_matches_ort(model, {"x": x}, rtol=0, atol=0)


@pytest.mark.parametrize("op", ["ReduceMax", "ReduceMin"])
@pytest.mark.parametrize("shape,axes", [([4, 6], [1]), ([4, 6], [0]), ([3, 0], [1]), ([2, 3, 2], [0, 2])])
def test_reduce_max_min_bool_match_ort(op, shape, axes):
    x = np.random.default_rng(1).random(shape) < 0.5
    if x.size:
        x[0] = True  # an all-true row: ReduceMin's true
        x[-1] = False  # an all-false row: ReduceMax's false
    model = make_model([helper.make_node(op, ["x", "axes"], ["y"], keepdims=1)], [("x", shape, TensorProto.BOOL)],
                       [("y", None, TensorProto.BOOL)], initializers={"axes": np.array(axes, np.int64)}, opset=20)
    if x.size:
        got = assert_matches_ort(model, {"x": x}, rtol=0, atol=0)
    else:  # onnxruntime refuses an empty bool reduction; onnx's reference gives false (any) and true (all)
        got = dnnx.load(model).run_dict({"x": x})
    want = x.any(axis=tuple(axes), keepdims=True) if op == "ReduceMax" else x.all(axis=tuple(axes), keepdims=True)
    np.testing.assert_array_equal(got["y"], want)


def test_reduce_max_bool_before_opset_20_is_refused():
    model = make_model([helper.make_node("ReduceMax", ["x"], ["y"], name="rm")], [("x", [2, 3], TensorProto.BOOL)],
                       [("y", None, TensorProto.BOOL)], opset=18)
    with pytest.raises(dnnx.UnsupportedModelError, match="rm.*input data"):
        dnnx.load(model)
