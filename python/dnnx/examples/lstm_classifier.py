"""A sequence classifier: one forward LSTM (hidden 32) over [T=16, N, F=8] (time-major, symbolic
batch N); its last hidden state goes through a 10-way Gemm and Softmax."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from ._graph import finish_model, float_input, initializers

STEPS, FEATURES, HIDDEN, CLASSES = 16, 8, 32, 10


def build_lstm_classifier(seed: int = 0) -> onnx.ModelProto:
    rng = np.random.default_rng(seed)
    # PyTorch's LSTM/Linear default: uniform(-1/sqrt(H), 1/sqrt(H)) keeps the gates out of saturation.
    bound = 1.0 / np.sqrt(HIDDEN)

    def uniform(*shape):
        return rng.uniform(-bound, bound, size=shape).astype(np.float32)

    weights = {
        "lstm.W": uniform(1, 4 * HIDDEN, FEATURES),     # gates i, o, f, c stacked (ONNX order)
        "lstm.R": uniform(1, 4 * HIDDEN, HIDDEN),
        "lstm.B": uniform(1, 8 * HIDDEN),               # Wb and Rb, concatenated
        "squeeze.axes": np.array([0], dtype=np.int64),  # Y_h is [num_directions=1, N, H]
        "fc.w": uniform(CLASSES, HIDDEN),
        "fc.b": uniform(CLASSES),
    }
    nodes = [
        # Only Y_h (the last step's hidden state) is needed, so the Y output is left unnamed.
        helper.make_node("LSTM", ["x", "lstm.W", "lstm.R", "lstm.B"], ["", "h_last"], name="lstm",
                         hidden_size=HIDDEN),                                              # [1,N,H]
        helper.make_node("Squeeze", ["h_last", "squeeze.axes"], ["h"], name="squeeze"),    # [N,H]
        helper.make_node("Gemm", ["h", "fc.w", "fc.b"], ["logits"], name="fc", transB=1),  # [N,10]
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=1),
    ]
    graph = helper.make_graph(nodes, "lstm_classifier", [float_input("x", [STEPS, "N", FEATURES])],
                              [float_input("probs", ["N", CLASSES])], initializer=initializers(weights))
    return finish_model(graph, f"LSTM sequence classifier with random weights (seed {seed}); untrained.")
