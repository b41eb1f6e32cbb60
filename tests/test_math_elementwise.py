"""The elementwise math ops of issue #35 against onnxruntime on the CPU: the trigonometric and
hyperbolic functions, Ceil, Floor, Round (half to even), Sign, IsNaN, IsInf, Softsign, Celu,
ThresholdedRelu, Shrink, Swish, Mean (variadic, broadcast), BitShift (signed, negative and wide
shifts) and the Bitwise ops, with their attributes, special values and errors."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import dnnx
from ort_check import assert_matches_ort, make_model

ELEM = {np.float32: TensorProto.FLOAT, np.int32: TensorProto.INT32, np.int64: TensorProto.INT64}


def unary_model(op, shape, dtype=np.float32, out_elem=None, opset=22, **attrs):
    node = helper.make_node(op, ["x"], ["y"], name=f"{op.lower()}_node", **attrs)
    return make_model([node], [("x", shape, ELEM[dtype])], [("y", None, out_elem or ELEM[dtype])], opset=opset)


# each op's domain, so that every value is finite in both engines
DOMAIN = {"Asin": (-0.99, 0.99), "Acos": (-0.99, 0.99), "Atanh": (-0.99, 0.99), "Acosh": (1.01, 6.0),
          "Tan": (-1.4, 1.4), "Sinh": (-8, 8), "Cosh": (-8, 8)}


@pytest.mark.parametrize("op", ["Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh",
                                "Atanh", "Ceil", "Floor", "Softsign"])
def test_float_unary(op):
    lo, hi = DOMAIN.get(op, (-6.0, 6.0))
    x = np.random.default_rng(1).uniform(lo, hi, (3, 4, 5)).astype(np.float32)
    assert_matches_ort(unary_model(op, [3, 4, 5]), {"x": x})


def test_round_is_half_to_even_and_keeps_specials():
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 2.4999, -0.0, np.inf, -np.inf, np.nan], np.float32)
    got = assert_matches_ort(unary_model("Round", [12]), {"x": x})["y"]
    np.testing.assert_array_equal(got[:8], [-2, -2, -0, 0, 2, 2, 4, 2])


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64])
def test_sign(dtype):
    x = np.array([-3, -0, 0, 2, 7, -1], dtype)
    assert_matches_ort(unary_model("Sign", [6], dtype), {"x": x})


def test_sign_of_specials():
    x = np.array([np.inf, -np.inf, -0.0, 1e-30, np.nan], np.float32)
    assert_matches_ort(unary_model("Sign", [5]), {"x": x})


@pytest.mark.parametrize("attrs", [{}, {"detect_positive": 0}, {"detect_negative": 0},
                                   {"detect_positive": 0, "detect_negative": 0}])
def test_isinf(attrs):
    x = np.array([np.inf, -np.inf, np.nan, 0.0, 3.4e38, -1.0], np.float32)
    got = assert_matches_ort(unary_model("IsInf", [6], out_elem=TensorProto.BOOL, **attrs), {"x": x})["y"]
    assert got.dtype == np.bool_


def test_isnan():
    x = np.array([[np.nan, 1.0, -np.inf], [0.0, np.nan, np.inf]], np.float32)
    assert_matches_ort(unary_model("IsNaN", [2, 3], out_elem=TensorProto.BOOL), {"x": x})


@pytest.mark.parametrize("op,attrs", [("Celu", {}), ("Celu", {"alpha": 0.3}), ("ThresholdedRelu", {}),
                                      ("ThresholdedRelu", {"alpha": -0.5}), ("Shrink", {}),
                                      ("Shrink", {"lambd": 1.2, "bias": 0.4}), ("Swish", {}),
                                      ("Swish", {"alpha": 1.702})])
def test_activation_attributes(op, attrs):
    x = np.random.default_rng(2).uniform(-4, 4, (2, 50)).astype(np.float32)
    assert_matches_ort(unary_model(op, [2, 50], opset=24, **attrs), {"x": x})


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_shrink_integers(dtype):
    x = np.arange(-6, 7, dtype=dtype)
    assert_matches_ort(unary_model("Shrink", [13], dtype, lambd=1.5, bias=1.5), {"x": x})


@pytest.mark.parametrize("shapes", [[[2, 3]], [[2, 3], [2, 3]], [[4, 1, 3], [3], [2, 1]], [[], [2, 2]]], ids=str)
def test_mean_broadcasts(shapes):
    names = [f"x{i}" for i in range(len(shapes))]
    node = helper.make_node("Mean", names, ["y"], name="mean_node")
    model = make_model([node], [(n, s) for n, s in zip(names, shapes)], [("y", None)], opset=13)
    feeds = {n: np.asarray(np.random.default_rng(i).standard_normal(s), np.float32) for i, (n, s) in
             enumerate(zip(names, shapes))}
    assert_matches_ort(model, feeds)


def test_mean_refuses_integers():
    node = helper.make_node("Mean", ["a", "b"], ["y"], name="mean_node")
    model = make_model([node], [("a", [2], TensorProto.INT32), ("b", [2], TensorProto.INT32)],
                       [("y", None, TensorProto.INT32)], opset=13)
    with pytest.raises(dnnx.UnsupportedModelError, match="mean_node"):
        dnnx.load(model)


def binary_model(op, a_shape, b_shape, dtype, opset=18, **attrs):
    node = helper.make_node(op, ["a", "b"], ["y"], name=f"{op.lower()}_node", **attrs)
    elem = ELEM[dtype]
    return make_model([node], [("a", a_shape, elem), ("b", b_shape, elem)], [("y", None, elem)], opset=opset)


@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_bitshift_signed_negative_and_wide(direction, dtype):
    bits = np.iinfo(dtype).bits
    a = np.array([1, -1, -8, 12345, np.iinfo(dtype).min, np.iinfo(dtype).max, -7, 5], dtype)
    b = np.array([3, 1, 2, bits - 1, 1, bits, -1, bits + 5], dtype)
    assert_matches_ort(binary_model("BitShift", [8], [8], dtype, opset=28, direction=direction), {"a": a, "b": b})


def test_bitshift_broadcasts():
    a = np.arange(-12, 12, dtype=np.int64).reshape(2, 3, 4)
    b = np.array([0, 1, 2, 3], np.int64)
    assert_matches_ort(binary_model("BitShift", [2, 3, 4], [4], np.int64, opset=28, direction="RIGHT"),
                       {"a": a, "b": b})


@pytest.mark.parametrize("op", ["BitwiseAnd", "BitwiseOr", "BitwiseXor"])
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("shapes", [([3, 4], [3, 4]), ([2, 3, 4], [4]), ([3, 1], [1, 5]), ([], [2])], ids=str)
def test_bitwise_binary(op, dtype, shapes):
    rng = np.random.default_rng(3)
    info = np.iinfo(dtype)
    feeds = {"a": np.asarray(rng.integers(info.min, info.max, shapes[0], dtype=dtype)),
             "b": np.asarray(rng.integers(info.min, info.max, shapes[1], dtype=dtype))}
    assert_matches_ort(binary_model(op, *shapes, dtype), feeds)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_bitwise_not(dtype):
    x = np.array([[0, -1, 5], [np.iinfo(dtype).min, np.iinfo(dtype).max, 77]], dtype)
    assert_matches_ort(unary_model("BitwiseNot", [2, 3], dtype, opset=18), {"x": x})


def test_bitwise_refuses_floats():
    with pytest.raises(dnnx.UnsupportedModelError, match="bitwiseand_node.*int32 or int64"):
        dnnx.load(binary_model("BitwiseAnd", [2], [2], np.float32))


def test_trig_refuses_integers():
    # onnx's checker refuses the model, so build it unchecked
    node = helper.make_node("Sin", ["x"], ["y"], name="sin_node")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.INT32, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.INT32, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    with pytest.raises(dnnx.UnsupportedModelError, match="sin_node"):
        dnnx.load(model)
