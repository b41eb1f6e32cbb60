"""Integer and bool tensors as run-time values (issue #14) against onnxruntime on the CPU: the
arithmetic (Add, Sub, Mul, Div, Mod, Neg, Abs), comparisons (Equal, Less, Greater, LessOrEqual,
GreaterOrEqual), logic (Not, And, Or, Xor), Where, Cast to and from bool, Gather and Concat of
int and bool data, Range, with broadcasting, and int/bool graph inputs and outputs through run."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import dnnx
from ort_check import assert_matches_ort, make_model, run_ort

ELEM = {np.float32: TensorProto.FLOAT, np.int32: TensorProto.INT32, np.int64: TensorProto.INT64,
        np.bool_: TensorProto.BOOL}
NUMBERS = [np.float32, np.int32, np.int64]
INTS = [np.int32, np.int64]
# (A's shape, B's shape): same, scalar, bias-like, both ways, rank-0 against a matrix
SHAPES = [([2, 3, 4], [2, 3, 4]), ([2, 3], [1]), ([2, 4, 3, 3], [4, 1, 1]), ([3, 1, 4], [1, 5, 1]), ([], [3, 2])]


def values(shape, dtype, seed=0, nonzero=False):
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    if dtype == np.float32:
        v = rng.uniform(-10, 10, shape).astype(np.float32)
    else:
        v = rng.integers(-20, 20, shape).astype(dtype)
    if nonzero:
        v[v == 0] = 3
    return np.asarray(v)


def few_values(shape, dtype, seed=0):
    """Values from {0, 1, 2} (or 0.0, 1.0, 2.0), so that equal pairs happen."""
    return np.asarray(np.asarray(values(shape, dtype, seed)) % 3).astype(dtype)


def binary_model(op, a_shape, b_shape, dtype, out_elem=None, **attrs):
    elem = ELEM[dtype]
    node = helper.make_node(op, ["a", "b"], ["y"], name=f"{op.lower()}_node", **attrs)
    return make_model([node], [("a", a_shape, elem), ("b", b_shape, elem)], [("y", None, out_elem or elem)])


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div"])
@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_integer_arithmetic(op, dtype, shapes):
    feeds = {"a": values(shapes[0], dtype, 1), "b": values(shapes[1], dtype, 2, nonzero=True)}
    got = assert_matches_ort(binary_model(op, *shapes, dtype), feeds)
    assert got["y"].dtype == dtype


@pytest.mark.parametrize("fmod", [0, 1])
@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("shapes", SHAPES[:4], ids=str)
def test_integer_mod(fmod, dtype, shapes):
    feeds = {"a": values(shapes[0], dtype, 3), "b": values(shapes[1], dtype, 4, nonzero=True)}
    assert_matches_ort(binary_model("Mod", *shapes, dtype, fmod=fmod), feeds)


@pytest.mark.parametrize("dtype", INTS)
def test_mod_sign_semantics(dtype):
    """fmod=0 takes the divisor's sign (Python's %), fmod=1 the dividend's (C's fmod)."""
    a = np.array([-7, 7, -7, 7, 6, -6], dtype)
    b = np.array([3, -3, -3, 3, 3, -3], dtype)
    floor = dnnx.load(binary_model("Mod", [6], [6], dtype, fmod=0)).run(a, b)
    trunc = dnnx.load(binary_model("Mod", [6], [6], dtype, fmod=1)).run(a, b)
    np.testing.assert_array_equal(floor, np.array([2, -2, -1, 1, 0, 0], dtype))
    np.testing.assert_array_equal(trunc, np.array([-1, 1, -1, 1, 0, 0], dtype))


def test_float_mod():
    feeds = {"a": values([3, 4], np.float32, 5), "b": values([4], np.float32, 6, nonzero=True)}
    assert_matches_ort(binary_model("Mod", [3, 4], [4], np.float32, fmod=1), feeds)
    # fmod=0 on floats is numpy.mod (the newest opsets; onnxruntime refuses it)
    got = dnnx.load(binary_model("Mod", [3, 4], [4], np.float32, fmod=0)).run(feeds["a"], feeds["b"])
    np.testing.assert_allclose(got, np.mod(feeds["a"], feeds["b"]), rtol=1e-5, atol=1e-5)


def test_integer_div_truncates_and_survives_zero():
    a = np.array([7, -7, 7, -7, 5, np.iinfo(np.int32).min], np.int32)
    b = np.array([2, 2, -2, -2, 0, -1], np.int32)
    got = dnnx.load(binary_model("Div", [6], [6], np.int32)).run(a, b)
    np.testing.assert_array_equal(got, np.array([3, -3, -3, 3, 0, np.iinfo(np.int32).min], np.int32))


@pytest.mark.parametrize("op", ["Neg", "Abs"])
@pytest.mark.parametrize("dtype", NUMBERS)
def test_neg_abs(op, dtype):
    model = make_model([helper.make_node(op, ["x"], ["y"])], [("x", [3, 5], ELEM[dtype])], [("y", None, ELEM[dtype])])
    got = assert_matches_ort(model, {"x": values([3, 5], dtype, 7)})
    assert got["y"].dtype == dtype


@pytest.mark.parametrize("op", ["Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"])
@pytest.mark.parametrize("dtype", NUMBERS)
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_comparisons(op, dtype, shapes):
    # few distinct values, so that equality happens
    feeds = {"a": few_values(shapes[0], dtype, 8), "b": few_values(shapes[1], dtype, 9)}
    got = assert_matches_ort(binary_model(op, *shapes, dtype, out_elem=TensorProto.BOOL), feeds)
    assert got["y"].dtype == np.bool_


def test_equal_on_bool():
    feeds = {"a": values([4, 3], np.bool_, 1), "b": values([3], np.bool_, 2)}
    assert_matches_ort(binary_model("Equal", [4, 3], [3], np.bool_), feeds)


def test_comparisons_with_nan_are_false():
    a = np.array([np.nan, 1.0, np.nan], np.float32)
    b = np.array([np.nan, np.nan, 1.0], np.float32)
    for op in ["Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"]:
        got = dnnx.load(binary_model(op, [3], [3], np.float32, out_elem=TensorProto.BOOL)).run(a, b)
        np.testing.assert_array_equal(got, [False, False, False], err_msg=op)


@pytest.mark.parametrize("op", ["And", "Or", "Xor"])
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_logical(op, shapes):
    feeds = {"a": values(shapes[0], np.bool_, 1), "b": values(shapes[1], np.bool_, 2)}
    got = assert_matches_ort(binary_model(op, *shapes, np.bool_), feeds)
    assert got["y"].dtype == np.bool_


def test_not():
    model = make_model([helper.make_node("Not", ["x"], ["y"])], [("x", [2, 5], TensorProto.BOOL)],
                       [("y", None, TensorProto.BOOL)])
    assert_matches_ort(model, {"x": values([2, 5], np.bool_, 3)})


def where_model(c_shape, x_shape, y_shape, dtype):
    elem = ELEM[dtype]
    node = helper.make_node("Where", ["c", "x", "y"], ["out"], name="where_node")
    return make_model([node], [("c", c_shape, TensorProto.BOOL), ("x", x_shape, elem), ("y", y_shape, elem)],
                      [("out", None, elem)])


@pytest.mark.parametrize("dtype", NUMBERS + [np.bool_])
@pytest.mark.parametrize("shapes", [([2, 3], [2, 3], [2, 3]), ([3, 1], [1, 4], [4]), ([2, 1, 3], [], [5, 1]),
                                    ([4], [2, 4], [1])], ids=str)
def test_where(dtype, shapes):
    feeds = {"c": values(shapes[0], np.bool_, 1), "x": values(shapes[1], dtype, 2), "y": values(shapes[2], dtype, 3)}
    model = where_model(*shapes, dtype)
    if dtype == np.bool_:  # onnxruntime has no bool Where: numpy's
        got = dnnx.load(model).run(feeds["c"], feeds["x"], feeds["y"])
        np.testing.assert_array_equal(got, np.where(feeds["c"], feeds["x"], feeds["y"]))
    else:
        got = assert_matches_ort(model, feeds)["out"]
    assert got.dtype == dtype


def test_where_needs_a_bool_condition():
    node = helper.make_node("Where", ["c", "x", "y"], ["out"], name="bad_where")
    model = make_model([node], [("c", [3], TensorProto.INT32), ("x", [3]), ("y", [3])], [("out", [3])])
    with pytest.raises(dnnx.InvalidModelError, match=r"bad_where.*condition must be bool, got int32"):
        dnnx.load(model)


def test_arithmetic_on_bool_is_refused():
    with pytest.raises(dnnx.UnsupportedModelError, match=r"add_node.*must be a float or integer type, got bool"):
        dnnx.load(binary_model("Add", [3], [3], np.bool_), optimize=False)


def test_logic_on_ints_is_refused():
    model = binary_model("And", [3], [3], np.bool_)
    for vi in list(model.graph.input) + list(model.graph.output):  # what onnx's checker would refuse
        vi.type.tensor_type.elem_type = TensorProto.INT32
    with pytest.raises(dnnx.UnsupportedModelError, match=r"and_node.*must be bool, got int32"):
        dnnx.load(model.SerializeToString())


def test_mixed_types_are_refused():
    node = helper.make_node("Less", ["a", "b"], ["y"], name="mixed")
    model = make_model([node], [("a", [3], TensorProto.INT32), ("b", [3], TensorProto.INT32)],
                       [("y", [3], TensorProto.BOOL)])
    model.graph.input[1].type.tensor_type.elem_type = TensorProto.INT64
    with pytest.raises(dnnx.InvalidModelError, match=r"mixed.*A is int32 but B is int64"):
        dnnx.load(model)


@pytest.mark.parametrize("src", NUMBERS + [np.bool_])
@pytest.mark.parametrize("dst", NUMBERS + [np.bool_])
def test_cast_between_every_pair(src, dst):
    x = values([3, 4], src, 4)
    if src == np.float32:
        x[0, :3] = [0.0, -0.0, 0.25]
    model = make_model([helper.make_node("Cast", ["x"], ["y"], to=ELEM[dst])], [("x", [3, 4], ELEM[src])],
                       [("y", None, ELEM[dst])])
    got = assert_matches_ort(model, {"x": x})
    assert got["y"].dtype == dst


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.bool_])
def test_gather_and_concat_of_int_and_bool(dtype):
    elem = ELEM[dtype]
    nodes = [helper.make_node("Gather", ["x", "i"], ["g"], axis=1),
             helper.make_node("Concat", ["g", "x"], ["y"], axis=1)]
    model = make_model(nodes, [("x", [2, 5], elem), ("i", [3], TensorProto.INT64)], [("y", None, elem)])
    feeds = {"x": values([2, 5], dtype, 5), "i": np.array([4, -1, 0], np.int64)}
    got = assert_matches_ort(model, feeds)
    assert got["y"].dtype == dtype


def test_bool_initializers_and_constants_stay_bool():
    """A bool initializer and a bool Constant feed And; the graph's output is bool."""
    mask = np.array([True, False, True, True])
    const = helper.make_node("Constant", [], ["k"], value=helper.make_tensor("kv", TensorProto.BOOL, [4],
                                                                             [True, True, False, True]))
    nodes = [const, helper.make_node("And", ["x", "m"], ["t"]), helper.make_node("Or", ["t", "k"], ["y"])]
    model = make_model(nodes, [("x", [4], TensorProto.BOOL)], [("y", [4], TensorProto.BOOL)], {"m": mask})
    assert_matches_ort(model, {"x": np.array([True, True, False, False])})


