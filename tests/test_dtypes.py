"""Every ONNX tensor type as a value (issue #35, Note [dtypes] in engine/ir/tensor.h): graph inputs
and outputs, Cast and CastLike, the data-movement ops, and integer arithmetic as integer
arithmetic, against onnxruntime (CPU) where it runs the case, and against onnx's reference
conversions (ml_dtypes) for the float8, 4-bit and float4 types."""
import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto as T, helper, numpy_helper

import dnnx
from ort_check import make_model, run_ort

INTEGERS = {T.INT8: np.int8, T.UINT8: np.uint8, T.INT16: np.int16, T.UINT16: np.uint16, T.INT32: np.int32,
            T.INT64: np.int64, T.UINT32: np.uint32, T.UINT64: np.uint64}
NUMBERS = {**INTEGERS, T.FLOAT: np.float32, T.DOUBLE: np.float64, T.FLOAT16: np.float16}
STORAGE = {T.BFLOAT16: ml_dtypes.bfloat16, T.FLOAT8E4M3FN: ml_dtypes.float8_e4m3fn,
           T.FLOAT8E4M3FNUZ: ml_dtypes.float8_e4m3fnuz, T.FLOAT8E5M2: ml_dtypes.float8_e5m2,
           T.FLOAT8E5M2FNUZ: ml_dtypes.float8_e5m2fnuz, T.INT4: ml_dtypes.int4, T.UINT4: ml_dtypes.uint4,
           T.FLOAT4E2M1: ml_dtypes.float4_e2m1fn}
ALL = {**NUMBERS, **STORAGE, T.BOOL: np.bool_}


def _values(dtype, shape=(2, 3), seed=0):
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    if dtype in (np.dtype(ml_dtypes.int4), np.dtype(ml_dtypes.uint4)):
        info = ml_dtypes.iinfo(dtype)
        return rng.integers(int(info.min), int(info.max) + 1, shape).astype(dtype)
    return (rng.standard_normal(shape) * 3).astype(dtype)


def _same(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.view(np.uint8) if got.dtype.kind == "V" else got,
                                  want.view(np.uint8) if want.dtype.kind == "V" else want)


@pytest.mark.parametrize("elem", list(ALL), ids=[T.DataType.Name(t) for t in ALL])
def test_every_type_through_inputs_outputs_and_data_movement(elem):
    """x -> Transpose -> Concat(with an initializer) -> Slice -> Gather -> Reshape -> Identity, and the
    same x straight out: the bytes as numpy (ml_dtypes) holds them."""
    dtype = ALL[elem]
    x = _values(dtype, (2, 3))
    w = _values(dtype, (3, 1), seed=1)
    nodes = [helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0]),
             helper.make_node("Concat", ["t", "w"], ["c"], axis=1),
             helper.make_node("Slice", ["c", "starts", "ends"], ["s"]),
             helper.make_node("Gather", ["s", "idx"], ["g"], axis=0),
             helper.make_node("Reshape", ["g", "shape"], ["r"]),
             helper.make_node("Identity", ["r"], ["y"]),
             helper.make_node("Identity", ["x"], ["x_out"])]
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(np.array([0, 1], np.int64), "starts"),
             numpy_helper.from_array(np.array([3, 3], np.int64), "ends"),
             numpy_helper.from_array(np.array([2, 0], np.int64), "idx"),
             numpy_helper.from_array(np.array([-1], np.int64), "shape")]
    model = make_model(nodes, [("x", [2, 3], elem)], [("y", [4], elem), ("x_out", [2, 3], elem)], inits, opset=21)
    m = dnnx.load(model)
    assert [s.dtype for s in m.inputs] == [np.dtype(dtype).name]
    y, x_out = m.run(x)
    c = np.concatenate([x.T, w], axis=1)
    _same(y, c[0:3, 1:3][[2, 0]].reshape(-1))
    _same(x_out, x)


@pytest.mark.parametrize("src", list(NUMBERS) + [T.BOOL], ids=[T.DataType.Name(t) for t in list(NUMBERS) + [T.BOOL]])
@pytest.mark.parametrize("dst", list(NUMBERS) + [T.BOOL], ids=[T.DataType.Name(t) for t in list(NUMBERS) + [T.BOOL]])
def test_cast_between_number_types_matches_onnxruntime(src, dst):
    """Values inside every target's range (out-of-range float -> int is undefined in C++ and onnxruntime)."""
    x = np.array([[0, 1, 2, 7, 100, 127], [3, 5, 9, 11, 13, 0]], np.float64)
    if np.dtype(ALL[src]).kind == "f":
        x = x + np.array([[0, 0.25, 0.5, 0.75, 0.4, 0.6], [0.5, 0.5, 0.1, 0.9, 0.3, 0]])
    model = make_model([helper.make_node("Cast", ["x"], ["y"], to=dst)], [("x", [2, 6], src)], [("y", [2, 6], dst)])
    x = x.astype(ALL[src])
    got = dnnx.load(model).run(x)
    _same(got, run_ort(model, {"x": x})["y"])


