"""The vectorized transcendental kernels of the transformer models (issue #38): Tanh, Erf, Gelu
(exact and tanh forms) on engine/backends/cpu/elementwise/vector_math.h, Exp (Note [exp rows]),
and Pow by one float exponent (Note [pow by a scalar]). Checked against float64 over every binade and against
onnxruntime, at lengths that leave every vector tail (1..17 elements past a multiple of 8 or 16)."""
import math

import numpy as np
import pytest
from onnx import helper

import dnnx
from ort_check import make_model, rand, run_ort, assert_same_bits_on_one_and_two_threads

EPS = np.finfo(np.float32).eps


def sweep():
    # Every binade of the float range, both signs, a dense grid over [-10, 10], the edges.
    mags = np.geomspace(1e-30, 3e38, 4000).astype(np.float32)
    grid = np.linspace(-10, 10, 20001, dtype=np.float32)
    edges = np.array([0.625, 0.921875, 3.925, 9.0, 44.0, 88.0], np.float32)
    edges = np.concatenate([edges, np.nextafter(edges, 0), np.nextafter(edges, 100)])
    x = np.concatenate([mags, -mags, grid, edges, -edges, [np.inf, -np.inf, 0.0, -0.0]]).astype(np.float32)
    return x.reshape(1, -1)


def run_op(op, x, opset=17, **attrs):
    model = make_model([helper.make_node(op, ["x"], ["y"], **attrs)], [("x", list(x.shape))],
                       [("y", list(x.shape))], opset=opset)
    return dnnx.load(model).run(x), run_ort(model, {"x": x})["y"]


def test_tanh_over_the_float_range():
    x = sweep()
    y, ort = run_op("Tanh", x)
    ref = np.tanh(x.astype(np.float64))
    np.testing.assert_allclose(y, ref, rtol=4 * EPS, atol=4 * EPS)
    np.testing.assert_allclose(y, ort, rtol=1e-6, atol=1e-6)
    assert np.all(np.abs(y) <= 1)
    assert np.array_equal(np.signbit(y), np.signbit(x))  # odd, -0 kept


def test_erf_over_the_float_range():
    x = sweep()
    y, ort = run_op("Erf", x)
    ref = np.array([math.erf(v) for v in x.astype(np.float64).ravel()]).reshape(x.shape)
    np.testing.assert_allclose(y, ref, rtol=4 * EPS, atol=EPS / 2)
    np.testing.assert_allclose(y, ort, rtol=1e-6, atol=1e-7)
    assert np.all(np.abs(y) <= 1)
    assert np.array_equal(np.signbit(y), np.signbit(x))


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_matches_float64_and_onnxruntime(approximate):
    x = np.linspace(-12, 12, 48007, dtype=np.float32).reshape(1, -1)
    y, ort = run_op("Gelu", x, opset=20, approximate=approximate)
    v = x.astype(np.float64)
    if approximate == "none":
        ref = 0.5 * v * (1 + np.array([math.erf(t / math.sqrt(2)) for t in v.ravel()]).reshape(v.shape))
    else:
        ref = 0.5 * v * (1 + np.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3)))
    # Absolute near the zero of 1 + erf (x << 0): a few ulp of |x| there, as in onnxruntime.
    np.testing.assert_allclose(y, ref, rtol=8 * EPS, atol=8 * EPS * np.abs(v).max() * 1e-2 + 1e-7)
    np.testing.assert_allclose(y, ort, rtol=1e-5, atol=1e-6)


def test_exp_over_the_float_range():
    # fast_expf: within 2 ulp of float64's e^x where the result is a normal float, subnormal results
    # within one subnormal step (onnxruntime's), +inf from the first float past ln(FLT_MAX), 0 far
    # below, NaN kept
    x = np.concatenate([sweep().ravel(), np.linspace(-110, 90, 40001, dtype=np.float32),
                        np.array([88.72283, np.nextafter(np.float32(88.72283), np.float32(100)), -86.6, -103.97, -104.0,
                                  np.nan], np.float32)]).astype(np.float32).reshape(1, -1)
    y, ort = run_op("Exp", x)
    with np.errstate(over="ignore", invalid="ignore"):
        ref = np.exp(x.astype(np.float64))
        ref32 = ref.astype(np.float32)
    assert np.array_equal(np.isnan(y), np.isnan(ref32)) and np.array_equal(np.isinf(y), np.isinf(ref32))
    normal = np.isfinite(ref32) & (ref32 >= np.finfo(np.float32).tiny)
    ulp = np.abs(y[normal] - ref[normal]) / np.spacing(ref32[normal]).astype(np.float64)
    assert ulp.max() <= 2, ulp.max()
    tiny = np.isfinite(ref32) & ~normal
    np.testing.assert_allclose(y[tiny], ref[tiny], rtol=0, atol=2e-45)
    np.testing.assert_allclose(y[normal], ort[normal], rtol=4 * EPS)