def test_int_and_bool_graph_io_through_run():
    """int32 and int64 graph inputs, bool and int outputs, through Model.run and run_dict."""
    nodes = [helper.make_node("Cast", ["a"], ["a64"], to=TensorProto.INT64),
             helper.make_node("Mul", ["a64", "b"], ["prod"]),
             helper.make_node("Greater", ["prod", "b"], ["big"])]
    model = make_model(nodes, [("a", [2, 3], TensorProto.INT32), ("b", [3], TensorProto.INT64)],
                       [("prod", [2, 3], TensorProto.INT64), ("big", [2, 3], TensorProto.BOOL)])
    a = np.arange(6, dtype=np.int32).reshape(2, 3) - 2
    b = np.array([3, -1, 2], np.int64)
    m = dnnx.load(model)
    assert [s.dtype for s in m.inputs] == ["int32", "int64"]
    assert [s.dtype for s in m.outputs] == ["int64", "bool"]
    prod, big = m.run(a, b)
    assert prod.dtype == np.int64 and big.dtype == np.bool_
    np.testing.assert_array_equal(prod, a.astype(np.int64) * b)
    np.testing.assert_array_equal(big, a.astype(np.int64) * b > b)
    with pytest.raises(ValueError, match="expected dtype int32"):
        m.run(a.astype(np.int64), b)


