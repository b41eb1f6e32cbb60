"""QuantizeLinear and DequantizeLinear (opsets 10, 13, 19, 21, 23) on the CPU against onnxruntime
(onnx's reference evaluator where onnxruntime has no kernel for the case): per tensor, per axis,
blocked, every quantized type the opsets allow, saturation, output_dtype, and rounding half to
even at exact ties."""
import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto

from quant_cases import node_model, reference_outputs, run_dnnx

INT_TYPES = {  # numpy type, onnx type, first opset
    "int8": (np.int8, TensorProto.INT8, 10), "uint8": (np.uint8, TensorProto.UINT8, 10),
    "int16": (np.int16, TensorProto.INT16, 21), "uint16": (np.uint16, TensorProto.UINT16, 21),
    "int4": (ml_dtypes.int4, TensorProto.INT4, 21), "uint4": (ml_dtypes.uint4, TensorProto.UINT4, 21),
}
FLOAT8_TYPES = {
    "float8_e4m3fn": (ml_dtypes.float8_e4m3fn, TensorProto.FLOAT8E4M3FN, 19),
    "float8_e4m3fnuz": (ml_dtypes.float8_e4m3fnuz, TensorProto.FLOAT8E4M3FNUZ, 19),
    "float8_e5m2": (ml_dtypes.float8_e5m2, TensorProto.FLOAT8E5M2, 19),
    "float8_e5m2fnuz": (ml_dtypes.float8_e5m2fnuz, TensorProto.FLOAT8E5M2FNUZ, 19),
}


def ints(values):
    return np.asarray(values).astype(np.int64)


def compare(model, feeds):
    """dnnx's outputs equal onnxruntime's (the reference evaluator's where onnxruntime has no
    kernel): the same values, or for the 1-byte float types the same bits (onnxruntime's Python
    gives float8e4m3fn as uint8 bytes)."""
    want, by = reference_outputs(model, feeds)
    got, _ = run_dnnx(model, feeds)
    for g, w in zip(got.values(), want):
        assert g.shape == w.shape
        if g.dtype != w.dtype and w.dtype == np.uint8 and g.dtype.itemsize == 1:
            np.testing.assert_array_equal(g.view(np.uint8), w, err_msg=by)
            continue
        assert g.dtype == w.dtype, (g.dtype, w.dtype, by)
        if g.dtype.itemsize == 1 and g.dtype.kind == "V":  # ml_dtypes' float8: the bits (NaN's too)
            np.testing.assert_array_equal(g.view(np.uint8), w.view(np.uint8), err_msg=by)
        else:
            np.testing.assert_array_equal(g.astype(np.float64), w.astype(np.float64), err_msg=by)
    return by


def quant_input(shape, seed=0, scale=40.0):
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32) * scale
    x.flat[:6] = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5]  # exact ties at scale 1 (rounding half to even)
    return x


@pytest.mark.parametrize("name", list(INT_TYPES))
@pytest.mark.parametrize("form", ["tensor", "axis", "blocked"])
def test_quantize_linear_integer_types(name, form):
    npt, _, first = INT_TYPES[name]
    opset = max(first, 21 if form == "blocked" else 13 if form == "axis" else first)
    x = quant_input((2, 6, 4))
    if form == "tensor":
        scale, attrs = np.array(1.0, np.float32), {}
    elif form == "axis":
        scale, attrs = np.array([1, 0.5, 2, 4, 8, 3], np.float32), {"axis": 1}
    else:
        scale, attrs = np.abs(np.random.default_rng(1).standard_normal((2, 2, 4))).astype(np.float32) + 0.5, \
            {"axis": 1, "block_size": 3}
    zp = (np.zeros(scale.shape) + (3 if np.issubdtype(np.dtype(npt), np.signedinteger) or name == "int4" else 5)
          ).astype(npt)
    model = node_model("QuantizeLinear", [("x", (TensorProto.FLOAT, list(x.shape))), ("s", scale), ("z", zp)],
                       ["y"], opset=opset, **attrs)
    compare(model, {"x": x})


