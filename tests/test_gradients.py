"""Every op's backward against float64 finite differences (tests/grad_check.py): small models
whose trainable parameters sit upstream of the op, so the gradient flows through it."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from grad_check import check_gradients
from ort_check import make_model

RNG = np.random.default_rng(7)


def rand(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def mse_target(shape):
    return rand(*shape)


# --- Gemm -----------------------------------------------------------------------------------
GEMM_C_SHAPES = [None, (5,), (1, 5), (3, 1), (3, 5), ()]


@pytest.mark.parametrize("trans_a", [0, 1])
@pytest.mark.parametrize("trans_b", [0, 1])
@pytest.mark.parametrize("c_shape", GEMM_C_SHAPES)
def test_gemm(trans_a, trans_b, c_shape):
    # x [3,4] -> Gemm(W1 [4,6]) -> h [3,6] -> Gemm(op(A) = h or h^T, op(B), C) -> [3 or 6, 5]
    a_rows = 6 if trans_a else 3
    c_shape = None if (trans_a and c_shape in [(3, 1), (3, 5)]) else c_shape
    w2 = rand(5, 6 if not trans_a else 3) if trans_b else rand(6 if not trans_a else 3, 5)
    inits = {"w1": rand(4, 6), "w2": w2}
    inputs = ["h", "w2"]
    if c_shape is not None:
        inits["c"] = rand(*c_shape)
        inputs.append("c")
    nodes = [helper.make_node("Gemm", ["x", "w1"], ["h"]),
             helper.make_node("Gemm", inputs, ["y"], transA=trans_a, transB=trans_b, alpha=0.7, beta=1.3)]
    model = make_model(nodes, [("x", [3, 4])], [("y", None)], inits)
    check_gradients(model, list(inits), {"x": rand(3, 4)}, mse_target((a_rows, 5)))


# --- activations ------------------------------------------------------------------------------
@pytest.mark.parametrize("op", ["Relu", "Sigmoid", "Tanh"])
def test_activation(op):
    inits = {"w1": rand(4, 8), "b1": rand(8, scale=0.1), "w2": rand(8, 3)}
    nodes = [helper.make_node("Gemm", ["x", "w1", "b1"], ["h"]), helper.make_node(op, ["h"], ["a"]),
             helper.make_node("Gemm", ["a", "w2"], ["y"])]
    model = make_model(nodes, [("x", [5, 4])], [("y", None)], inits)
    check_gradients(model, list(inits), {"x": rand(5, 4)}, mse_target((5, 3)))


# --- Softmax / LogSoftmax ---------------------------------------------------------------------
@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
@pytest.mark.parametrize("axis", [1, -1, 0])
def test_softmax_inside(op, axis):
    # x [4,3] -> Gemm -> [4,6] -> Reshape [4,2,3] -> softmax(axis) -> mse
    inits = {"w": rand(3, 6), "shape": np.array([4, 2, 3], dtype=np.int64)}
    nodes = [helper.make_node("Gemm", ["x", "w"], ["h"]), helper.make_node("Reshape", ["h", "shape"], ["r"]),
             helper.make_node(op, ["r"], ["y"], axis=axis)]
    model = make_model(nodes, [("x", [4, 3])], [("y", None)], inits)
    check_gradients(model, ["w"], {"x": rand(4, 3)}, mse_target((4, 2, 3)))


@pytest.mark.parametrize("final, scores", [("Softmax", "probs"), ("LogSoftmax", "log_probs"), (None, "logits")])
def test_cross_entropy(final, scores):
    inits = {"w": rand(6, 10), "b": rand(10, scale=0.1)}
    nodes = [helper.make_node("Gemm", ["x", "w", "b"], ["z" if final else "y"])]
    if final:
        nodes.append(helper.make_node(final, ["z"], ["y"], axis=1))
    model = make_model(nodes, [("x", [8, 6])], [("y", None)], inits)
    labels = RNG.integers(0, 10, size=8)
    check_gradients(model, list(inits), {"x": rand(8, 6)}, labels, loss="cross_entropy", scores=scores)


def test_flatten_and_shared_weight_fan_in():
    # One weight read by two Gemms (fan-in), through Flatten: the contributions add up.
    inits = {"w": rand(6, 6, scale=0.5)}
    nodes = [helper.make_node("Flatten", ["x"], ["f"], axis=1), helper.make_node("Gemm", ["f", "w"], ["h"]),
             helper.make_node("Tanh", ["h"], ["t"]), helper.make_node("Gemm", ["t", "w"], ["y"])]
    model = make_model(nodes, [("x", [4, 2, 3])], [("y", None)], inits)
    check_gradients(model, ["w"], {"x": rand(4, 2, 3)}, mse_target((4, 6)))
