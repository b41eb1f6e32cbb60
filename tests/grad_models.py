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