@pytest.mark.parametrize("name", list(INT_TYPES) + ["int32"])
@pytest.mark.parametrize("form", ["tensor", "axis", "blocked"])
def test_dequantize_linear_integer_types(name, form):
    if name == "int32":
        npt, elem, first = np.int32, TensorProto.INT32, 10
    else:
        npt, elem, first = INT_TYPES[name]
    opset = max(first, 21 if form == "blocked" else 13 if form == "axis" else first)
    info = np.iinfo(np.int8 if name == "int4" else np.uint8 if name == "uint4" else npt)
    lo, hi = (-8, 7) if name == "int4" else (0, 15) if name == "uint4" else (max(info.min, -30000), min(info.max, 30000))
    x = np.random.default_rng(2).integers(lo, hi + 1, (2, 6, 4)).astype(npt)
    if form == "tensor":
        scale, attrs = np.array(0.25, np.float32), {}
    elif form == "axis":
        scale, attrs = np.array([1, 0.5, 2, 4, 8, 3], np.float32), {"axis": 1}
    else:
        scale, attrs = np.full((2, 2, 4), 0.75, np.float32), {"axis": -2, "block_size": 4}
    inputs = [("x", (elem, list(x.shape))), ("s", scale)]
    if name != "int32":
        inputs.append(("z", np.full(scale.shape, 1, npt)))
    model = node_model("DequantizeLinear", inputs, ["y"], opset=opset, **attrs)
    compare(model, {"x": x})


@pytest.mark.parametrize("name", list(FLOAT8_TYPES))
@pytest.mark.parametrize("saturate", [0, 1])
def test_quantize_linear_float8(name, saturate):
    npt, _, _ = FLOAT8_TYPES[name]
    x = quant_input((3, 5), scale=300.0)
    x[0, :3] = [1e6, -1e6, 0.0]  # past the range: saturate decides
    model = node_model("QuantizeLinear", [("x", (TensorProto.FLOAT, [3, 5])), ("s", np.array(2.0, np.float32)),
                                          ("z", np.zeros((), npt))], ["y"], opset=19, saturate=saturate)
    compare(model, {"x": x})


@pytest.mark.parametrize("name", list(FLOAT8_TYPES))
def test_dequantize_linear_float8(name):
    npt, elem, _ = FLOAT8_TYPES[name]
    x = (np.random.default_rng(3).standard_normal((4, 3)) * 20).astype(npt)
    model = node_model("DequantizeLinear", [("x", (elem, [4, 3])), ("s", np.array([0.5, 2, 4], np.float32))],
                       ["y"], opset=19, axis=1)
    compare(model, {"x": x})


def test_quantize_linear_opset10_defaults_to_uint8_and_rounds_ties_to_even():
    x = np.array([0.5, 1.5, 2.5, 3.5, -0.5, -1.5, 254.5, 255.5, 300, -3], np.float32)
    model = node_model("QuantizeLinear", [("x", (TensorProto.FLOAT, [10])), ("s", np.array(1, np.float32))],
                       ["y"], opset=10)
    compare(model, {"x": x})
    got, _ = run_dnnx(model, {"x": x})
    np.testing.assert_array_equal(got["y"], [0, 2, 2, 4, 0, 0, 254, 255, 255, 0])


@pytest.mark.parametrize("opset", [21, 23])
def test_quantize_linear_output_dtype(opset):
    x = quant_input((4, 4))
    model = node_model("QuantizeLinear", [("x", (TensorProto.FLOAT, [4, 4])), ("s", np.array(0.5, np.float32))],
                       ["y"], opset=opset, output_dtype=TensorProto.INT16)
    compare(model, {"x": x})


def test_quantize_and_dequantize_float16_via_float32():
    x = quant_input((3, 4)).astype(np.float16)
    q = node_model("QuantizeLinear", [("x", (TensorProto.FLOAT16, [3, 4])), ("s", np.array(0.5, np.float16)),
                                      ("z", np.array(-3, np.int8))], ["y"], opset=19)
    compare(q, {"x": x})
    xq = np.arange(-6, 6, dtype=np.int8).reshape(3, 4)
    dq = node_model("DequantizeLinear", [("x", (TensorProto.INT8, [3, 4])), ("s", np.array(0.5, np.float16)),
                                         ("z", np.array(1, np.int8))], ["y"], opset=19)
    compare(dq, {"x": xq})


