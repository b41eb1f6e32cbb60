"""The device kernels of issues #35, #36 and #38 for ops that ran through the host fallback inside
CUDA plans: IsNaN, IsInf, the float math ops (trigonometric and hyperbolic functions, Ceil, Floor,
Round, Sign, Softsign, Celu, ThresholdedRelu, Swish, Shrink), Tile, DepthToSpace, SpaceToDepth,
ArgMax, ArgMin, CastLike, Where on every device
type, GatherND (batch_dims), GatherElements, ScatterND and ScatterElements (every reduction),
CumSum and CumProd (exclusive, reverse, axis) and TopK (largest, ties lower index first). Larger random
cases than onnx's node cases (tests/cuda/test_cuda_every_op.py), per op and dtype: float32 at
fp32 (against the CPU backend and, where it runs the case, onnxruntime), the half form at
precision="fp16" (against the CPU on the same fp16-rounded inputs), int64 and int32, and bool
for Where, the gathers and ScatterElements; negative indices and empty tensors. Each loads with
its node on the device: plan() shows no host fallback for it (Note [host fallback]). An index
out of range reads zeros or skips its update on CUDA where the CPU raises (Note [device index
range])."""
import warnings

import numpy as np
import pytest
from onnx import TensorProto, helper

import dnnx
from ort_check import make_model, run_ort

RNG = np.random.default_rng(35)
NODE = "under_test"
ELEM = {np.float32: TensorProto.FLOAT, np.int64: TensorProto.INT64, np.int32: TensorProto.INT32,
        np.bool_: TensorProto.BOOL}


def one_node(op, inputs, outputs, inits=None, opset=18, **attrs):
    """A model of one node named NODE: inputs (name, array) are graph inputs (so that nothing folds
    at plan time), inits {name: array} constants; outputs (name, elem_type) have inferred shapes."""
    node = helper.make_node(op, [n for n, _ in inputs] + list(inits or {}), [n for n, _ in outputs], name=NODE, **attrs)
    graph_inputs = [(n, list(a.shape), ELEM[a.dtype.type]) for n, a in inputs]
    return make_model([node], graph_inputs, [(n, None, t) for n, t in outputs], inits or {}, opset=opset)


