"""GlobalAveragePool and GlobalMaxPool against onnxruntime: 1-D to 3-D planes, 1x1 planes."""
import pytest
from onnx import helper

import dnnx
from ort_check import assert_matches_ort, make_model, rand


def pool_model(op, x_shape):
    node = helper.make_node(op, ["x"], ["y"], name="pool")
    return make_model([node], [("x", list(x_shape))], [("y", None)])


@pytest.mark.parametrize("op", ["GlobalAveragePool", "GlobalMaxPool"])
@pytest.mark.parametrize("x_shape", [[2, 3, 7], [2, 5, 6, 7], [1, 4, 3, 4, 5], [3, 16, 1, 1]])
def test_global_pool_matches_ort(op, x_shape):
    assert_matches_ort(pool_model(op, x_shape), {"x": rand(*x_shape)})


def test_global_pool_plan_row():
    (row,) = dnnx.load(pool_model("GlobalAveragePool", [2, 3, 8, 8])).plan()
    assert row["op"] == "GlobalAveragePool" and row["outputs"] == [[2, 3, 1, 1]]