def test_constant_weights_dequantize_at_load():
    """A QDQ weight (DequantizeLinear of an int8 initializer, per axis) folds at load: the plan
    keeps only the MatMul, and the values are the dequantized weight's product (onnxruntime's
    QDQ rewrite quantizes x as well: not the reference here)."""
    import dnnx
    from onnx import helper

    w = np.random.default_rng(4).integers(-127, 128, (4, 3)).astype(np.int8)
    nodes = [helper.make_node("DequantizeLinear", ["wq", "ws", "wz"], ["w"], axis=1, name="dq"),
             helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])],
                              [helper.make_tensor("wq", TensorProto.INT8, [4, 3], w.flatten()),
                               helper.make_tensor("ws", TensorProto.FLOAT, [3], [0.1, 0.2, 0.3]),
                               helper.make_tensor("wz", TensorProto.INT8, [3], [0, 1, -1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    x = np.random.default_rng(5).standard_normal((2, 4)).astype(np.float32)
    dequantized = (w.astype(np.float32) - np.array([0, 1, -1], np.float32)) * np.array([0.1, 0.2, 0.3], np.float32)
    m = dnnx.load(model)
    np.testing.assert_allclose(m.run(x), x @ dequantized, rtol=1e-5, atol=1e-5)
    assert [row["op"] for row in m.plan()] == ["MatMul"]


@pytest.mark.parametrize("case, match", [
    ("axis_scale_wrong_length", r"per-axis scale must be 1-D of x.shape\[axis\] = 6"),
    ("blocked_wrong_shape", r"blocked scale \(block_size 4, axis 1\) of x \[2,6\] must be \[2,2\]"),
    ("zero_point_shape", r"zero point's shape \[3\] differs from the scale's \[6\]"),
])
def test_bad_quantization_parameters_name_the_node_and_shapes(case, match):
    import dnnx

    scale = {"axis_scale_wrong_length": np.ones(5, np.float32), "blocked_wrong_shape": np.ones((2, 3), np.float32),
             "zero_point_shape": np.ones(6, np.float32)}[case]
    inputs = [("x", (TensorProto.FLOAT, [2, 6])), ("s", scale)]
    if case == "zero_point_shape":
        inputs.append(("z", np.zeros(3, np.int8)))
    attrs = {"block_size": 4} if case == "blocked_wrong_shape" else {}
    model = node_model("QuantizeLinear", inputs, ["y"], opset=21, axis=1, **attrs)
    with pytest.raises(dnnx.InvalidModelError, match=r"node 'n' \(QuantizeLinear\): .*" + match):
        dnnx.load(model)


@pytest.mark.parametrize("op", ["QuantizeLinear", "DequantizeLinear"])
@pytest.mark.parametrize("axis_scale", [False, True])
def test_empty_dims_match_onnxruntime(op, axis_scale):
    """tests/test_empty_every_op.py's check (onnxruntime passes none of onnx's node cases of these)."""
    elem = TensorProto.FLOAT if op == "QuantizeLinear" else TensorProto.INT8
    scale = np.array([0.5, 2, 4], np.float32) if axis_scale else np.array(0.5, np.float32)
    model = node_model(op, [("x", (elem, [0, 3])), ("s", scale), ("z", np.zeros(scale.shape, np.int8))], ["y"],
                       opset=13, axis=1)
    x = np.zeros((0, 3), np.float32 if op == "QuantizeLinear" else np.int8)
    assert compare(model, {"x": x}) == "onnxruntime"


@pytest.mark.parametrize("npt, elem", [(np.uint8, TensorProto.UINT8), (np.int8, TensorProto.INT8)])
@pytest.mark.parametrize("with_zp", [True, False])
def test_dequantize_linear_per_tensor_bytes_long(npt, elem, with_zp):
    """The per-tensor 8-bit form's vectorized loop (quantize_linear_cpu.cc: dequantize_bytes) over a
    tensor long enough for its full vectors and a tail, bit for bit against onnxruntime."""
    info = np.iinfo(npt)
    x = np.random.default_rng(4).integers(info.min, info.max + 1, (3, 7, 53)).astype(npt)
    inputs = [("x", (elem, list(x.shape))), ("s", np.array(0.0371, np.float32))]
    if with_zp:
        inputs.append(("z", np.array(-5 if npt == np.int8 else 131, npt)))
    model = node_model("DequantizeLinear", inputs, ["y"], opset=13)
    compare(model, {"x": x})
