"""Issue #15's unary math ops, Abs, Pow, PRelu, the normalizations and Dropout's mask on the CPU:
the backward of each against float64 finite differences (tests/grad_check.py, with its stated
tolerances), and the forward of the forms the onnx node cases leave out (broadcast slopes and
exponents, LayerNormalization without a bias or on a middle axis, GroupNormalization at opset 18,
Dropout's mask in a plan and in a trainable tail) against onnxruntime or numpy."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

import dnnx
from grad_check import check_gradients
from grad_models_activations import (NORM_CASES, UNARY_OPS, dropout_mask_chain, norm_chain, pow_chain, prelu_chain,
                                     unary_chain)
from ort_check import assert_matches_ort, make_model

RNG = np.random.default_rng(15)


def rand(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


# --- gradients against float64 central differences -------------------------------------------
@pytest.mark.parametrize("case", list(UNARY_OPS))
def test_unary_math_gradient(case):
    check_gradients(*unary_chain(rand, case))


@pytest.mark.parametrize("base_shape, exponent_shape", [((2, 3, 4), (2, 3, 4)), ((2, 3, 4), ()), ((2, 3, 4), (4,)),
                                                        ((2, 3, 4), (3, 1)), ((3, 4), (2, 3, 4))])
def test_pow_gradient(base_shape, exponent_shape):
    check_gradients(*pow_chain(rand, base_shape, exponent_shape))


@pytest.mark.parametrize("slope_shape", [(2, 3, 4, 5), (5,), (3, 1, 1), (1,), (4, 1)])
def test_prelu_gradient(slope_shape):
    check_gradients(*prelu_chain(rand, slope_shape))


@pytest.mark.parametrize("case", list(NORM_CASES))
def test_normalization_gradient(case):
    check_gradients(*norm_chain(rand, case, stash_double=True))


def test_dropout_with_mask_trains_through_the_view():
    check_gradients(*dropout_mask_chain(rand))


# --- forwards the node cases do not cover, against onnxruntime -------------------------------
@pytest.mark.parametrize("case", list(UNARY_OPS))
def test_unary_math_matches_onnxruntime(case):
    model, _, feeds, _ = unary_chain(rand, case)
    assert_matches_ort(model, feeds)


@pytest.mark.parametrize("base_shape, exponent_shape", [((2, 3, 4), ()), ((2, 3, 4), (3, 1)), ((3, 4), (2, 3, 4))])
def test_pow_broadcast_matches_onnxruntime(base_shape, exponent_shape):
    model, _, feeds, _ = pow_chain(rand, base_shape, exponent_shape)
    assert_matches_ort(model, feeds)


def test_pow_integer_exponent():
    # A float base with an int64 exponent graph input: the exponent is converted to float.
    model = make_model([helper.make_node("Pow", ["x", "e"], ["y"])],
                       [("x", [2, 3]), ("e", [3], TensorProto.INT64)], [("y", None)])
    x = rand(2, 3)
    e = np.array([0, 2, 3], np.int64)
    np.testing.assert_allclose(dnnx.load(model).run_dict({"x": x, "e": e})["y"], x ** e.astype(np.float32),
                               rtol=1e-6)


@pytest.mark.parametrize("slope_shape", [(5,), (3, 1, 1), (1,)])
def test_prelu_broadcast_matches_onnxruntime(slope_shape):
    model, _, feeds, _ = prelu_chain(rand, slope_shape)
    assert_matches_ort(model, feeds)


@pytest.mark.parametrize("case", list(NORM_CASES))
def test_normalization_matches_onnxruntime(case):
    model, _, feeds, _ = norm_chain(rand, case)
    assert_matches_ort(model, feeds)


def test_group_normalization_18_scales_per_group():
    # Opset 18's scale and bias are per group: y = xhat * scale[g] + bias[g] over each group's C/G
    # channels and every position. onnx.checker refuses GroupNormalization-18 (deprecated), so
    # the importer does too: the IR is built by hand, past it, against numpy in float64.
    from dnnx._native import core

    x, scale, bias = rand(2, 6, 3, 4), rand(2), rand(2)
    ir = {"opset": 18, "inputs": [("x", [2, 6, 3, 4], "float32")], "outputs": ["y"],
          "constants": {"s": scale, "b": bias},
          "nodes": [("GroupNormalization", "gn", ["x", "s", "b"], ["y"],
                     {"num_groups": ("int", 2), "epsilon": ("float", 1e-3)})]}
    (y,) = core.Engine(ir, "cpu").run([x])
    h = x.astype(np.float64).reshape(2, 2, -1)
    xhat = (h - h.mean(axis=2, keepdims=True)) / np.sqrt(h.var(axis=2, keepdims=True) + 1e-3)
    want = (xhat * scale[None, :, None] + bias[None, :, None]).reshape(2, 6, 3, 4)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)


def test_layer_normalization_statistics_outputs():
    model = make_model([helper.make_node("LayerNormalization", ["x", "s"], ["y", "mean", "inv_std"], axis=1)],
                       [("x", [3, 4, 5])], [("y", None), ("mean", None), ("inv_std", None)], {"s": rand(4, 5)})
    got = assert_matches_ort(model, {"x": rand(3, 4, 5)})
    assert got["mean"].shape == (3, 1, 1)


# --- Dropout's mask ---------------------------------------------------------------------------
def test_dropout_mask_is_all_true_and_planned_beside_the_view():
    model = make_model([helper.make_node("Dropout", ["x"], ["y", "mask"])], [("x", [3, 4])],
                       [("y", [3, 4]), ("mask", [3, 4], TensorProto.BOOL)], opset=13)
    m = dnnx.load(model)
    x = rand(3, 4)
    out = m.run_dict({"x": x})
    np.testing.assert_array_equal(out["y"], x)
    assert out["mask"].dtype == np.bool_ and out["mask"].all()
    (row,) = [r for r in m.plan() if r["op"] == "Dropout"]
    assert row["algorithm"] == "view (no copy), mask fill (all kept)", row


def test_dropout_mask_before_opset_10_is_ones_of_x_type():
    model = make_model([helper.make_node("Dropout", ["x"], ["y", "mask"])], [("x", [2, 3])],
                       [("y", [2, 3]), ("mask", [2, 3])], opset=9)
    out = dnnx.load(model).run_dict({"x": rand(2, 3)})
    assert out["mask"].dtype == np.float32
    np.testing.assert_array_equal(out["mask"], np.ones((2, 3), np.float32))


def test_dropout_mask_of_a_constant_folds_true():
    # A Dropout of a constant folds at load: its mask must come out true there as well.
    c = rand(2, 3)
    nodes = [helper.make_node("Dropout", ["c"], ["d", "mask"]), helper.make_node("Add", ["x", "d"], ["y"])]
    model = make_model(nodes, [("x", [2, 3])], [("y", None), ("mask", [2, 3], TensorProto.BOOL)], {"c": c}, opset=13)
    out = dnnx.load(model).run_dict({"x": np.zeros((2, 3), np.float32)})
    np.testing.assert_array_equal(out["y"], c)
    assert out["mask"].all()