def load_on_device(model, precision):
    """The model on CUDA with NODE on a device kernel (a host fallback for it fails the test)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dnnx.HostFallbackWarning)
        m = dnnx.load(model, device="cuda", precision=precision)
    rows = [r for r in m.plan() if r["name"] == NODE]
    assert rows, m.plan()
    assert not rows[0]["algorithm"].startswith("on the host"), rows[0]
    return m, rows[0]


def check(model, feeds, precision="fp32", rtol=0.0, atol=0.0, ort=True, device=True):
    """NODE's outputs on CUDA (eager, captured, replayed) against the CPU backend's and, at fp32,
    onnxruntime's; exact unless given tolerances. device=False: no assertion on where NODE ran
    (an empty input with a non-empty output runs on the host by design). Returns the CUDA plan row."""
    if device:
        gpu, row = load_on_device(model, precision)
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", dnnx.HostFallbackWarning)
            gpu, row = dnnx.load(model, device="cuda", precision=precision), None
    want = dnnx.load(model).run_dict(feeds)
    refs = [want]
    if ort and precision == "fp32":
        try:
            refs.append(run_ort(model, feeds))
        except Exception as e:  # onnxruntime lacks some types (Where on bool): the CPU backend's only
            if "NOT_IMPLEMENTED" not in str(e):
                raise
    for _ in range(3):
        got = gpu.run_dict(feeds)
        for ref in refs:
            assert got.keys() == ref.keys()
            for name, r in ref.items():
                assert got[name].shape == r.shape and got[name].dtype == r.dtype, (name, got[name].shape, r.shape)
                np.testing.assert_allclose(got[name], r, rtol=rtol, atol=atol, equal_nan=True, err_msg=name)
    return row


def halves(x):
    """float32 values that fp16 storage keeps exactly."""
    return x.astype(np.float16).astype(np.float32)


def signed(idx, size):
    """Indices with about half of them written as their negative form (counting from the end)."""
    return np.where(RNG.random(idx.shape) < 0.5, idx - size, idx).astype(idx.dtype)


def data_of(shape, dtype):
    if dtype is np.bool_:
        return RNG.random(shape) < 0.5
    if dtype is np.float32:
        return RNG.standard_normal(shape).astype(np.float32)
    return RNG.integers(-1000, 1000, size=shape).astype(dtype)


# --- IsNaN, IsInf ---------------------------------------------------------------------------------
def special_floats(shape):
    x = RNG.standard_normal(shape).astype(np.float32)
    flat = x.reshape(-1)
    at = RNG.choice(flat.size, size=flat.size // 4, replace=False)
    flat[at] = RNG.choice(np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 65504.0], np.float32), size=at.size)
    return x


@pytest.mark.parametrize("precision", ["fp32", "fp16"])
@pytest.mark.parametrize("op, attrs", [("IsNaN", {}), ("IsInf", {}), ("IsInf", {"detect_negative": 0}),
                                       ("IsInf", {"detect_positive": 0}),
                                       ("IsInf", {"detect_positive": 0, "detect_negative": 0})], ids=str)
def test_float_class(op, attrs, precision):
    x = special_floats((4, 33, 7))
    check(one_node(op, [("x", x)], [("y", TensorProto.BOOL)], **attrs), {"x": x}, precision)


# --- the trigonometric and hyperbolic functions ---------------------------------------------------
TRIG_DOMAIN = {"Sin": (-6, 6), "Cos": (-6, 6), "Tan": (-1.4, 1.4), "Asin": (-0.99, 0.99), "Acos": (-0.99, 0.99),
               "Atan": (-8, 8), "Sinh": (-5, 5), "Cosh": (-5, 5), "Asinh": (-8, 8), "Acosh": (1.01, 8),
               "Atanh": (-0.99, 0.99)}


@pytest.mark.parametrize("precision", ["fp32", "fp16"])
@pytest.mark.parametrize("op", sorted(TRIG_DOMAIN))
def test_trig(op, precision):
    lo, hi = TRIG_DOMAIN[op]
    x = RNG.uniform(lo, hi, size=(5, 301)).astype(np.float32)
    if precision == "fp16":
        x = halves(x)
    model = one_node(op, [("x", x)], [("y", TensorProto.FLOAT)], opset=13)
    # CUDA's single-precision functions are within 2 ulp of the CPU's; fp16 rounds each output.
    tol = {"rtol": 1e-5, "atol": 1e-6} if precision == "fp32" else {"rtol": 2e-3, "atol": 2e-3}
    check(model, {"x": x}, precision, **tol)


# --- Ceil, Floor, Round, Sign, Softsign, Celu, ThresholdedRelu, Swish, Shrink -----------------------
# op -> (attributes, opset, exact): exact where every reference does the same float operations
# (rounding, comparisons, an add); Celu and Swish call expf (within 2 ulp of glibc's), and
# onnxruntime's Softsign is 1 ulp off the x / (1 + |x|) that the CPU and CUDA compute.
FLOAT_MATH = {
    "Ceil": ({}, 13, True), "Floor": ({}, 13, True), "Round": ({}, 13, True), "Sign": ({}, 13, True),
    "Softsign": ({}, 13, False), "ThresholdedRelu": ({"alpha": 0.4}, 13, True),
    "Shrink": ({"lambd": 0.7, "bias": 0.25}, 13, True), "Celu": ({"alpha": 1.5}, 13, False),
    "Swish": ({"alpha": 0.8}, 24, False),
}


def rounding_cases(shape):
    """Normal values with halves (Round's ties: half to even), whole numbers, zeros of both signs,
    NaN and infinities mixed in."""
    x = (RNG.standard_normal(shape) * 4).astype(np.float32)
    flat = x.reshape(-1)
    at = RNG.choice(flat.size, size=flat.size // 3, replace=False)
    flat[at] = RNG.choice(np.array([0.5, -0.5, 1.5, -2.5, 2.0, -3.0, 0.0, -0.0, np.nan, np.inf, -np.inf],
                                   np.float32), size=at.size)
    return x


@pytest.mark.parametrize("precision", ["fp32", "fp16"])
@pytest.mark.parametrize("op", sorted(FLOAT_MATH))
def test_float_math(op, precision):
    attrs, opset, exact = FLOAT_MATH[op]
    x = rounding_cases((5, 301))
    if op in ("Celu", "Swish"):  # finite values: both sides' infinities agree, but not their NaN-free path
        x = np.nan_to_num(x, nan=0.3, posinf=30.0, neginf=-30.0)
    if precision == "fp16":
        x = halves(x)
    model = one_node(op, [("x", x)], [("y", TensorProto.FLOAT)], opset=opset, **attrs)
    # fp16 rounds each output once, from the same float value on both sides except expf's ulps.
    tol = {} if exact else {"rtol": 1e-5, "atol": 1e-6}
    if precision == "fp16" and not exact:
        tol = {"rtol": 2e-3, "atol": 2e-3}
    check(model, {"x": x}, precision, **tol)


# --- Tile, DepthToSpace, SpaceToDepth: one strided gather each ---------------------------------------
TILE_CASES = [((2, 3, 4), (2, 1, 3)), ((5,), (4,)), ((1, 3, 1, 2), (3, 2, 2, 1)),
              ((2, 2, 2, 2), (2, 2, 2, 2)),  # 8 walk dims, none merging: the gather's limit
              ((3, 1, 4), (1, 1, 1))]


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_], ids=lambda t: t.__name__)
@pytest.mark.parametrize("shape, repeats", TILE_CASES, ids=str)
def test_tile(shape, repeats, dtype):
    x = data_of(shape, dtype)
    model = one_node("Tile", [("x", x)], [("y", ELEM[dtype])], inits={"repeats": np.array(repeats, np.int64)})
    check(model, {"x": x})


def test_tile_fp16():
    x = halves(data_of((3, 5, 2), np.float32))
    model = one_node("Tile", [("x", x)], [("y", TensorProto.FLOAT)], inits={"repeats": np.array([2, 1, 3], np.int64)})
    check(model, {"x": x}, "fp16")


@pytest.mark.parametrize("precision", ["fp32", "fp16"])
@pytest.mark.parametrize("op, attrs, shape", [("DepthToSpace", {"blocksize": 2}, (2, 8, 3, 5)),
                                              ("DepthToSpace", {"blocksize": 2, "mode": "CRD"}, (2, 8, 3, 5)),
                                              ("DepthToSpace", {"blocksize": 3}, (1, 18, 4, 4)),
                                              ("SpaceToDepth", {"blocksize": 2}, (2, 3, 6, 4)),
                                              ("SpaceToDepth", {"blocksize": 4}, (1, 2, 8, 8))], ids=str)
def test_space_depth(op, attrs, shape, precision):
    x = halves(data_of(shape, np.float32))
    model = one_node(op, [("x", x)], [("y", TensorProto.FLOAT)], opset=13, **attrs)
    check(model, {"x": x}, precision)


def test_depth_to_space_int64():
    x = data_of((2, 4, 3, 3), np.int64)
    check(one_node("DepthToSpace", [("x", x)], [("y", TensorProto.INT64)], opset=13, blocksize=2), {"x": x})


# --- Where ------------------------------------------------------------------------------------------
WHERE_SHAPES = [((3, 4, 5), (3, 4, 5), (3, 4, 5)), ((3, 1, 5), (4, 1), (5,)), ((1,), (2, 3, 4), ()),
                # 10 dims of size 2 that merge into one (every operand contiguous or a scalar)
                ((2,) * 10, (2,) * 10, ()),
                ((2, 0, 3), (1, 3), (2, 1, 1))]


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.int32, np.bool_], ids=lambda t: t.__name__)
@pytest.mark.parametrize("shapes", WHERE_SHAPES, ids=str)
def test_where(shapes, dtype):
    c = RNG.random(shapes[0]) < 0.5
    x, y = data_of(shapes[1], dtype), data_of(shapes[2], dtype)
    model = one_node("Where", [("c", c), ("x", x), ("y", y)], [("out", ELEM[dtype])])
    check(model, {"c": c, "x": x, "y": y}, device=0 not in shapes[0])


@pytest.mark.parametrize("shapes", WHERE_SHAPES[:3], ids=str)
def test_where_fp16(shapes):
    c = RNG.random(shapes[0]) < 0.5
    x, y = halves(data_of(shapes[1], np.float32)), halves(data_of(shapes[2], np.float32))
    check(one_node("Where", [("c", c), ("x", x), ("y", y)], [("out", TensorProto.FLOAT)]), {"c": c, "x": x, "y": y},
          "fp16")


# --- GatherND ---------------------------------------------------------------------------------------
# (data shape, indices shape, batch_dims); indices' last dim k gathers data's dims after the batch.
GATHER_ND = [((5, 6, 7), (4, 3, 2), 0), ((5, 6), (10, 2), 0), ((5, 6, 7), (9, 1), 0), ((3, 5, 6, 4), (3, 7, 2), 1),
             ((2, 3, 5, 6), (2, 3, 4, 1), 2), ((2, 3, 5, 6), (2, 3, 2), 2)]


def gather_nd_indices(data_shape, idx_shape, batch_dims):
    k = idx_shape[-1]
    dims = data_shape[batch_dims:batch_dims + k]
    idx = np.stack([RNG.integers(0, d, size=idx_shape[:-1]) for d in dims], axis=-1).astype(np.int64)
    return np.stack([signed(idx[..., j], d) for j, d in enumerate(dims)], axis=-1)


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.int32, np.bool_], ids=lambda t: t.__name__)
@pytest.mark.parametrize("shapes", GATHER_ND, ids=str)
def test_gather_nd(shapes, dtype):
    data_shape, idx_shape, batch_dims = shapes
    data = data_of(data_shape, dtype)
    idx = gather_nd_indices(data_shape, idx_shape, batch_dims)
    model = one_node("GatherND", [("data", data), ("idx", idx)], [("y", ELEM[dtype])], batch_dims=batch_dims)
    row = check(model, {"data": data, "idx": idx})
    assert any(algo == "range check" for algo, _ in row["rejected"]), row


@pytest.mark.parametrize("shapes", GATHER_ND[:4], ids=str)
def test_gather_nd_fp16(shapes):
    data_shape, idx_shape, batch_dims = shapes
    data = halves(data_of(data_shape, np.float32))
    idx = gather_nd_indices(data_shape, idx_shape, batch_dims)
    model = one_node("GatherND", [("data", data), ("idx", idx)], [("y", TensorProto.FLOAT)], batch_dims=batch_dims)
    check(model, {"data": data, "idx": idx}, "fp16")


def test_gather_nd_empty_indices():
    data, idx = data_of((5, 6, 7), np.float32), np.zeros((0, 2), np.int64)
    check(one_node("GatherND", [("data", data), ("idx", idx)], [("y", TensorProto.FLOAT)]), {"data": data, "idx": idx},
          device=False)


def test_gather_nd_index_out_of_range_reads_zeros_on_cuda():
    data = data_of((4, 5), np.float32)
    idx = np.array([[1, 2], [4, 0], [0, -6], [-1, -1]], np.int64)  # the middle two are out of range
    model = one_node("GatherND", [("data", data), ("idx", idx)], [("y", TensorProto.FLOAT)])
    with pytest.raises(ValueError, match="under_test.*out of range"):
        dnnx.load(model).run_dict({"data": data, "idx": idx})
    gpu, _ = load_on_device(model, "fp32")
    np.testing.assert_array_equal(gpu.run_dict({"data": data, "idx": idx})["y"], [data[1, 2], 0, 0, data[-1, -1]])


# --- GatherElements ---------------------------------------------------------------------------------
@pytest.mark.parametrize("index_type", [np.int64, np.int32], ids=lambda t: t.__name__)
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_], ids=lambda t: t.__name__)
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_gather_elements(axis, dtype, index_type):
    data_shape = (4, 5, 6)
    a = axis % 3
    idx_shape = [3, 4, 5]
    idx_shape[a] = 9  # any length along the axis; at most data's off it
    idx = signed(RNG.integers(0, data_shape[a], size=idx_shape), data_shape[a]).astype(index_type)
    data = data_of(data_shape, dtype)
    model = one_node("GatherElements", [("data", data), ("idx", idx)], [("y", ELEM[dtype])], axis=axis)
    check(model, {"data": data, "idx": idx})


def test_gather_elements_fp16():
    data = halves(data_of((6, 7), np.float32))
    idx = signed(RNG.integers(0, 7, size=(6, 11)), 7)
    model = one_node("GatherElements", [("data", data), ("idx", idx)], [("y", TensorProto.FLOAT)], axis=1)
    check(model, {"data": data, "idx": idx}, "fp16")


# --- ScatterND --------------------------------------------------------------------------------------
REDUCTIONS = ["none", "add", "mul", "max", "min"]


def scatter_nd_case(reduction, dtype, data_shape=(6, 5, 4), k=2, tuples=3):
    data = data_of(data_shape, dtype)
    if reduction == "none":  # distinct tuples: duplicates are undefined in ONNX
        flat = RNG.choice(int(np.prod(data_shape[:k])), size=tuples, replace=False)
        idx = np.stack(np.unravel_index(flat, data_shape[:k]), axis=-1).astype(np.int64)
    else:  # duplicates combine
        idx = np.stack([RNG.integers(0, d, size=tuples * 3) for d in data_shape[:k]], axis=-1).astype(np.int64)
    idx = np.stack([signed(idx[:, j], data_shape[j]) for j in range(k)], axis=-1)
    upd = data_of((idx.shape[0],) + tuple(data_shape[k:]), dtype)
    if dtype is not np.float32 and dtype is not np.bool_ and reduction == "mul":
        upd = RNG.integers(-3, 4, size=upd.shape).astype(dtype)  # small factors: no wrap-around to compare
    return data, idx, upd


def float_tolerance(reduction):
    # Atomic sums and products of duplicates in another order than the CPU's serial loop.
    return {"rtol": 1e-5, "atol": 1e-5} if reduction in ("add", "mul") else {}


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.int32], ids=lambda t: t.__name__)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_scatter_nd(reduction, dtype):
    data, idx, upd = scatter_nd_case(reduction, dtype)
    model = one_node("ScatterND", [("data", data), ("idx", idx), ("upd", upd)], [("y", ELEM[dtype])],
                     reduction=reduction)
    tol = float_tolerance(reduction) if dtype is np.float32 else {}
    row = check(model, {"data": data, "idx": idx, "upd": upd}, **tol)
    assert any(algo == "range check" for algo, _ in row["rejected"]), row


@pytest.mark.parametrize("k", [1, 3])
def test_scatter_nd_slices_and_elements(k):
    data, idx, upd = scatter_nd_case("add", np.float32, data_shape=(8, 6, 5), k=k, tuples=20)
    model = one_node("ScatterND", [("data", data), ("idx", idx), ("upd", upd)], [("y", TensorProto.FLOAT)],
                     reduction="add")
    check(model, {"data": data, "idx": idx, "upd": upd}, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_scatter_nd_fp16(reduction):
    data, idx, upd = scatter_nd_case(reduction, np.float32)
    data, upd = halves(data), halves(upd)
    model = one_node("ScatterND", [("data", data), ("idx", idx), ("upd", upd)], [("y", TensorProto.FLOAT)],
                     reduction=reduction)
    # fp16 storage rounds every combination (the CPU computes in float32): a sum of a few halves.
    tol = {"rtol": 5e-3, "atol": 2e-2} if reduction in ("add", "mul") else {}
    check(model, {"data": data, "idx": idx, "upd": upd}, "fp16", **tol)


def test_scatter_nd_index_out_of_range_is_skipped_on_cuda():
    data = data_of((4, 3), np.float32)
    idx = np.array([[1], [7], [-2]], np.int64)  # 7 is out of range
    upd = data_of((3, 3), np.float32)
    model = one_node("ScatterND", [("data", data), ("idx", idx), ("upd", upd)], [("y", TensorProto.FLOAT)])
    with pytest.raises(ValueError, match="under_test.*out of range"):
        dnnx.load(model).run_dict({"data": data, "idx": idx, "upd": upd})
    gpu, _ = load_on_device(model, "fp32")
    want = data.copy()
    want[1], want[2] = upd[0], upd[2]
    np.testing.assert_array_equal(gpu.run_dict({"data": data, "idx": idx, "upd": upd})["y"], want)


# --- ScatterElements --------------------------------------------------------------------------------
def scatter_elements_case(reduction, dtype, axis, data_shape=(5, 6, 7)):
    a = axis % len(data_shape)
    idx_shape = [3, 4, 5]
    if reduction == "none":  # distinct positions along the axis in each line
        idx_shape[a] = data_shape[a] - 1
        lines = np.argsort(RNG.random(idx_shape[:a] + [data_shape[a]] + idx_shape[a + 1:]), axis=a)
        idx = np.take(lines, np.arange(idx_shape[a]), axis=a)
    else:
        idx_shape[a] = 2 * data_shape[a]  # duplicates
        idx = RNG.integers(0, data_shape[a], size=idx_shape)
    idx = signed(idx.astype(np.int64), data_shape[a])
    upd = data_of(tuple(idx_shape), dtype)
    if dtype is not np.float32 and dtype is not np.bool_ and reduction == "mul":
        upd = RNG.integers(-3, 4, size=upd.shape).astype(dtype)
    return data_of(data_shape, dtype), idx, upd


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.int32], ids=lambda t: t.__name__)
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_scatter_elements(reduction, axis, dtype):
    data, idx, upd = scatter_elements_case(reduction, dtype, axis)
    model = one_node("ScatterElements", [("data", data), ("idx", idx), ("upd", upd)], [("y", ELEM[dtype])], axis=axis,
                     reduction=reduction)
    check(model, {"data": data, "idx": idx, "upd": upd}, **(float_tolerance(reduction) if dtype is np.float32 else {}))


def test_scatter_elements_int32_indices_and_bool_data():
    data, idx, upd = scatter_elements_case("none", np.bool_, 1)
    idx = idx.astype(np.int32)
    model = one_node("ScatterElements", [("data", data), ("idx", idx), ("upd", upd)], [("y", TensorProto.BOOL)], axis=1)
    check(model, {"data": data, "idx": idx, "upd": upd})


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_scatter_elements_fp16(reduction):
    data, idx, upd = scatter_elements_case(reduction, np.float32, 1)
    data, upd = halves(data), halves(upd)
    model = one_node("ScatterElements", [("data", data), ("idx", idx), ("upd", upd)], [("y", TensorProto.FLOAT)],
                     axis=1, reduction=reduction)
    tol = {"rtol": 5e-3, "atol": 2e-2} if reduction in ("add", "mul") else {}
    check(model, {"data": data, "idx": idx, "upd": upd}, "fp16", **tol)


# --- CumSum -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.int32], ids=lambda t: t.__name__)
@pytest.mark.parametrize("exclusive, reverse", [(0, 0), (1, 0), (0, 1), (1, 1)])
@pytest.mark.parametrize("shape, axis", [((3, 70, 40), 0), ((3, 70, 40), 1), ((3, 70, 40), -1), ((2, 5000), 1),
                                         ((40, 3), 0)], ids=str)
def test_cumsum(shape, axis, exclusive, reverse, dtype):
    # Small integers (as floats too): every partial sum is exact in any order, so the warp scan
    # and the CPU's serial loop agree exactly.
    x = RNG.integers(-8, 9, size=shape).astype(dtype)
    model = one_node("CumSum", [("x", x)], [("y", ELEM[dtype])], {"axis": np.array(axis, np.int64)}, opset=14,
                     exclusive=exclusive, reverse=reverse)
    check(model, {"x": x})


@pytest.mark.parametrize("precision", ["fp32", "fp16"])
def test_cumsum_float_values(precision):
    x = halves(RNG.standard_normal((4, 3000)).astype(np.float32))
    model = one_node("CumSum", [("x", x)], [("y", TensorProto.FLOAT)], {"axis": np.array([-1], np.int32)}, opset=14)
    # Another summation order (fp32); fp16 storage rounds each output (sums of up to ~100).
    tol = {"rtol": 1e-4, "atol": 1e-3} if precision == "fp32" else {"rtol": 2e-3, "atol": 0.1}
    check(model, {"x": x}, precision, **tol)


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.int32], ids=lambda t: t.__name__)
@pytest.mark.parametrize("exclusive, reverse", [(0, 0), (1, 1)])
@pytest.mark.parametrize("shape, axis", [((3, 70, 40), 1), ((3, 70, 40), -1), ((2, 500), 1)], ids=str)
def test_cumprod(shape, axis, exclusive, reverse, dtype):
    # Factors of 1 and -1 with a few 2s (as floats too): every partial product is a small power of
    # two in any order, so the warp scan and the CPU's serial loop agree exactly.
    x = np.ones(shape, dtype)
    x[RNG.random(shape) < 0.3] = -1
    x[RNG.random(shape) < 0.01] = 2  # rare: a line's product stays a small power of two
    model = one_node("CumProd", [("x", x)], [("y", ELEM[dtype])], {"axis": np.array(axis, np.int64)}, opset=26,
                     exclusive=exclusive, reverse=reverse)
    check(model, {"x": x})


def test_cumsum_empty():
    x = np.zeros((0, 5), np.float32)
    check(one_node("CumSum", [("x", x)], [("y", TensorProto.FLOAT)], {"axis": np.array(1, np.int64)}, opset=14),
          {"x": x}, device=False)


# --- TopK -------------------------------------------------------------------------------------------
def topk_data(shape, dtype, ties):
    if ties or dtype is not np.float32:  # few distinct values: many ties, broken by the lower index
        return RNG.integers(-20, 20, size=shape).astype(dtype)
    return RNG.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("dtype, ties", [(np.float32, False), (np.float32, True), (np.int64, True), (np.int32, True)],
                         ids=str)
@pytest.mark.parametrize("largest", [1, 0])
@pytest.mark.parametrize("shape, axis, k", [((4, 300, 3), 1, 7), ((4, 300, 3), 1, 300), ((4, 300, 3), -1, 1),
                                            ((6, 40), 0, 6), ((2, 5000), 1, 50), ((3, 9), 1, 0)], ids=str)
def test_topk(shape, axis, k, largest, dtype, ties):
    x = topk_data(shape, dtype, ties)
    model = one_node("TopK", [("x", x)], [("values", ELEM[dtype]), ("indices", TensorProto.INT64)],
                     {"k": np.array([k], np.int64)}, opset=11, axis=axis, largest=largest, sorted=1)
    check(model, {"x": x}, device=k > 0)


@pytest.mark.parametrize("largest", [1, 0])
def test_topk_fp16(largest):
    x = halves(topk_data((5, 700), np.float32, ties=False))  # rounded first: the CPU sees fp16's ties
    model = one_node("TopK", [("x", x)], [("values", TensorProto.FLOAT), ("indices", TensorProto.INT64)],
                     {"k": np.array([33], np.int64)}, opset=11, largest=largest)
    check(model, {"x": x}, "fp16")


# --- ArgMax, ArgMin: a thread per line across the inner dim, a warp per long innermost line ------------
def with_nans(x):
    """x with NaN at a few places, one line starting with NaN (the CPU's scan answers 0 there)."""
    x = x.copy()
    flat = x.reshape(-1)
    flat[RNG.choice(flat.size, size=max(1, flat.size // 50), replace=False)] = np.nan
    x.reshape(-1, x.shape[-1])[0, 0] = np.nan
    return x


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("last", [0, 1])
@pytest.mark.parametrize("dtype, ties, nan", [(np.float32, False, False), (np.float32, True, False),
                                              (np.float32, False, True), (np.int64, True, False),
                                              (np.int32, True, False)], ids=str)
@pytest.mark.parametrize("shape, axis, keepdims", [((4, 21, 6, 5), 1, 1), ((3, 1000), 1, 0), ((3, 1000), -1, 1),
                                                   ((2, 50), 1, 0), ((7, 3, 2), 0, 1), ((2, 5000, 3), 1, 0)], ids=str)
def test_arg_extreme(op, last, dtype, ties, nan, shape, axis, keepdims):
    x = topk_data(shape, dtype, ties)
    if nan:
        x = with_nans(x)
    model = one_node(op, [("x", x)], [("y", TensorProto.INT64)], opset=13, axis=axis, keepdims=keepdims,
                     select_last_index=last)
    check(model, {"x": x}, ort=not nan)  # onnxruntime's NaN answers are its own


def test_arg_max_fp16():
    x = halves(topk_data((5, 700), np.float32, ties=False))  # rounded first: the CPU sees fp16's ties
    check(one_node("ArgMax", [("x", x)], [("y", TensorProto.INT64)], opset=13, axis=1), {"x": x}, "fp16")


# --- CastLike: Cast's kernel, to its second input's type ---------------------------------------------
@pytest.mark.parametrize("src, like", [(np.float32, np.int32), (np.int64, np.float32), (np.bool_, np.float32),
                                       (np.float32, np.bool_), (np.int32, np.int64)], ids=str)
def test_cast_like(src, like):
    x = data_of((3, 7, 5), src)
    if src is np.float32:
        x = (x * 100).astype(np.float32)  # whole parts beyond 1, zeros for bool
        x[0, 0, :2] = 0.0
    target = data_of((2,), like)
    model = one_node("CastLike", [("x", x), ("target", target)], [("y", ELEM[like])], opset=19)
    check(model, {"x": x, "target": target})


# --- the models these kernels were written for ---------------------------------------------------------
NEW_DEVICE_OPS = {"IsNaN", "IsInf", "Where", "GatherND", "GatherElements", "ScatterND", "ScatterElements", "CumSum",
                  "TopK", "ArgMax", "ArgMin", *TRIG_DOMAIN}


@pytest.mark.parametrize("name", ["bert", "gpt2", "levit_128s"])
def test_zoo2_models_run_these_ops_on_the_device(name):
    """BERT and GPT-2 (IsNaN, Where, GatherElements) and LeViT (GatherND) from ../shared/external/
    zoo2 on CUDA at fp32, batch 1 and 3: none of these ops is a host layer, and the first output
    matches onnxruntime's (bounds as tests/test_math_models.py)."""
    from zoo_check import zoo2_inputs, zoo2_model

    model = zoo2_model(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dnnx.HostFallbackWarning)
        m = dnnx.load(model, device="cuda", precision="fp32")
    first = model.graph.output[0].name
    for batch in (1, 3):
        feeds = zoo2_inputs(name, model, batch)
        hosts = [(r["name"], r["op"]) for r in m.plan(inputs=feeds) if r["algorithm"].startswith("on the host")]
        assert not [h for h in hosts if h[1] in NEW_DEVICE_OPS], hosts
        want = run_ort(model, feeds)[first]
        got = m.run_dict(feeds)[first]
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4 * float(np.abs(want).max()))


def topk_reference(x, k, largest):
    """TopK along the last axis in the kernels' order: NaN above every number, ties by the lower
    index (the CPU backend sorts with comparisons that NaN leaves unordered, so it is no
    reference there)."""
    nan = np.isnan(x)
    finite = np.where(nan, 0, x)
    idx = np.broadcast_to(np.arange(x.shape[-1]), x.shape)
    keys = (idx, -finite, ~nan) if largest else (idx, finite, nan)
    order = np.lexsort(keys, axis=-1)[..., :k]
    return np.take_along_axis(x, order, -1), order


@pytest.mark.parametrize("nan", [False, True])
@pytest.mark.parametrize("largest", [1, 0])
@pytest.mark.parametrize("k", [1, 300, 2999, 3000])
def test_topk_long_lines_with_ties(largest, k, nan):
    """Lines of 3000 (a warp per element, Note [topk by warp]) with tied values, along the last
    axis and along a strided one, against the CPU backend and onnxruntime; with NaNs against the
    kernels' order computed by numpy."""
    x = RNG.integers(-200, 200, size=(3, 3000)).astype(np.float32) / 4
    if nan:
        x[RNG.random(x.shape) < 0.01] = np.nan
    for axis, data in ((1, x), (0, np.ascontiguousarray(x.T))):
        model = one_node("TopK", [("x", data)], [("values", TensorProto.FLOAT), ("indices", TensorProto.INT64)],
                         {"k": np.array([k], np.int64)}, opset=11, axis=axis, largest=largest, sorted=1)
        if not nan:
            check(model, {"x": data})
            continue
        gpu, _ = load_on_device(model, "fp32")
        got = gpu.run_dict({"x": data})
        values, indices = topk_reference(x, k, largest)
        if axis == 0:
            values, indices = values.T, indices.T
        np.testing.assert_array_equal(got["indices"], indices)
        np.testing.assert_array_equal(got["values"], values)
