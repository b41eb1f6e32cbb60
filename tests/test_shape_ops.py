"""Shape and ConstantOfShape. Shape runs as a kernel only where its input's shape varies (a
symbolic batch): with a static shape the importer folds it. ConstantOfShape's input must be
constant, so the importer always folds it: its kernel is reached through the core directly."""
import numpy as np
import pytest
from onnx import TensorProto, helper

from dnnx._native import core
from ort_check import assert_matches_ort, make_model, rand


@pytest.mark.parametrize("attrs", [{}, {"start": 1}, {"end": -1}, {"start": -3, "end": 3}, {"start": 5},
                                   {"start": 2, "end": 1}])
def test_shape_of_a_symbolic_batch(attrs):
    node = helper.make_node("Shape", ["x"], ["s"], **attrs)
    model = make_model([node], [("x", ["N", 3, 4, 5])], [("s", None, TensorProto.INT64)], opset=15)
    for batch in (1, 6):
        got = assert_matches_ort(model, {"x": rand(batch, 3, 4, 5)})
        assert got["s"].dtype == np.int64


def test_shape_feeds_integer_arithmetic():
    # Shape -> Gather -> Cast -> Mul: a float computed from the batch size.
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Gather", ["s", "zero"], ["n"]),
             helper.make_node("Cast", ["n"], ["nf"], to=TensorProto.FLOAT),
             helper.make_node("Mul", ["x", "nf"], ["y"])]
    model = make_model(nodes, [("x", ["N", 2])], [("y", None)], {"zero": np.array(0, np.int64)})
    assert_matches_ort(model, {"x": rand(3, 2)})


@pytest.mark.parametrize("value,dtype", [(None, np.float32), (np.array([2.5], np.float32), np.float32),
                                         (np.array([7], np.int64), np.int64), (np.array([-3], np.int32), np.int32)])
def test_constant_of_shape_kernel(value, dtype):
    attrs = {} if value is None else {"value": ("tensor", value)}
    ir = {"opset": 17, "inputs": [], "outputs": ["y"], "constants": {"shape": np.array([2, 3, 4], np.int64)},
          "nodes": [("ConstantOfShape", "fill", ["shape"], ["y"], attrs)]}
    (y,) = core.Engine(ir, "cpu").run([])
    want = np.full((2, 3, 4), 0 if value is None else value[0], dtype)
    assert y.dtype == want.dtype
    np.testing.assert_array_equal(y, want)
