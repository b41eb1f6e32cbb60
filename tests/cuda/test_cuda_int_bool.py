"""Integer and bool tensors as run-time values on CUDA (issue #14): the typed elementwise kernels
(engine/backends/cuda/elementwise/typed_kernels.cu), Where, Range, Cast to and from bool, Gather
and Concat of int and bool data, against onnxruntime on device="cuda", with the CPU backend's
models of tests/test_int_bool_ops.py."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import dnnx
from ort_check import make_model, run_ort
from test_int_bool_ops import (ELEM, INTS, NUMBERS, SHAPES, binary_model, few_values, range_from_shape_model, values,
                               where_model)


def assert_cuda_matches_ort(model, feeds, rtol=1e-5, atol=1e-6):
    """The model on CUDA (fp32) against onnxruntime: same values, same dtypes; returns dnnx's."""
    want = run_ort(model, feeds)
    m = dnnx.load(model, device="cuda", precision="fp32")
    for _ in range(3):  # eager, captured, replayed (Note [device runs])
        got = m.run_dict(feeds)
        for name, ref in want.items():
            assert got[name].dtype == ref.dtype, name
            assert got[name].shape == ref.shape, name
            np.testing.assert_allclose(got[name], ref, rtol=rtol, atol=atol, err_msg=name)
    return got


def test_typed_kernels_are_in_the_plan():
    m = dnnx.load(binary_model("Add", [2, 3], [3], np.int64), device="cuda")
    assert "typed broadcast kernel" in str(m.plan())


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div"])
@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_integer_arithmetic_on_cuda(op, dtype, shapes):
    feeds = {"a": values(shapes[0], dtype, 1), "b": values(shapes[1], dtype, 2, nonzero=True)}
    assert_cuda_matches_ort(binary_model(op, *shapes, dtype), feeds)


@pytest.mark.parametrize("fmod", [0, 1])
@pytest.mark.parametrize("dtype", INTS)
def test_integer_mod_on_cuda(fmod, dtype):
    feeds = {"a": values([3, 4, 5], dtype, 3), "b": values([4, 1], dtype, 4, nonzero=True)}
    assert_cuda_matches_ort(binary_model("Mod", [3, 4, 5], [4, 1], dtype, fmod=fmod), feeds)


def test_float_mod_on_cuda():
    feeds = {"a": values([3, 4], np.float32, 5), "b": values([4], np.float32, 6, nonzero=True)}
    assert_cuda_matches_ort(binary_model("Mod", [3, 4], [4], np.float32, fmod=1), feeds)


def test_integer_div_by_zero_and_min_on_cuda():
    a = np.array([7, -7, 5, np.iinfo(np.int64).min], np.int64)
    b = np.array([-2, 2, 0, -1], np.int64)
    got = dnnx.load(binary_model("Div", [4], [4], np.int64), device="cuda").run(a, b)
    np.testing.assert_array_equal(got, np.array([-3, -3, 0, np.iinfo(np.int64).min], np.int64))


@pytest.mark.parametrize("op", ["Neg", "Abs"])
@pytest.mark.parametrize("dtype", NUMBERS)
def test_neg_abs_on_cuda(op, dtype):
    model = make_model([helper.make_node(op, ["x"], ["y"])], [("x", [3, 5], ELEM[dtype])], [("y", None, ELEM[dtype])])
    assert_cuda_matches_ort(model, {"x": values([3, 5], dtype, 7)})


@pytest.mark.parametrize("op", ["Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"])
@pytest.mark.parametrize("dtype", NUMBERS)
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_comparisons_on_cuda(op, dtype, shapes):
    feeds = {"a": few_values(shapes[0], dtype, 8), "b": few_values(shapes[1], dtype, 9)}
    assert_cuda_matches_ort(binary_model(op, *shapes, dtype, out_elem=TensorProto.BOOL), feeds)


@pytest.mark.parametrize("op", ["And", "Or", "Xor", "Equal"])
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_logical_on_cuda(op, shapes):
    feeds = {"a": values(shapes[0], np.bool_, 1), "b": values(shapes[1], np.bool_, 2)}
    assert_cuda_matches_ort(binary_model(op, *shapes, np.bool_), feeds)


