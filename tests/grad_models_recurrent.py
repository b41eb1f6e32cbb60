"""Small GRU and RNN models for the gradient checks (tests/test_gradients_recurrent.py), and a
float64 RNN for onnx's reference evaluator, whose own RNN runs Tanh only."""
from __future__ import annotations

import numpy as np
from onnx import helper
from onnx.reference.op_run import OpRun

from ort_check import make_model

GATES = {"GRU": 3, "RNN": 1}
_ACTIVATIONS = {"tanh": np.tanh, "relu": lambda v: np.maximum(v, 0.0), "sigmoid": lambda v: 1.0 / (1.0 + np.exp(-v))}


class RNN(OpRun):
    """ONNX RNN with one activation per direction (Tanh, Relu or Sigmoid), both layouts,
    initial_h; no clip, no sequence_lens (what the gradient checks use)."""

    op_domain = ""

    def _run(self, X, W, R, B=None, sequence_lens=None, initial_h=None, activation_alpha=None,  # noqa: ARG002
             activation_beta=None, activations=None, clip=None, direction=None, hidden_size=None,  # noqa: ARG002
             layout=None):
        nd, hidden = W.shape[0], R.shape[-1]
        names = list(self.activations or ["Tanh"] * nd)
        names = names * nd if len(names) == 1 else names
        if layout == 1:
            X = np.swapaxes(X, 0, 1)
            initial_h = None if initial_h is None else np.swapaxes(initial_h, 0, 1)
        seq, batch = X.shape[:2]
        B = np.zeros((nd, 2 * hidden), X.dtype) if B is None else B
        h0 = np.zeros((nd, batch, hidden), X.dtype) if initial_h is None else initial_h
        Y = np.zeros((seq, nd, batch, hidden), X.dtype)
        Y_h = np.zeros((nd, batch, hidden), X.dtype)
        for d in range(nd):
            f = _ACTIVATIONS[names[d].lower()]
            h = h0[d]
            reverse = self.direction == "reverse" or d == 1
            for t in (reversed(range(seq)) if reverse else range(seq)):
                h = f(X[t] @ W[d].T + h @ R[d].T + B[d, :hidden] + B[d, hidden:])
                Y[t, d] = h
            Y_h[d] = h
        if layout == 1:
            Y, Y_h = Y.transpose(2, 0, 1, 3), Y_h.transpose(1, 0, 2)
        return (Y, Y_h)


def recurrent_through_time(rand, op, *, direction="forward", layout=0, S=4, B=3, I=5, H=4, bias=True,
                           initial_h=True, **attrs):
    """x * q -> GRU/RNN (W, R, B, initial_h trainable) -> Y: (model, trainable, feeds, MSE target)."""
    g, D = GATES[op], 2 if direction == "bidirectional" else 1
    x_shape = (S, B, I) if layout == 0 else (B, S, I)
    state_shape = (D, B, H) if layout == 0 else (B, D, H)
    inits = {"q": rand(*x_shape), "W": rand(D, g * H, I, scale=0.4), "R": rand(D, g * H, H, scale=0.4)}
    if bias:
        inits["Bias"] = rand(D, 2 * g * H, scale=0.3)
    if initial_h:
        inits["h0"] = rand(*state_shape, scale=0.5)
    inputs = ["xq", "W", "R", "Bias" if bias else "", "", "h0" if initial_h else ""]
    while not inputs[-1]:
        inputs.pop()
    if layout:
        attrs["layout"] = layout
    nodes = [helper.make_node("Mul", ["x", "q"], ["xq"]),
             helper.make_node(op, inputs, ["y", "yh"], hidden_size=H, direction=direction, **attrs)]
    model = make_model(nodes, [("x", list(x_shape))], [("y", None)], inits)
    y_shape = (S, D, B, H) if layout == 0 else (B, S, D, H)
    return model, list(inits), {"x": rand(*x_shape)}, rand(*y_shape)


def recurrent_last_hidden_state(rand, op, S: int, B: int, H: int, **attrs):
    """x [S, B, 3] -> GRU/RNN -> Y_h alone -> Squeeze -> Gemm -> [B, 3] logits (for a
    cross-entropy loss): BPTT starts from dY_h, and no dY is given. (model, trainable, feeds)."""
    I, g = 3, GATES[op]
    inits = {"W": rand(1, g * H, I, scale=0.5), "R": rand(1, g * H, H, scale=0.5),
             "Bias": rand(1, 2 * g * H, scale=0.2), "w_out": rand(H, 3)}
    nodes = [helper.make_node(op, ["x", "W", "R", "Bias"], ["", "yh"], hidden_size=H, **attrs),
             helper.make_node("Squeeze", ["yh", "axes"], ["h"]), helper.make_node("Gemm", ["h", "w_out"], ["y"])]
    model = make_model(nodes, [("x", [S, B, I])], [("y", None)], {**inits, "axes": np.array([0], np.int64)})
    return model, list(inits), {"x": rand(S, B, I)}
