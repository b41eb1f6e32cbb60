"""Gradient test models shared by the CPU tests (tests/test_gradients.py, against finite
differences) and the CUDA ones (tests/cuda/test_cuda_*_grads.py, against the CPU). Each builder
takes the test file's `rand(*shape, scale=1.0)`, so that every file keeps its own seeded draws."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from onnx import helper

from ort_check import make_model

# Gemm's C shapes: none, [N], [1, N], [M, 1], [M, N] and a scalar.
GEMM_C_SHAPES = [None, (5,), (1, 5), (3, 1), (3, 5), ()]


def gemm_chain(rand, trans_a: int, trans_b: int, c_shape):
    """x [3,4] -> Gemm(W1 [4,6]) -> h [3,6] -> Gemm(op(A) = h or h^T, op(B), C) -> [3 or 6, 5], with
    alpha 0.7 and beta 1.3: (model, trainable, feeds, MSE target)."""
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
    return model, list(inits), {"x": rand(3, 4)}, rand(a_rows, 5)


def conv1d_time_batch_channel(rand, pad: int) -> SimpleNamespace:
    """Issue #4's 1-D conv: a [T, B, C] sequence model written as Transpose -> Conv -> Transpose,
    with the closed forms of its output and MSE gradients in float64 (x_p is x padded by `pad`
    steps at both ends, w[k, ci, co] = W[co, ci, k]):
        y[t, b, co]       = b[co] + sum_k sum_ci x_p[t + k, b, ci] w[k, ci, co],  T_out = T + 2 pad - K + 1
        dL/dx_p[t, b, ci] = sum_k sum_co dL/dy[t - k, b, co] w[k, ci, co]
        dL/dw[k, ci, co]  = sum_b sum_t x_p[t + k, b, ci] dL/dy[t, b, co]
        dL/db[co]         = sum_b sum_t dL/dy[t, b, co]
    The input is an initializer (x0, added to a zero graph input) so that dL/dx is a parameter
    gradient. Fields: model, zeros (the graph input), target, y, and grads {x0, W [K, CI, CO], bias}."""
    T, B, CI, CO, K = 9, 3, 4, 5, 3
    x = rand(T, B, CI)
    W = rand(CO, CI, K, scale=0.4)
    bias = rand(CO, scale=0.1)
    nodes = [helper.make_node("Add", ["z", "x0"], ["xs"]),
             helper.make_node("Transpose", ["xs"], ["xt"], perm=[1, 2, 0]),                    # [B, CI, T]
             helper.make_node("Conv", ["xt", "W", "bias"], ["c"], kernel_shape=[K], pads=[pad, pad]),
             helper.make_node("Transpose", ["c"], ["y"], perm=[2, 0, 1])]                      # [T_out, B, CO]
    model = make_model(nodes, [("z", [T, B, CI])], [("y", None)], {"x0": x, "W": W, "bias": bias})
    t_out = T + 2 * pad - K + 1
    target = rand(t_out, B, CO)

    xp = np.zeros((T + 2 * pad, B, CI))
    xp[pad:pad + T] = x
    w = W.astype(np.float64).transpose(2, 1, 0)  # [K, CI, CO]
    y = bias.astype(np.float64) + sum(np.einsum("tbi,io->tbo", xp[k:k + t_out], w[k]) for k in range(K))
    dy = 2 * (y - target) / y.size
    dxp = np.zeros_like(xp)
    for k in range(K):
        dxp[k:k + t_out] += np.einsum("tbo,io->tbi", dy, w[k])
    dw = np.stack([np.einsum("tbi,tbo->io", xp[k:k + t_out], dy) for k in range(K)])
    db = dy.sum(axis=(0, 1))
    return SimpleNamespace(model=model, zeros=np.zeros((T, B, CI), np.float32), target=target, y=y,
                           grads={"x0": dxp[pad:pad + T], "W": dw, "bias": db})


def assert_conv1d_formulas(case: SimpleNamespace, y, grads: dict) -> None:
    """A run's output and gradients (W as ONNX's [CO, CI, K]) against conv1d_time_batch_channel's
    closed forms, at fp32 tolerances."""
    np.testing.assert_allclose(y, case.y, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(grads["x0"], case.grads["x0"], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(grads["W"].transpose(2, 1, 0), case.grads["W"], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(grads["bias"], case.grads["bias"], rtol=1e-4, atol=1e-6)


def activation_chain(rand, op: str):
    """x [5,4] -> Gemm(W1, b1) -> op (Relu, Sigmoid, Tanh) -> Gemm(W2) -> [5,3]: (model, trainable,
    feeds, MSE target)."""
    inits = {"w1": rand(4, 8), "b1": rand(8, scale=0.1), "w2": rand(8, 3)}
    nodes = [helper.make_node("Gemm", ["x", "w1", "b1"], ["h"]), helper.make_node(op, ["h"], ["a"]),
             helper.make_node("Gemm", ["a", "w2"], ["y"])]
    model = make_model(nodes, [("x", [5, 4])], [("y", None)], inits)
    return model, list(inits), {"x": rand(5, 4)}, rand(5, 3)


def softmax_inside(rand, op: str, axis: int):
    """x [4,3] -> Gemm -> [4,6] -> Reshape [4,2,3] -> op (Softmax, LogSoftmax) over `axis`:
    (model, trainable, feeds, MSE target)."""
    inits = {"w": rand(3, 6), "shape": np.array([4, 2, 3], dtype=np.int64)}
    nodes = [helper.make_node("Gemm", ["x", "w"], ["h"]), helper.make_node("Reshape", ["h", "shape"], ["r"]),
             helper.make_node(op, ["r"], ["y"], axis=axis)]
    model = make_model(nodes, [("x", [4, 3])], [("y", None)], inits)
    return model, ["w"], {"x": rand(4, 3)}, rand(4, 2, 3)



def lstm_last_hidden_state(rand, S: int, B: int, H: int):
    """x [S, B, 3] -> LSTM -> Y_h alone -> Squeeze -> Gemm -> [B, 3] logits (for a cross-entropy
    loss): BPTT starts from dY_h, and no dY is given. (model, trainable, feeds)."""
    I = 3
    inits = {"W": rand(1, 4 * H, I, scale=0.5), "R": rand(1, 4 * H, H, scale=0.5), "Bias": rand(1, 8 * H, scale=0.2),
             "w_out": rand(H, 3)}
    nodes = [helper.make_node("LSTM", ["x", "W", "R", "Bias"], ["", "yh"], hidden_size=H),
             helper.make_node("Squeeze", ["yh", "axes"], ["h"]), helper.make_node("Gemm", ["h", "w_out"], ["y"])]
    model = make_model(nodes, [("x", [S, B, I])], [("y", None)], {**inits, "axes": np.array([0], np.int64)})
    return model, list(inits), {"x": rand(S, B, I)}


def transpose_chain(rand, perm: list):
    """x [2,3,4] * q -> Transpose(perm): (model, trainable, feeds, MSE target)."""
    inits = {"q": rand(2, 3, 4)}
    nodes = [helper.make_node("Mul", ["x", "q"], ["h"]), helper.make_node("Transpose", ["h"], ["y"], perm=perm)]
    model = make_model(nodes, [("x", [2, 3, 4])], [("y", None)], inits)
    return model, ["q"], {"x": rand(2, 3, 4)}, rand(*[[2, 3, 4][p] for p in perm])


def concat_branches(rand, axis: int):
    """Two branches of trainable weights and the plain input x [2,3,4], joined by Concat(axis):
    fan-in through Concat. (model, trainable, feeds, MSE target)."""
    inits = {"q": rand(2, 3, 4), "p": rand(2, 3, 4)}
    nodes = [helper.make_node("Mul", ["x", "q"], ["h1"]), helper.make_node("Tanh", ["h1"], ["h2"]),
             helper.make_node("Mul", ["h2", "p"], ["h3"]),
             helper.make_node("Concat", ["h1", "x", "h3"], ["y"], axis=axis)]
    model = make_model(nodes, [("x", [2, 3, 4])], [("y", None)], inits)
    out_shape = [d.dim_value for d in model.graph.output[0].type.tensor_type.shape.dim]
    return model, list(inits), {"x": rand(2, 3, 4)}, rand(*out_shape)


def overflowing_gradients():
    """x [8, 4] -> Gemm(w1, b1) -> h [8, 3] -> Gemm(w2, b2) -> y [8, 2], every value positive, and
    an MSE target of -3e38: the loss (summed in float64) stays finite, but dL/dy is ~3.75e37 per
    element (2 (y - t) / 16), so dL/dw2 = h^T dL/dy (h ~ 100s, 8 rows) and dL/dw1 overflow float32
    while dL/db1 and dL/db2 (~3e38) do not. The first parameter with a non-finite gradient is
    w1. Returns (model, x, a finite target, the overflowing target)."""
    rng = np.random.default_rng(7)
    inits = {"w1": np.abs(rng.standard_normal((4, 3))).astype(np.float32) + 0.1,
             "b1": np.full(3, 0.5, np.float32),
             "w2": np.abs(rng.standard_normal((3, 2))).astype(np.float32) + 0.1,
             "b2": np.full(2, 0.5, np.float32)}
    nodes = [helper.make_node("Gemm", ["x", "w1", "b1"], ["h"]), helper.make_node("Gemm", ["h", "w2", "b2"], ["y"])]
    model = make_model(nodes, [("x", [8, 4])], [("y", [8, 2])], inits)
    x = (100.0 + rng.random((8, 4))).astype(np.float32)
    return model, x, rng.standard_normal((8, 2)).astype(np.float32), np.full((8, 2), -3e38, np.float32)