def test_bool_graph_input_checks_its_dtype():
    model = make_model([helper.make_node("Not", ["x"], ["y"])], [("x", [3], TensorProto.BOOL)],
                       [("y", [3], TensorProto.BOOL)])
    m = dnnx.load(model)
    np.testing.assert_array_equal(m.run(np.array([True, False, True])), [False, True, False])
    with pytest.raises(ValueError, match="expected dtype bool"):
        m.run(np.array([1, 0, 1], np.int32))


def range_from_shape_model(dtype, start, delta):
    """y = Range(start, Shape(x)[0] cast to dtype, delta) + mean(x), start and delta constants: the
    limit is computed from a symbolic input shape, so the Range folds at plan time, per batch, on
    the CPU backend's kernel (Note [plan-time folding])."""
    elem = ELEM[dtype]
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
             helper.make_node("Cast", ["n"], ["limit"], to=elem),
             helper.make_node("Range", ["start", "limit", "delta"], ["r"], name="range_node"),
             helper.make_node("Cast", ["r"], ["rf"], to=TensorProto.FLOAT),
             helper.make_node("ReduceMean", ["x"], ["mx"], keepdims=0),
             helper.make_node("Add", ["rf", "mx"], ["y"])]
    init = {"zero": np.array(0, np.int64), "start": np.array(start, dtype), "delta": np.array(delta, dtype)}
    return make_model(nodes, [("x", ["batch"])], [("y", ["n"])], init)