# What each binary op is in numpy, for the types onnxruntime has no kernel of (Max on int16,
# Where on uint64, ...): integer Div truncates toward zero, Mod (fmod=0) takes the divisor's sign.
def _trunc_div(a, b):
    q = a // b
    return np.where((q < 0) & (q * b != a), q + 1, q).astype(a.dtype) if a.dtype.kind == "i" else q


NUMPY_OPS = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": _trunc_div, "Mod": np.mod,
             "Max": np.maximum, "Min": np.minimum, "Equal": np.equal, "Less": np.less, "Greater": np.greater}


def _binary_ops_match(a, b, elem, ops, opset):
    """Each op on (a, b) in dnnx equals onnxruntime's, or numpy's where onnxruntime has no kernel."""
    import onnxruntime

    for op in ops:
        out = T.BOOL if op in ("Equal", "Less", "Greater") else elem
        model = make_model([helper.make_node(op, ["a", "b"], ["y"])], [("a", list(a.shape), elem),
                                                                       ("b", list(b.shape), elem)],
                           [("y", None, out)], opset=opset)
        feeds = {"a": a, "b": b}
        got = dnnx.load(model).run_dict(feeds)["y"]
        try:
            want = run_ort(model, feeds)["y"]
        except onnxruntime.capi.onnxruntime_pybind11_state.NotImplemented:
            with np.errstate(over="ignore"):
                want = np.asarray(NUMPY_OPS[op](a, b))
        _same(got, want)


def test_integer_arithmetic_is_exact_above_2_pow_53_and_2_pow_63():
    big = 2 ** 53 + 1
    a64 = np.array([big, -big, 2 ** 62 + 3, 9, -9, np.iinfo(np.int64).min], np.int64)
    b64 = np.array([2, 3, 2 ** 61 + 1, -4, 4, 3], np.int64)  # (MIN / -1 crashes onnxruntime)
    ua = np.array([2 ** 63 + 5, 2 ** 64 - 1, 2 ** 63, 7, 2 ** 63 + 2 ** 40, 1], np.uint64)
    ub = np.array([3, 2, 2 ** 63 - 1, 2, 2 ** 62 + 1, 2 ** 64 - 1], np.uint64)
    for a, b, elem in ((a64, b64, T.INT64), (ua, ub, T.UINT64)):
        _binary_ops_match(a, b, elem, list(NUMPY_OPS), opset=13)
        nodes = [helper.make_node("Abs", ["a"], ["abs"]), helper.make_node("Less", ["a", "b"], ["less"]),
                 helper.make_node("Where", ["less", "a", "b"], ["where"]),
                 helper.make_node("Add", ["a", "b"], ["add"]), helper.make_node("Mul", ["a", "b"], ["mul"])]
        model = make_model(nodes, [("a", [6], elem), ("b", [6], elem)],
                           [("abs", [6], elem), ("where", [6], elem), ("add", [6], elem), ("mul", [6], elem)], opset=13)
        got = dnnx.load(model).run_dict({"a": a, "b": b})
        with np.errstate(over="ignore"):
            _same(got["abs"], np.abs(a))
            _same(got["where"], np.where(a < b, a, b))
            assert got["add"].tolist() == (a + b).tolist()  # wrapping, exact: no float64 in between
            assert got["mul"].tolist() == (a * b).tolist()


@pytest.mark.parametrize("elem", list(INTEGERS), ids=[T.DataType.Name(t) for t in INTEGERS])
def test_small_integer_elementwise_matches_onnxruntime(elem):
    dtype = INTEGERS[elem]
    a, b = _values(dtype, (3, 4), seed=2), _values(dtype, (4,), seed=3)
    b[b == 0] = 1
    if np.dtype(dtype).kind == "i":
        b[b == -1] = 1  # MIN / -1: onnxruntime's integer division traps
    _binary_ops_match(a, b, elem, ["Add", "Sub", "Mul", "Div", "Max", "Min", "Equal", "Less", "Greater"], opset=14)


def test_float64_computes_in_float64():
    """1 + 1e-12 - 1 is 1e-12 in float64 (0 in float32); the output is exactly onnxruntime's."""
    model = make_model([helper.make_node("Add", ["a", "b"], ["s"]), helper.make_node("Sub", ["s", "a"], ["y"])],
                       [("a", [3], T.DOUBLE), ("b", [3], T.DOUBLE)], [("y", [3], T.DOUBLE)])
    feeds = {"a": np.ones(3), "b": np.array([1e-12, 3e-13, -2e-12])}
    got = dnnx.load(model).run_dict(feeds)["y"]
    _same(got, run_ort(model, feeds)["y"])
    assert np.all(got != 0)


def test_float16_add_rounds_to_float16_like_onnxruntime():
    model = make_model([helper.make_node("Add", ["a", "b"], ["y"])], [("a", [64], T.FLOAT16), ("b", [64], T.FLOAT16)],
                       [("y", [64], T.FLOAT16)])
    feeds = {"a": _values(np.float16, (64,), seed=4), "b": _values(np.float16, (64,), seed=5) / 512}
    _same(dnnx.load(model).run_dict(feeds)["y"], run_ort(model, feeds)["y"])


