"""The reductions and scans of issue #35 against onnxruntime on the CPU: ReduceL1,
ReduceSumSquare, ReduceLogSum, ReduceLogSumExp (axes as attribute and as input, negative axes,
keepdims, noop_with_empty_axes, empty sets), CumSum and CumProd (exclusive, reverse, negative
axis, integer types) and Hardmax (every axis, both opset meanings, ties)."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import dnnx
from ort_check import assert_matches_ort, make_model

ELEM = {np.float32: TensorProto.FLOAT, np.int32: TensorProto.INT32, np.int64: TensorProto.INT64}
REDUCE_OPS = ["ReduceL1", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"]


def reduce_model(op, shape, axes, keepdims=1, opset=18, dtype=np.float32, noop=None):
    elem = ELEM[dtype]
    attrs = {"keepdims": keepdims}
    if noop is not None:
        attrs["noop_with_empty_axes"] = noop
    inits = {}
    inputs = ["x"]
    if opset >= 18 and axes is not None:
        inits["axes"] = np.array(axes, np.int64)
        inputs.append("axes")
    elif axes is not None:
        attrs["axes"] = axes
    node = helper.make_node(op, inputs, ["y"], name=f"{op.lower()}_node", **attrs)
    return make_model([node], [("x", shape, elem)], [("y", None, elem)], inits, opset=opset)


def positive(shape, seed=0):
    return np.random.default_rng(seed).uniform(0.1, 3.0, shape).astype(np.float32)


@pytest.mark.parametrize("op", REDUCE_OPS)
@pytest.mark.parametrize("axes,keepdims", [(None, 1), ([1], 0), ([-1, 0], 1), ([0, 2], 0), ([-2], 1)], ids=str)
@pytest.mark.parametrize("opset", [13, 18])
def test_reduce(op, axes, keepdims, opset):
    assert_matches_ort(reduce_model(op, [3, 4, 5], axes, keepdims, opset), {"x": positive([3, 4, 5])})


@pytest.mark.parametrize("op", REDUCE_OPS)
def test_reduce_noop_with_empty_axes(op):
    assert_matches_ort(reduce_model(op, [2, 3], [], noop=1), {"x": positive([2, 3])})


@pytest.mark.parametrize("op", REDUCE_OPS)
def test_reduce_empty_set(op):
    model = reduce_model(op, [2, 0, 4], [1], keepdims=1)
    assert_matches_ort(model, {"x": np.zeros([2, 0, 4], np.float32)})


def test_reduce_log_sum_exp_is_stable():
    x = np.array([[1000.0, 1000.0, -1000.0], [-np.inf, -np.inf, -np.inf]], np.float32)
    got = dnnx.load(reduce_model("ReduceLogSumExp", [2, 3], [1], 0)).run_dict({"x": x})["y"]
    np.testing.assert_allclose(got, [1000.0 + np.log(2.0), -np.inf], rtol=1e-6)


@pytest.mark.parametrize("op", ["ReduceL1", "ReduceSumSquare", "ReduceSum", "ReduceProd"])
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_reduce_integers(op, dtype):
    x = np.random.default_rng(4).integers(-50, 50, (3, 4)).astype(dtype)
    assert_matches_ort(reduce_model(op, [3, 4], [1], 1, dtype=dtype), {"x": x})


def scan_model(op, shape, axis, dtype=np.float32, axis_dtype=np.int64, opset=26, **attrs):
    elem = ELEM[dtype]
    node = helper.make_node(op, ["x", "axis"], ["y"], name=f"{op.lower()}_node", **attrs)
    return make_model([node], [("x", shape, elem)], [("y", None, elem)], {"axis": np.array(axis, axis_dtype)},
                      opset=opset)


@pytest.mark.parametrize("op", ["CumSum", "CumProd"])
@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
@pytest.mark.parametrize("exclusive,reverse", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_scan(op, axis, exclusive, reverse):
    x = np.random.default_rng(5).uniform(0.5, 1.5, (2, 3, 4)).astype(np.float32)
    assert_matches_ort(scan_model(op, [2, 3, 4], axis, exclusive=exclusive, reverse=reverse), {"x": x})


@pytest.mark.parametrize("op", ["CumSum", "CumProd"])
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_scan_integers(op, dtype):
    x = np.random.default_rng(6).integers(-4, 5, (3, 5)).astype(dtype)
    assert_matches_ort(scan_model(op, [3, 5], 1, dtype, axis_dtype=np.int32, reverse=1), {"x": x})


def test_scan_axis_out_of_range():
    with pytest.raises(dnnx.InvalidModelError, match="cumsum_node.*axis 2 is out of range"):
        dnnx.load(scan_model("CumSum", [3, 5], 2))


def hardmax_model(shape, opset, **attrs):
    node = helper.make_node("Hardmax", ["x"], ["y"], name="hardmax_node", **attrs)
    return make_model([node], [("x", shape)], [("y", None)], opset=opset)


@pytest.mark.parametrize("opset", [11, 13])
@pytest.mark.parametrize("axis", [None, 0, 1, 2, -1])
def test_hardmax(opset, axis):
    attrs = {} if axis is None else {"axis": axis}
    x = np.random.default_rng(7).integers(0, 4, (2, 3, 4)).astype(np.float32)  # ties: the first wins
    assert_matches_ort(hardmax_model([2, 3, 4], opset, **attrs), {"x": x})