@pytest.mark.parametrize("dtype", NUMBERS)
@pytest.mark.parametrize("start,delta", [(1, 2), (0, 1), (9, -2), (3, 5)])
def test_range_of_a_shape_at_every_batch(dtype, start, delta):
    m = dnnx.load(range_from_shape_model(dtype, start, delta))
    for batch in (1, 4, 7):
        x = np.full([batch], 0.5, np.float32)
        want = np.arange(start, batch, delta, dtype=dtype).astype(np.float32) + 0.5
        np.testing.assert_allclose(m.run(x), want, err_msg=f"batch {batch}")


def test_range_bounds_fed_as_inputs():
    # Range's start, limit and delta are value inputs (Note [value inputs]): each set plans anew.
    node = helper.make_node("Range", ["s", "l", "d"], ["y"], name="range_in")
    model = make_model([node], [("s", []), ("l", []), ("d", [])], [("y", ["n"])])
    m = dnnx.load(model)
    assert m.value_inputs == ["s", "l", "d"]
    for s, l, d in [(0, 5, 1), (1.5, -2, -0.5), (0, 5, 1)]:
        feeds = {"s": np.array(s, np.float32), "l": np.array(l, np.float32), "d": np.array(d, np.float32)}
        np.testing.assert_array_equal(m.run_dict(feeds)["y"], run_ort(model, feeds)["y"])
    assert m.planner_stats()["plans_built"] == 2