def test_a_float64_op_without_a_float64_kernel_runs_in_float32_and_says_so():
    w = np.random.default_rng(6).standard_normal((4, 3))
    model = make_model([helper.make_node("MatMul", ["x", "w"], ["y"])], [("x", [2, 4], T.DOUBLE)],
                       [("y", [2, 3], T.DOUBLE)], {"w": w})
    m = dnnx.load(model)
    x = np.random.default_rng(7).standard_normal((2, 4))
    got = m.run(x)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, x @ w, rtol=1e-5, atol=1e-6)
    assert any("float64 computed in float32" in row["algorithm"] for row in m.plan())


def _reference_cast(x, to, saturate):
    from onnx.reference.ops.op_cast import cast_to

    return cast_to(x, to, saturate)


FLOAT8 = [T.FLOAT8E4M3FN, T.FLOAT8E4M3FNUZ, T.FLOAT8E5M2, T.FLOAT8E5M2FNUZ]


@pytest.mark.parametrize("to", FLOAT8 + [T.FLOAT4E2M1, T.INT4, T.UINT4], ids=lambda t: T.DataType.Name(t))
@pytest.mark.parametrize("saturate", [0, 1])
def test_cast_to_storage_types_matches_onnx_reference(to, saturate):
    """Every float16 value (the ties and every overflow among them), and some float32 past 65504."""
    x = np.arange(2 ** 16, dtype=np.uint16).view(np.float16).astype(np.float32)
    x = np.concatenate([x, np.array([1e5, -1e6, 3e38, 448.0001, 464.0, 57344.5, 61440.0], np.float32)])
    if to in (T.INT4, T.UINT4):  # onnx's int4 cast ignores saturate; NaN and out-of-range floats give 0
        x = x[np.isfinite(x)]
    attrs = {"saturate": saturate} if to in FLOAT8 else {}
    model = make_model([helper.make_node("Cast", ["x"], ["y"], to=to, **attrs)], [("x", [x.size], T.FLOAT)],
                       [("y", [x.size], to)], opset=23)
    got = dnnx.load(model).run(x)
    want = _reference_cast(x, to, bool(saturate))
    assert got.dtype == want.dtype
    g, w = got.astype(np.float32), want.astype(np.float32)
    np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
    np.testing.assert_array_equal(g[~np.isnan(g)], w[~np.isnan(w)])


@pytest.mark.parametrize("src", list(STORAGE), ids=[T.DataType.Name(t) for t in STORAGE])
def test_cast_from_storage_types_is_exact(src):
    dtype = np.dtype(STORAGE[src])
    bits = np.arange(256 if dtype.itemsize == 1 else 2 ** 16, dtype=np.uint8 if dtype.itemsize == 1 else np.uint16)
    if src in (T.INT4, T.UINT4, T.FLOAT4E2M1):
        bits = bits[:16]
    x = bits.view(dtype)
    model = make_model([helper.make_node("Cast", ["x"], ["y"], to=T.FLOAT)], [("x", [x.size], src)],
                       [("y", [x.size], T.FLOAT)], opset=23)
    got = dnnx.load(model).run(x)
    want = x.astype(np.float32)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(got[~np.isnan(got)], want[~np.isnan(want)])


def test_castlike_takes_the_type_of_its_second_input():
    nodes = [helper.make_node("CastLike", ["x", "like"], ["y"])]
    model = make_model(nodes, [("x", [5], T.FLOAT), ("like", [1], T.UINT16)], [("y", [5], T.UINT16)], opset=15)
    feeds = {"x": np.array([0, 1.5, 7.9, 300, 65535], np.float32), "like": np.zeros(1, np.uint16)}
    _same(dnnx.load(model).run_dict(feeds)["y"], run_ort(model, feeds)["y"])


def test_inference_session_takes_and_gives_every_number_type():
    nodes = [helper.make_node("Neg", ["x"], ["y"])]
    for elem in (T.INT8, T.INT16, T.DOUBLE, T.FLOAT16):
        model = make_model(nodes, [("x", [4], elem)], [("y", [4], elem)], opset=13)
        x = _values(NUMBERS[elem], (4,), seed=8)
        if np.dtype(x.dtype).kind == "i":
            x[x == np.iinfo(x.dtype).min] = 0
        sess = dnnx.InferenceSession(model.SerializeToString())
        (got,) = sess.run(None, {"x": x})
        _same(np.asarray(got), run_ort(model, {"x": x})["y"])


def test_a_type_an_op_has_no_kernel_for_is_refused_naming_the_node():
    node = helper.make_node("Relu", ["x"], ["y"], name="relu_x")
    model = make_model([node], [("x", [3], T.INT8)], [("y", [3], T.INT8)], opset=14)
    with pytest.raises(dnnx.UnsupportedModelError, match="relu_x.*int8"):
        dnnx.load(model)
