"""Relu, Sigmoid and Tanh on the CPU over the whole float range: Sigmoid and Tanh run on the
branch-free exp of engine/backends/cpu/runtime/fast_math.h, whose relative error is at most 2 ulp; checked
here against float64 (and onnxruntime) from tiny values to overflow, NaN and the infinities."""
import numpy as np
import pytest
from onnx import helper

import dnnx
from ort_check import make_model, run_ort


def sweep():
    # Every binade of the float range, both signs, plus the points where exp under/overflows.
    mags = np.geomspace(1e-30, 3e38, 4000).astype(np.float32)
    edges = np.array([0, 1e-45, 87.3, 88.7, 89.0, 103.9, 104.0], np.float32)
    x = np.concatenate([mags, -mags, edges, -edges, [np.inf, -np.inf]]).astype(np.float32)
    return x.reshape(1, -1)


def run_op(op, x):
    model = make_model([helper.make_node(op, ["x"], ["y"])], [("x", list(x.shape))], [("y", list(x.shape))])
    return dnnx.load(model).run(x), run_ort(model, {"x": x})["y"]


def test_sigmoid_within_a_few_ulp_of_float64():
    x = sweep()
    y, ort = run_op("Sigmoid", x)
    ref = 1.0 / (1.0 + np.exp(-x.astype(np.float64)))
    # 2 ulp from exp, one rounding each for the add and the division: 4 ulp of the result, and
    # an absolute floor of float32's smallest normal for results that underflow.
    np.testing.assert_allclose(y, ref, rtol=4 * np.finfo(np.float32).eps, atol=np.finfo(np.float32).tiny)
    # onnxruntime's own sigmoid is an approximation: 1e-7 absolute apart from float64 where the
    # result is tiny (x < -16), so it is the looser reference here.
    np.testing.assert_allclose(y, ort, rtol=1e-6, atol=1e-7)
    assert np.all((y >= 0) & (y <= 1))


def test_tanh_within_a_few_ulp_of_float64():
    x = sweep()
    y, ort = run_op("Tanh", x)
    ref = np.tanh(x.astype(np.float64))
    # Near 0, tanh is computed from exp(2x) - 1: cancellation costs relative accuracy, so the
    # bound there is absolute (a few ulp of 1).
    np.testing.assert_allclose(y, ref, rtol=4 * np.finfo(np.float32).eps, atol=4 * np.finfo(np.float32).eps)
    np.testing.assert_allclose(y, ort, rtol=1e-6, atol=1e-6)
    assert np.all(np.abs(y) <= 1)


@pytest.mark.parametrize("op, expected", [("Sigmoid", 0.5), ("Tanh", 0.0), ("Relu", 0.0)])
def test_nan_and_zero(op, expected):
    x = np.array([[np.nan, 0.0, -0.0]], np.float32)
    y, _ = run_op(op, x)
    assert np.isnan(y[0, 0]) and y[0, 1] == expected and y[0, 2] == expected


def test_relu_is_exact():
    x = sweep()
    y, ort = run_op("Relu", x)
    np.testing.assert_array_equal(y, np.maximum(x, 0))
    np.testing.assert_array_equal(y, ort)


def test_hard_swish_is_the_division_bit_for_bit():
    """Note [hard swish without a division] (engine/backends/cpu/elementwise/hard_swish_cpu.cc):
    x * max(0, min(1, x / 6 + 0.5)) with x / 6 rounded as IEEE's, over float bit patterns from
    every binade (an odd count: the masked tail), the infinities, NaN and the clamp's ends."""
    bits = np.arange(0, 2**32, 4093, dtype=np.uint64).astype(np.uint32)
    x = np.concatenate([bits.view(np.float32), np.array([np.inf, -np.inf, np.nan, -3.5, -3, 3, 3.5, -0.0, 1e-38,
                                                         -1e-45, 2.9999998, -3.0000002], np.float32)])
    x = x[: x.size // 2 * 2 + 1].reshape(1, -1)
    y, _ = run_op("HardSwish", x)
    with np.errstate(invalid="ignore", over="ignore"):
        v = x / np.float32(6) + np.float32(0.5)
        f = np.where(v < 1, v, np.float32(1))  # std::min(1, v): 1 for NaN
        f = np.where(f > 0, f, np.float32(0))  # std::max(0, f): +0 for -0
        want = (x * f).astype(np.float32)
    same = (y.view(np.uint32) == want.view(np.uint32)) | (np.isnan(y) & np.isnan(want))
    assert same.all(), x[~same][:8]
