"""Training LSTM layers on CUDA against the CPU trainer: the layer's forward is cuDNN's
training-mode cudnnRNNForward, whose reserve space the backward reads (Note [training forward] in
engine/runtime/training.h), and stacked layers in the trainable tail train as ONE multi-layer
cuDNN RNN (LSTMStack: forward, backward data and backward weights one call each; Note [stacked
LSTMs in training] in engine/train/tail_fusion.h). Covered: the gradients of a stack (through Y,
Y_h, Y_c; into X; with frozen layers inside), SGD steps (weights and losses), trainable="last:1"
and "last:2" on a stack (the frozen layers run in the head), chains the stack does not take
(bidirectional, reverse) falling back to one call per layer, the fuse_lstm_stack switch,
deterministic=True, graph replay against eager steps, kept memory and refused sequence_lens.
Models: tests/test_lstm_stack.py's stacked_lstm (the same ones the inference fusion is tested on).

Tolerances (fp32, FMA math on both sides, no TF32): one gradient as in test_cuda_layer_grads.py
(elementwise RTOL 1e-4 + ATOL 2e-5 x max|cpu|, relative L2 5e-5; TF32 would show 1e-4..1e-3).
The deep case (4 layers x 24 steps, hidden 32) sums longer chains of fp32 products, each step's
rounding fed back through R and on into the next layer, so it gets DEEP_ATOL / DEEP_L2, the
stacked forward's bounds (tests/test_lstm_stack.py) widened for the backward's second recurrence;
a wrong gate, layer or direction is off by O(1). After STEPS SGD steps (momentum 0.9), each
step's loss agrees to LOSS_RTOL and the weights to WEIGHT_L2 (relative L2): the step's
gradient differences (~1e-6 relative) compound through the updates.
"""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

import dnnx
from ort_check import make_model, rand
from test_cuda_layer_grads import assert_grad_close  # the same RTOL; ATOL and L2 passed where they differ
from test_lstm_stack import stacked_lstm

RTOL = 1e-4
ATOL = 2e-5
L2 = 5e-5
DEEP_ATOL = 5e-4
DEEP_L2 = 2e-4
LOSS_RTOL = 1e-5
STEPS = 5
STEP_LOSS_RTOL = 1e-4
WEIGHT_L2 = 1e-4
OFF = {"passes": {"fuse_lstm_stack": False}}


def target_for(model, feeds, seed=5):
    """An MSE target of the model's first output's shape."""
    shape = dnnx.load(model).run_dict(feeds)[model.graph.output[0].name].shape
    return 0.5 * rand(*shape, seed=seed)


def tuner(model, device, trainable, **load_kwargs):
    return dnnx.load(model, device=device, **load_kwargs).finetune(trainable=trainable, loss="mse", lr=0.05,
                                                                    momentum=0.9)


def backward_rows(t, op):
    return [row for row in t.plan() if row["stage"] == "backward" and row["op"] == f"{op} backward"]


def check_gradients(model, feeds, trainable, atol=ATOL, l2=L2, **load_kwargs):
    """CUDA's loss and gradients against the CPU's; returns the CUDA tuner."""
    x = list(feeds.values())
    y = target_for(model, feeds)
    want_loss, want = tuner(model, "cpu", trainable).gradients(x, y)
    gpu = tuner(model, "cuda", trainable, **load_kwargs)
    got_loss, got = gpu.gradients(x, y)
    np.testing.assert_allclose(got_loss, want_loss, rtol=LOSS_RTOL, err_msg="loss")
    assert set(got) == set(want)
    for name in want:
        assert_grad_close(got[name], want[name], f"d{name} (cuda vs cpu)", atol, l2)
    return gpu


def train(model, feeds, device, trainable="all", steps=STEPS, **load_kwargs):
    """(losses, weights, tuner) after `steps` SGD steps on one batch."""
    x, y = list(feeds.values()), target_for(model, feeds)
    t = tuner(model, device, trainable, **load_kwargs)
    losses = np.array([t.step(x, y) for _ in range(steps)])
    return losses, t.weights(), t


def assert_steps_follow_the_cpu(model, feeds, trainable="all", **load_kwargs):
    cpu_losses, cpu_w, _ = train(model, feeds, "cpu", trainable)
    gpu_losses, gpu_w, t = train(model, feeds, "cuda", trainable, **load_kwargs)
    np.testing.assert_allclose(gpu_losses, cpu_losses, rtol=STEP_LOSS_RTOL)
    assert abs(gpu_losses[-1] - gpu_losses[0]) > 1e-3 * gpu_losses[0], "the steps changed nothing"
    for name in cpu_w:
        g, w = gpu_w[name].astype(np.float64), cpu_w[name].astype(np.float64)
        rel = np.linalg.norm(g - w) / np.linalg.norm(w)
        assert rel <= WEIGHT_L2, f"{name}: relative L2 error {rel:.3g} after {STEPS} steps"
    return t


