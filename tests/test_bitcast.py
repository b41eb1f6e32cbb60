"""BitCast (opset 26): the bits kept, read as another type of the same width, against
onnxruntime and numpy's view; a width that differs is refused naming the node (Note [bitcast])."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import dnnx
from ort_check import assert_matches_ort, make_model

PAIRS = [(TensorProto.FLOAT, np.float32, TensorProto.UINT32, np.uint32),
         (TensorProto.INT64, np.int64, TensorProto.DOUBLE, np.float64),
         (TensorProto.FLOAT16, np.float16, TensorProto.INT16, np.int16),
         (TensorProto.UINT8, np.uint8, TensorProto.INT8, np.int8)]


def _model(src, dst, shape):
    return make_model([helper.make_node("BitCast", ["x"], ["y"], name="bc", to=dst)], [("x", shape, src)],
                      [("y", shape, dst)], opset=26)


@pytest.mark.parametrize("src,src_np,dst,dst_np", PAIRS + [(d, dn, s, sn) for s, sn, d, dn in PAIRS])
def test_bitcast_is_numpy_view(src, src_np, dst, dst_np):
    x = (np.arange(-6, 6).reshape(3, 4) * 37.25).astype(src_np)
    if src_np in (np.float32, np.float64, np.float16):
        x.flat[0] = np.nan
        x.flat[1] = -np.inf
    got = dnnx.load(_model(src, dst, [3, 4])).run_dict({"x": x})["y"]
    assert got.dtype == dst_np
    np.testing.assert_array_equal(got.view(np.uint8), x.view(np.uint8))  # every bit kept, NaN's too


def test_bitcast_matches_ort():
    x = np.array([[1.0, -2.5, 0.0], [3e38, 1e-40, -0.0]], np.float32)
    assert_matches_ort(_model(TensorProto.FLOAT, TensorProto.INT32, [2, 3]), {"x": x})


def test_bitcast_bool_and_bytes():
    b = np.array([True, False, True])
    got = dnnx.load(_model(TensorProto.BOOL, TensorProto.UINT8, [3])).run_dict({"x": b})["y"]
    np.testing.assert_array_equal(got, np.array([1, 0, 1], np.uint8))
    # a byte other than 0 or 1 reads as true: the engine's bool is one byte holding 0 or 1
    x = np.array([0, 1, 2, 255], np.uint8)
    got = dnnx.load(_model(TensorProto.UINT8, TensorProto.BOOL, [4])).run_dict({"x": x})
    np.testing.assert_array_equal(got["y"], np.array([False, True, True, True]))


def test_bitcast_empty_and_scalar():
    got = dnnx.load(_model(TensorProto.INT32, TensorProto.FLOAT, [0, 3])).run_dict({"x": np.zeros((0, 3), np.int32)})
    assert got["y"].shape == (0, 3) and got["y"].dtype == np.float32
    got = dnnx.load(_model(TensorProto.INT32, TensorProto.FLOAT, [])).run_dict({"x": np.array(0x3F800000, np.int32)})
    assert got["y"] == np.float32(1.0)


@pytest.mark.parametrize("src,dst,msg", [
    (TensorProto.FLOAT, TensorProto.INT64, r"float32 \(32 bits\) cannot be bitcast to int64 \(64 bits\)"),
    (TensorProto.INT8, TensorProto.INT4, r"int8 \(8 bits\) cannot be bitcast to int4 \(4 bits\)"),
])
def test_bitcast_width_mismatch_is_refused(src, dst, msg):
    with pytest.raises(dnnx.InvalidModelError, match=r"bc.*" + msg):
        dnnx.load(_model(src, dst, [2]))


def test_bitcast_to_a_type_dnnx_lacks_is_refused():
    with pytest.raises(dnnx.UnsupportedModelError, match="bc.*cast to COMPLEX64 is not supported"):
        dnnx.load(_model(TensorProto.INT64, TensorProto.COMPLEX64, [2]))


@pytest.mark.parametrize("to,name", [(TensorProto.FLOAT16, "float16"), (TensorProto.DOUBLE, "float64")])
def test_bitcast_to_a_float32_twin_type_is_refused_on_a_device(to, name):
    # a device imports float16/bfloat16/float64 values as float32 (python/dnnx/_edges.py): their bits
    # are not the model's, so a BitCast to them is refused there, naming the node
    from dnnx._importer import import_model

    src = TensorProto.INT16 if to == TensorProto.FLOAT16 else TensorProto.INT64
    with pytest.raises(dnnx.UnsupportedModelError, match=f"bc.*BitCast to {name} cannot run on a device"):
        import_model(_model(src, to, [2]), float_edges=True)
    assert import_model(_model(src, to, [2])).ir["nodes"][0][0] == "BitCast"  # on the CPU it imports


def test_a_bitcast_of_a_float64_input_is_refused_on_a_device_naming_the_node():
    from dnnx._importer import import_model

    model = _model(TensorProto.DOUBLE, TensorProto.INT64, [2])
    with pytest.raises(dnnx.UnsupportedModelError, match="BitCast.*float64, which a device model computes as float32"):
        import_model(model, float_edges=True)
    assert import_model(model).ir["nodes"][0][0] == "BitCast"  # on the CPU it imports
