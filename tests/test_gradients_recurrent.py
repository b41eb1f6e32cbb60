"""GRU's and RNN's backward (back-propagation through time) against float64 finite differences
(tests/grad_check.py): gradients of X (through a trainable Mul upstream), W, R, B and initial_h."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

import dnnx
from grad_check import check_gradients
from grad_models_recurrent import RNN, recurrent_last_hidden_state, recurrent_through_time
from ort_check import make_model

RNG = np.random.default_rng(11)
DIRECTIONS = pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])


def rand(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


@DIRECTIONS
@pytest.mark.parametrize("layout", [0, 1])
@pytest.mark.parametrize("lbr", [0, 1])
def test_gru(direction, layout, lbr):
    check_gradients(*recurrent_through_time(rand, "GRU", direction=direction, layout=layout, linear_before_reset=lbr))


@DIRECTIONS
@pytest.mark.parametrize("layout", [0, 1])
def test_rnn_tanh(direction, layout):
    check_gradients(*recurrent_through_time(rand, "RNN", direction=direction, layout=layout))


@pytest.mark.parametrize("activations", [["Relu"], ["Sigmoid"], ["Relu", "Sigmoid"], ["Sigmoid", "Tanh"]])
def test_rnn_activations(activations):
    direction = "bidirectional" if len(activations) == 2 else "reverse"
    check_gradients(*recurrent_through_time(rand, "RNN", direction=direction, activations=activations),
                    reference_ops=[RNN])


@pytest.mark.parametrize("op,attrs", [("GRU", {}), ("GRU", {"linear_before_reset": 1}), ("RNN", {})])
def test_without_bias_and_initial_h(op, attrs):
    check_gradients(*recurrent_through_time(rand, op, bias=False, initial_h=False, S=3, B=2, **attrs))


@pytest.mark.parametrize("op,attrs", [("GRU", {}), ("GRU", {"linear_before_reset": 1}), ("RNN", {})])
def test_loss_on_the_last_hidden_state(op, attrs):
    B = 2
    check_gradients(*recurrent_last_hidden_state(rand, op, S=5, B=B, H=4, **attrs), RNG.integers(0, 3, size=B),
                    loss="cross_entropy")


@pytest.mark.parametrize("op", ["GRU", "RNN"])
def test_training_refuses_clip_and_sequence_lens(op):
    S, B, I, H, g = 3, 2, 3, 2, {"GRU": 3, "RNN": 1}[op]
    inits = {"W": rand(1, g * H, I), "R": rand(1, g * H, H)}
    clipped = make_model([helper.make_node(op, ["x", "W", "R"], ["y"], hidden_size=H, clip=1.0)],
                         [("x", [S, B, I])], [("y", None)], inits)
    with pytest.raises(dnnx.UnsupportedModelError, match="clip"):
        dnnx.load(clipped).finetune(trainable="all", loss="mse")
    lens = make_model([helper.make_node(op, ["x", "W", "R", "", "lens"], ["y"], hidden_size=H)],
                      [("x", [S, B, I]), ("lens", [B], 6)], [("y", None)], inits)
    with pytest.raises(dnnx.UnsupportedModelError, match="sequence_lens"):
        dnnx.load(lens).finetune(trainable="all", loss="mse")
