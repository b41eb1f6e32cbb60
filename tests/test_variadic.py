"""Sum, Max, Min against onnxruntime: one to four inputs, broadcasting, float32, int32, int64."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import dnnx
from ort_check import assert_matches_ort, make_model, rand

SHAPE_SETS = {
    "one": [[2, 3]],
    "same": [[2, 3, 4], [2, 3, 4], [2, 3, 4]],
    "bias_like": [[2, 4, 3, 3], [4, 1, 1]],
    "scalar_and_row": [[], [3, 5], [5]],
    "both_ways": [[3, 1, 4], [1, 5, 1], [5, 4], [1]],
    "first_input_smaller": [[4], [2, 3, 4]],
}


def variadic_model(op, shapes, elem=TensorProto.FLOAT, name="v"):
    names = [f"x{i}" for i in range(len(shapes))]
    node = helper.make_node(op, names, ["y"], name=name)
    return make_model([node], [(n, s, elem) for n, s in zip(names, shapes)], [("y", None, elem)])


@pytest.mark.parametrize("op", ["Sum", "Max", "Min"])
@pytest.mark.parametrize("shapes", list(SHAPE_SETS))
def test_variadic_matches_ort(op, shapes):
    shape_list = SHAPE_SETS[shapes]
    feeds = {f"x{i}": rand(*s, seed=i) for i, s in enumerate(shape_list)}
    assert_matches_ort(variadic_model(op, shape_list), feeds)


@pytest.mark.parametrize("op", ["Max", "Min"])  # ONNX's Sum is float-only
@pytest.mark.parametrize("elem,dtype", [(TensorProto.INT32, np.int32), (TensorProto.INT64, np.int64)])
def test_variadic_integers(op, elem, dtype):
    rng = np.random.default_rng(0)
    shapes = [[2, 3], [3], [2, 1]]
    feeds = {f"x{i}": rng.integers(-50, 50, s).astype(dtype) for i, s in enumerate(shapes)}
    got = assert_matches_ort(variadic_model(op, shapes, elem), feeds)
    assert got["y"].dtype == dtype


@pytest.mark.parametrize("op,fn", [("Max", np.maximum), ("Min", np.minimum)])
def test_max_min_propagate_nan(op, fn):
    a = np.array([1.0, np.nan, 3.0, np.nan], np.float32)
    b = np.array([np.nan, 2.0, 1.0, np.nan], np.float32)
    got = dnnx.load(variadic_model(op, [[4], [4]])).run(a, b)
    np.testing.assert_array_equal(got, fn(a, b))


def test_variadic_shapes_that_do_not_broadcast():
    model = make_model([helper.make_node("Sum", ["a", "b"], ["y"], name="sum_bad")],
                       [("a", [2, 3]), ("b", [4, 3])], [("y", [2, 3])])
    with pytest.raises(dnnx.InvalidModelError, match=r"sum_bad.*\[2,3\] and \[4,3\] cannot be broadcast"):
        dnnx.load(model)