def scaled_input(model, feeds):
    """x_in * q -> X in front of the stack (q [inp], a parameter): the stack's dX reaches q."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    g.input[0].name = "x_in"
    width = g.input[0].type.tensor_type.shape.dim[2].dim_value
    g.initializer.append(numpy_helper.from_array(1.0 + 0.3 * rand(width, seed=7), "q"))
    g.node.insert(0, helper.make_node("Mul", ["x_in", "q"], ["X"], name="scale"))
    onnx.checker.check_model(m)
    return m, {"x_in": feeds["X"]}


# --- the stack: one multi-layer cuDNN RNN ---------------------------------------------------------
@pytest.mark.parametrize("drop", ["reshape", "squeeze"])
@pytest.mark.parametrize("layers", [2, 3])
def test_stack_gradients_match_the_cpu(layers, drop):
    model, feeds = stacked_lstm(layers, 4, drop=drop, outputs=("Y",))
    t = check_gradients(model, feeds, "all")
    (row,) = backward_rows(t, "LSTMStack")
    names = ", ".join(f"lstm{i}" for i in range(layers))
    assert f"{layers} layers in one call: {names}" in row["algorithm"], row
    assert not backward_rows(t, "LSTM")
    (forward,) = [r for r in t.plan() if r["stage"] == "forward" and r["op"] == "LSTMStack"]
    assert "training" in forward["algorithm"] and "reserve space" in forward["algorithm"], forward


@pytest.mark.parametrize("outputs", [("Y_h",), ("Y_c",), ("Y", "Y_h", "Y_c")])
def test_stack_gradients_from_the_last_states(outputs):
    # The loss on Y_h or Y_c alone: no dY, the last layer's slice of dhy / dcy. With all three
    # outputs the loss is on Y (the first) and Y_h, Y_c are computed but get no gradient.
    model, feeds = stacked_lstm(3, 4, outputs=outputs)
    t = check_gradients(model, feeds, "all")
    assert len(backward_rows(t, "LSTMStack")) == 1


def test_stack_passes_the_input_gradient_back_and_trains_only_what_is_asked():
    model, feeds = scaled_input(*stacked_lstm(3, 4, outputs=("Y",)))
    # q before the stack (dX), and one layer's R: layers 0 and 2 are frozen inside the stack.
    t = check_gradients(model, feeds, ["q", "R1"])
    assert len(backward_rows(t, "LSTMStack")) == 1
    # Only dX: no weight gradient is asked of the stack.
    check_gradients(model, feeds, ["q"])


def test_deep_stack_gradients():
    model, feeds = stacked_lstm(4, 16, seq=24, inp=12, hidden=32, drop="reshape_infer", outputs=("Y",))
    t = check_gradients(model, feeds, "all", atol=DEEP_ATOL, l2=DEEP_L2)
    assert len(backward_rows(t, "LSTMStack")) == 1


@pytest.mark.parametrize("fused", [True, False])
def test_steps_follow_the_cpu(fused):
    model, feeds = stacked_lstm(3, 4, outputs=("Y",))
    t = assert_steps_follow_the_cpu(model, feeds, **({} if fused else OFF))
    assert len(backward_rows(t, "LSTMStack")) == (1 if fused else 0)
    assert len(backward_rows(t, "LSTM")) == (0 if fused else 3)
    (g,) = t.graphs()
    assert g["state"] == "captured" and g["replays"] == STEPS - 1


def test_fused_and_per_layer_gradients_agree():
    model, feeds = stacked_lstm(3, 4, outputs=("Y",))
    x, y = list(feeds.values()), target_for(model, feeds)
    fused_loss, fused = tuner(model, "cuda", "all").gradients(x, y)
    loss, per_layer = tuner(model, "cuda", "all", **OFF).gradients(x, y)
    np.testing.assert_allclose(fused_loss, loss, rtol=LOSS_RTOL)
    for name in per_layer:
        assert_grad_close(fused[name], per_layer[name], f"d{name} (fused vs one call per layer)")


def test_evaluate_after_steps_matches_the_cpu():
    # The forward reads the weights SGD changed (packed on every step, never at plan time).
    model, feeds = stacked_lstm(3, 4, outputs=("Y",))
    x, y = list(feeds.values()), target_for(model, feeds)
    results = {}
    for device in ("cpu", "cuda"):
        _, _, t = train(model, feeds, device)
        results[device] = t.evaluate(x, y)["loss"]
    assert results["cuda"] == pytest.approx(results["cpu"], rel=STEP_LOSS_RTOL)


# --- trainable="last:N" on a stack: the frozen layers run in the head -----------------------------
def test_last_1_trains_the_top_layer_alone():
    model, feeds = stacked_lstm(4, 4, outputs=("Y",))
    t = assert_steps_follow_the_cpu(model, feeds, "last:1")
    layout = t.layout()
    assert layout["trained"] == ["lstm3"]
    rows = t.plan()
    frozen = [r for r in rows if r["stage"] == "frozen" and r["op"] == "LSTMStack"]
    assert len(frozen) == 1 and "3 layers in one call" in frozen[0]["algorithm"], frozen
    assert len(backward_rows(t, "LSTM")) == 1 and not backward_rows(t, "LSTMStack")


def test_last_2_trains_a_stack_of_two():
    model, feeds = stacked_lstm(3, 4, outputs=("Y",))
    t = assert_steps_follow_the_cpu(model, feeds, "last:2")
    (row,) = backward_rows(t, "LSTMStack")
    assert "2 layers in one call: lstm1, lstm2" in row["algorithm"], row


# --- what the stack does not take: one call per layer ---------------------------------------------
@pytest.mark.parametrize("directions", [["forward", "bidirectional", "forward"], ["reverse", "reverse", "forward"]])
def test_other_chains_train_layer_by_layer(directions):
    model, feeds = stacked_lstm(3, 4, outputs=("Y",), directions=directions)
    t = check_gradients(model, feeds, "all")
    assert not backward_rows(t, "LSTMStack")
    assert len(backward_rows(t, "LSTM")) == 3
    assert_steps_follow_the_cpu(model, feeds)


def test_initial_states_train_layer_by_layer():
    # A layer with a graph-input initial_h is not fused: the chain splits around it.
    model, feeds = stacked_lstm(3, 4, outputs=("Y",), initial_h_layer=1)
    t = check_gradients(model, feeds, "all")
    assert not backward_rows(t, "LSTMStack") and len(backward_rows(t, "LSTM")) == 3


def test_sequence_lens_training_is_refused():
    S, B, I, H = 4, 2, 3, 4
    inits = {"W": rand(1, 4 * H, I), "R": rand(1, 4 * H, H), "lens": np.array([4, 2], np.int32)}
    model = make_model([helper.make_node("LSTM", ["x", "W", "R", "", "lens"], ["y"], hidden_size=H)],
                       [("x", [S, B, I])], [("y", None)], inits)
    with pytest.raises(dnnx.UnsupportedModelError, match="sequence_lens"):
        t = dnnx.load(model, device="cuda").finetune(trainable=["W", "R"], loss="mse")
        t.gradients(rand(S, B, I), rand(S, 1, B, H))


# --- determinism, graphs, memory ----------------------------------------------------------------
@pytest.mark.parametrize("fused", [True, False])
def test_deterministic_steps_are_bit_identical(fused):
    model, feeds = stacked_lstm(3, 8, seq=12, hidden=16, outputs=("Y",))
    kwargs = {"deterministic": True, **({} if fused else OFF)}
    l1, w1, _ = train(model, feeds, "cuda", **kwargs)
    l2, w2, _ = train(model, feeds, "cuda", **kwargs)
    np.testing.assert_array_equal(l1, l2)
    for name in w1:
        np.testing.assert_array_equal(w1[name], w2[name], err_msg=name)


def test_graph_and_eager_steps_give_identical_weights():
    model, feeds = stacked_lstm(3, 4, outputs=("Y",))
    l1, w1, t1 = train(model, feeds, "cuda")
    l2, w2, t2 = train(model, feeds, "cuda", cuda_graph=False)
    assert t1.graphs()[0]["state"] == "captured" and t2.graphs()[0]["state"] == "off"
    np.testing.assert_array_equal(l1, l2)
    for name in w1:
        np.testing.assert_array_equal(w1[name], w2[name], err_msg=name)


def test_memory_counts_the_kept_reserve_space():
    model, _ = stacked_lstm(3, 4, outputs=("Y",))
    gpu = dnnx.load(model, device="cuda").finetune(trainable="all", loss="mse").memory()
    cpu = dnnx.load(model).finetune(trainable="all", loss="mse").memory()
    assert gpu["kept_bytes"] > 0 and cpu["kept_bytes"] == 0