@pytest.mark.parametrize("op", ["Tanh", "Erf", "Sigmoid", "Exp"])
@pytest.mark.parametrize("n", [1, 7, 8, 9, 15, 16, 17, 31, 33, 1000])
def test_every_tail_length(op, n):
    x = rand(1, n, seed=n) * 3  # Exp: relative 1e-6 is 8 ulp
    y, ort = run_op(op, x)
    np.testing.assert_allclose(y, ort, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("n", [1, 9, 17, 33])
def test_gelu_tails(approximate, n):
    x = rand(3, n, seed=n) * 4
    y, ort = run_op("Gelu", x, opset=20, approximate=approximate)
    np.testing.assert_allclose(y, ort, rtol=1e-5, atol=1e-6)


def test_special_values():
    x = np.array([[np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, -1e-40]], np.float32)
    for op in ("Tanh", "Erf"):
        y, ort = run_op(op, x)
        assert np.isnan(y[0, 0]) and np.isnan(ort[0, 0])
        np.testing.assert_array_equal(y[0, 1:5], [1.0, -1.0, 0.0, -0.0], err_msg=op)
        assert np.array_equal(np.signbit(y[0, 1:5]), np.signbit(ort[0, 1:5])), op
        # Subnormals: tanh(x) = x exactly here (onnxruntime's rational form loses bits: 9.9939e-41),
        # erf(x) = 2x/sqrt(pi) rounded once more.
        np.testing.assert_allclose(y[0, 5:], ort[0, 5:], rtol=0, atol=2e-43, err_msg=op)


def pow_model(x_shape, e_shape, const=True, e_value=None):
    inits = {"e": np.asarray(e_value, np.float32).reshape(e_shape)} if const else {}
    inputs = [("x", list(x_shape))] + ([] if const else [("e", list(e_shape))])
    return make_model([helper.make_node("Pow", ["x", "e"], ["y"])], inputs, [("y", None)], initializers=inits)


@pytest.mark.parametrize("e", [2.0, 3.0, 1.0, 0.5, -1.0, 2.5, 0.0])
@pytest.mark.parametrize("n", [1, 9, 17, 1001])
def test_pow_by_a_scalar_exponent(e, n):
    x = rand(2, n, seed=n) * 3
    x[0, 0] = -0.0
    model = pow_model(x.shape, [], e_value=e)
    got = dnnx.load(model).run(x)
    want = run_ort(model, {"x": x})["y"]
    if e in (2.0, 1.0):  # x * x is correctly rounded, as onnxruntime's pow: the same bits
        np.testing.assert_array_equal(got, want)
    elif e == 3.0:  # x^3 in double, rounded to float: powf's value but for a rare double rounding
        np.testing.assert_allclose(got, want, rtol=EPS, atol=0)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7, equal_nan=True)


def test_pow_exponent_read_at_run_time():
    # The exponent a graph input: the kernel reads its value per call, 2 -> 3 -> 1.7.
    x = rand(4, 13) * 2
    model = pow_model(x.shape, [1], const=False)
    m = dnnx.load(model)
    for e in (2.0, 3.0, 1.7):
        feeds = {"x": x, "e": np.array([e], np.float32)}
        np.testing.assert_allclose(m.run_dict(feeds)["y"], run_ort(model, feeds)["y"], rtol=1e-6, atol=1e-7,
                                   equal_nan=True)


@pytest.mark.parametrize("x_shape, e_shape", [((3, 5), (1, 1)), ((5,), (1, 1, 1)), ((2, 3), (3,)), ((1, 3), (2, 1))])
def test_pow_broadcast_shapes_keep_the_general_loop(x_shape, e_shape):
    x = np.abs(rand(*x_shape)) + 0.5
    e = np.linspace(1, 3, int(np.prod(e_shape)), dtype=np.float32).reshape(e_shape)
    model = pow_model(x_shape, e_shape, e_value=e)
    got = dnnx.load(model).run(x)
    want = run_ort(model, {"x": x})["y"]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("op, attrs, opset", [("Tanh", {}, 17), ("Erf", {}, 17), ("Gelu", {}, 20),
                                              ("Gelu", {"approximate": "tanh"}, 20)])
def test_same_bits_at_one_and_two_threads(op, attrs, opset):
    # 100003 floats: several 16K chunks across the pool (Note [fixed chunks]), and a ragged last one
    x = rand(1, 100003, seed=11) * 4
    model = make_model([helper.make_node(op, ["x"], ["y"], **attrs)], [("x", list(x.shape))],
                       [("y", list(x.shape))], opset=opset)
    assert_same_bits_on_one_and_two_threads(model, x)