def test_not_on_cuda():
    model = make_model([helper.make_node("Not", ["x"], ["y"])], [("x", [2, 5], TensorProto.BOOL)],
                       [("y", None, TensorProto.BOOL)])
    assert_cuda_matches_ort(model, {"x": values([2, 5], np.bool_, 3)})


@pytest.mark.parametrize("dtype", NUMBERS + [np.bool_])
@pytest.mark.parametrize("shapes", [([2, 3], [2, 3], [2, 3]), ([3, 1], [1, 4], [4]), ([2, 1, 3], [], [5, 1])], ids=str)
def test_where_on_cuda(dtype, shapes):
    feeds = {"c": values(shapes[0], np.bool_, 1), "x": values(shapes[1], dtype, 2), "y": values(shapes[2], dtype, 3)}
    if dtype == np.bool_:  # onnxruntime has no bool Where: numpy's
        got = dnnx.load(where_model(*shapes, dtype), device="cuda").run(feeds["c"], feeds["x"], feeds["y"])
        np.testing.assert_array_equal(got, np.where(feeds["c"], feeds["x"], feeds["y"]))
    else:
        assert_cuda_matches_ort(where_model(*shapes, dtype), feeds)


@pytest.mark.parametrize("src", NUMBERS + [np.bool_])
@pytest.mark.parametrize("dst", NUMBERS + [np.bool_])
def test_cast_on_cuda(src, dst):
    x = values([3, 4], src, 4)
    model = make_model([helper.make_node("Cast", ["x"], ["y"], to=ELEM[dst])], [("x", [3, 4], ELEM[src])],
                       [("y", None, ELEM[dst])])
    assert_cuda_matches_ort(model, {"x": x})


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.bool_])
def test_gather_and_concat_on_cuda(dtype):
    elem = ELEM[dtype]
    nodes = [helper.make_node("Gather", ["x", "i"], ["g"], axis=1),
             helper.make_node("Concat", ["g", "x"], ["y"], axis=1)]
    model = make_model(nodes, [("x", [2, 5], elem), ("i", [3], TensorProto.INT64)], [("y", None, elem)])
    assert_cuda_matches_ort(model, {"x": values([2, 5], dtype, 5), "i": np.array([4, -1, 0], np.int64)})


def test_int_and_bool_graph_io_on_cuda():
    nodes = [helper.make_node("Cast", ["a"], ["a64"], to=TensorProto.INT64),
             helper.make_node("Mul", ["a64", "b"], ["prod"]),
             helper.make_node("Greater", ["prod", "b"], ["big"]),
             helper.make_node("Where", ["big", "prod", "b"], ["sel"])]
    model = make_model(nodes, [("a", [2, 3], TensorProto.INT32), ("b", [3], TensorProto.INT64)],
                       [("prod", [2, 3], TensorProto.INT64), ("big", [2, 3], TensorProto.BOOL),
                        ("sel", [2, 3], TensorProto.INT64)])
    feeds = {"a": np.arange(6, dtype=np.int32).reshape(2, 3) - 2, "b": np.array([3, -1, 2], np.int64)}
    assert_cuda_matches_ort(model, feeds)


def test_bool_output_as_a_device_array():
    model = make_model([helper.make_node("Not", ["x"], ["y"])], [("x", [4], TensorProto.BOOL)],
                       [("y", [4], TensorProto.BOOL)])
    m = dnnx.load(model, device="cuda")
    x = np.array([True, False, False, True])
    out = m.run(x, output="device")
    assert out.__cuda_array_interface__["typestr"] == "|b1"
    np.testing.assert_array_equal(m.run(out), x)  # a device bool input, fed back


@pytest.mark.parametrize("dtype", NUMBERS)
def test_range_of_a_shape_on_cuda(dtype):
    m = dnnx.load(range_from_shape_model(dtype, 1, 2), device="cuda")
    for batch in (1, 4, 7):
        x = np.full([batch], 0.5, np.float32)
        want = np.arange(1, batch, 2, dtype=dtype).astype(np.float32) + 0.5
        np.testing.assert_allclose(m.run(x), want)
