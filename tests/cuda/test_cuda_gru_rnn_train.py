"""Training GRU and RNN layers on CUDA: the layer's forward is cuDNN's training-mode
cudnnRNNForward, whose reserve space cudnnRNNBackwardData_v8 / cudnnRNNBackwardWeights_v8 read
(engine/backends/cuda/rnn/rnn_train.cc, shared with LSTM; Note [training forward] in
engine/runtime/training.h). Covered: GRU (linear_before_reset=1) and RNN (Tanh, Relu), every
direction and layout, gradients into X, W, R, B and initial_h through Y and Y_h, without B, the
loss on Y_h alone, SGD steps, tf32; and what CUDA refuses to train (GRU linear_before_reset=0,
RNN Sigmoid or one activation per direction: no cuDNN cell; sequence_lens, clip: as on the CPU).

Oracles: the CPU trainer's gradients (its GRU/RNN gradients are checked against float64 finite
differences in the CPU tests), and, independent of any dnnx gradient, float64 central differences
of a numpy reference of the ONNX equations (small bidirectional cases).

Tolerances (fp32, FMA math on both sides, no TF32): against the CPU, test_cuda_layer_grads.py's
(elementwise RTOL 1e-4 + ATOL 2e-5 x max|cpu|, relative L2 5e-5; the loss rtol 1e-5), as the LSTM
gradient tests. Against float64 differences: FD_RTOL 1e-3 + FD_ATOL 1e-4 x max|ref|, relative L2
FD_L2 1e-4 (fp32 rounding of a few steps' sums, ~1e-6 relative, and the differences' own error,
~1e-8 at eps 1e-4 in float64). SGD steps: test_cuda_lstm_train.py's (each loss to 1e-4, weights
to relative L2 1e-4 after 5 steps). tf32: relative L2 TF32_L2 1e-2 and elementwise TF32_ATOL
3e-2 x max|cpu| (operands rounded to a 10-bit mantissa, ~5e-4 each, summed over the steps of the
forward and the backward recurrences).
"""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper, numpy_helper

import dnnx
from ort_check import make_model
from test_cuda_layer_grads import check_cuda_gradients, out_shape, rand, tuner
from test_cuda_lstm_train import assert_steps_follow_the_cpu, backward_rows

DIRECTIONS = ["forward", "reverse", "bidirectional"]
CELLS = {"gru": ("GRU", {"linear_before_reset": 1}), "rnn_tanh": ("RNN", {"activations": ["Tanh"]}),
         "rnn_relu": ("RNN", {"activations": ["Relu"]})}
FD_RTOL, FD_ATOL, FD_L2 = 1e-3, 1e-4, 1e-4
TF32_ATOL, TF32_L2 = 3e-2, 1e-2


def cell_attrs(cell, direction):
    op, attrs = CELLS[cell]
    attrs = dict(attrs)
    if "activations" in attrs and direction == "bidirectional":
        attrs["activations"] = attrs["activations"] * 2
    return op, attrs


def layer_model(cell, direction="forward", layout=0, S=5, B=3, I=6, H=4, bias=True, initial_h=True,
                loss_on=("Y", "Y_h"), rng=None):
    """x * q -> GRU/RNN(W, R, B, initial_h) -> Y + Y_h (Y_h broadcast over every step), or Y or Y_h
    alone: the loss reaches every parameter, dX through q. Returns (model, parameters, feeds, target)."""
    op, attrs = cell_attrs(cell, direction)
    g = 3 if op == "GRU" else 1
    D = 2 if direction == "bidirectional" else 1
    x_shape = (S, B, I) if layout == 0 else (B, S, I)
    state_shape = (D, B, H) if layout == 0 else (B, D, H)
    inits = {"q": 1.0 + rand(*x_shape, scale=0.2, rng=rng), "W": rand(D, g * H, I, scale=0.4, rng=rng),
             "R": rand(D, g * H, H, scale=0.4, rng=rng)}
    if bias:
        inits["Bias"] = rand(D, 2 * g * H, scale=0.2, rng=rng)
    if initial_h:
        inits["h0"] = rand(*state_shape, scale=0.5, rng=rng)
    params = list(inits)
    names = ["xq", "W", "R", "Bias" if bias else "", "", "h0" if initial_h else ""]
    while not names[-1]:
        names.pop()
    outputs = ["y" if "Y" in loss_on else "", "yh" if "Y_h" in loss_on else ""]
    while not outputs[-1]:
        outputs.pop()
    nodes = [helper.make_node("Mul", ["x", "q"], ["xq"]),
             helper.make_node(op, names, outputs, hidden_size=H, direction=direction, layout=layout, name="rec",
                              **attrs)]
    out = "y" if loss_on == ("Y",) else "yh"
    if loss_on == ("Y", "Y_h"):
        if layout == 0:  # yh [D, B, H] broadcasts over Y [S, D, B, H]
            nodes.append(helper.make_node("Add", ["y", "yh"], ["out"]))
        else:  # yh [B, D, H] -> [B, 1, D, H] over Y [B, S, D, H]
            inits["axis1"] = np.array([1], np.int64)
            nodes += [helper.make_node("Unsqueeze", ["yh", "axis1"], ["yh1"]),
                      helper.make_node("Add", ["y", "yh1"], ["out"])]
        out = "out"
    model = make_model(nodes, [("x", list(x_shape))], [(out, None)], inits)
    target = rand(*out_shape(model), rng=rng)
    return model, params, {"x": rand(*x_shape, rng=rng)}, target


def backward_row(t, op):
    (row,) = backward_rows(t, op)
    return row


# --- against the CPU trainer ----------------------------------------------------------------------
@pytest.mark.parametrize("layout", [0, 1])
@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("cell", list(CELLS))
def test_gradients_match_the_cpu(cell, direction, layout):
    model, params, feeds, target = layer_model(cell, direction, layout, rng=np.random.default_rng(3))
    check_cuda_gradients(model, params, feeds, target)


@pytest.mark.parametrize("cell", list(CELLS))
def test_without_bias_and_initial_h(cell):
    model, params, feeds, target = layer_model(cell, "bidirectional", bias=False, initial_h=False,
                                               rng=np.random.default_rng(4))
    assert params == ["q", "W", "R"]
    check_cuda_gradients(model, params, feeds, target)


@pytest.mark.parametrize("loss_on", [("Y",), ("Y_h",)])
@pytest.mark.parametrize("layout", [0, 1])
@pytest.mark.parametrize("cell", ["gru", "rnn_tanh"])
def test_loss_on_one_output(cell, layout, loss_on):
    # Y alone: no dY_h (null); Y_h alone: Y is not an output, dY is zeros inside the kernel.
    model, params, feeds, target = layer_model(cell, "bidirectional", layout, loss_on=loss_on,
                                               rng=np.random.default_rng(5))
    check_cuda_gradients(model, params, feeds, target)


@pytest.mark.parametrize("cell", list(CELLS))
def test_plan_rows_name_cudnn(cell):
    model, params, _, _ = layer_model(cell, "reverse", 1, rng=np.random.default_rng(6))
    _, t = tuner(model, params, "cuda")
    op = CELLS[cell][0]
    row = backward_row(t, op)
    assert "cudnnRNNBackwardData_v8 + cudnnRNNBackwardWeights_v8" in row["algorithm"], row
    assert "sequences reversed by kernel" in row["algorithm"], row
    (forward,) = [r for r in t.plan() if r["stage"] == "forward" and r["op"] == op]
    assert "training" in forward["algorithm"] and "reserve space" in forward["algorithm"], forward


@pytest.mark.parametrize("cell", list(CELLS))
def test_steps_follow_the_cpu(cell):
    model, _, feeds, _ = layer_model(cell, "bidirectional", rng=np.random.default_rng(7))
    t = assert_steps_follow_the_cpu(model, feeds)
    (g,) = t.graphs()
    assert g["state"] == "captured"


@pytest.mark.parametrize("cell", list(CELLS))
def test_tf32_gradients_within_tf32_bounds(cell):
    model, params, feeds, target = layer_model(cell, "bidirectional", S=8, I=16, H=32, rng=np.random.default_rng(8))
    _, cpu = tuner(model, params, "cpu")
    _, gpu = tuner(model, params, "cuda", precision="tf32")
    want_loss, want = cpu.gradients([feeds["x"]], target)
    got_loss, got = gpu.gradients([feeds["x"]], target)
    np.testing.assert_allclose(got_loss, want_loss, rtol=1e-3)
    for name in params:
        g, w = np.asarray(got[name], np.float64), np.asarray(want[name], np.float64)
        np.testing.assert_allclose(g, w, rtol=0, atol=TF32_ATOL * np.abs(w).max(), err_msg=name)
        rel = np.linalg.norm(g - w) / np.linalg.norm(w)
        assert rel <= TF32_L2, f"d{name}: relative L2 {rel:.3g} > {TF32_L2}"


# --- against float64 central differences of the ONNX equations ------------------------------------
def sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


def reference_forward(op, attrs, p, x):
    """ONNX's GRU / RNN, layout 0, bidirectional, in float64: returns Y [S, 2, B, H] + Y_h."""
    S, B, _ = x.shape
    D, _, H = p["R"].shape
    xq = x * p["q"]
    y = np.zeros((S, D, B, H))
    y_h = np.zeros((D, B, H))
    for d in range(D):
        W, R, b, h = p["W"][d], p["R"][d], p["Bias"][d], p["h0"][d]
        steps = range(S - 1, -1, -1) if d == 1 else range(S)
        for t in steps:
            xt = xq[t]
            if op == "GRU":  # gates z, r, h; linear_before_reset=1
                gx = [xt @ W[k * H:(k + 1) * H].T + b[k * H:(k + 1) * H] for k in range(3)]
                gh = [h @ R[k * H:(k + 1) * H].T + b[(3 + k) * H:(4 + k) * H] for k in range(3)]
                z, r = sigmoid(gx[0] + gh[0]), sigmoid(gx[1] + gh[1])
                n = np.tanh(gx[2] + r * gh[2])
                h = (1.0 - z) * n + z * h
            else:
                a = xt @ W.T + h @ R.T + b[:H] + b[H:]
                h = np.tanh(a) if attrs["activations"][d] == "Tanh" else np.maximum(a, 0.0)
            y[t, d] = h
        y_h[d] = h
    return y + y_h


@pytest.mark.parametrize("cell", list(CELLS))
def test_gradients_match_float64_differences(cell):
    model, params, feeds, target = layer_model(cell, "bidirectional", S=4, B=2, I=3, H=3,
                                               rng=np.random.default_rng(9))
    op, attrs = cell_attrs(cell, "bidirectional")
    p = {t.name: numpy_helper.to_array(t).astype(np.float64) for t in model.graph.initializer}
    x, tgt = feeds["x"].astype(np.float64), target.astype(np.float64)

    def loss(values):
        return np.mean((reference_forward(op, attrs, values, x) - tgt) ** 2)

    _, gpu = tuner(model, params, "cuda")
    got_loss, got = gpu.gradients([feeds["x"]], target)
    np.testing.assert_allclose(got_loss, loss(p), rtol=1e-5, err_msg="loss")
    eps = 1e-4
    for name in params:
        ref = np.zeros_like(p[name])
        for i in np.ndindex(p[name].shape):
            plus = {k: v.copy() for k, v in p.items()}
            minus = {k: v.copy() for k, v in p.items()}
            plus[name][i] += eps
            minus[name][i] -= eps
            ref[i] = (loss(plus) - loss(minus)) / (2 * eps)
        g = np.asarray(got[name], np.float64)
        np.testing.assert_allclose(g, ref, rtol=FD_RTOL, atol=FD_ATOL * np.abs(ref).max(), err_msg=f"d{name}")
        rel = np.linalg.norm(g - ref) / np.linalg.norm(ref)
        assert rel <= FD_L2, f"d{name}: relative L2 {rel:.3g} > {FD_L2}"


# --- what CUDA does not train ----------------------------------------------------------------------
def single_node(op, S=4, B=2, I=3, H=4, inputs=("x", "W", "R"), extra=None, **attrs):
    g = 3 if op == "GRU" else 1
    D = 2 if attrs.get("direction") == "bidirectional" else 1
    inits = {"W": rand(D, g * H, I), "R": rand(D, g * H, H), **(extra or {})}
    model = make_model([helper.make_node(op, list(inputs), ["y"], hidden_size=H, name="rec", **attrs)],
                       [("x", [S, B, I])], [("y", None)], inits)
    return model, (rand(S, B, I), rand(S, D, B, H))


@pytest.mark.parametrize("op,attrs,why", [
    ("GRU", {"linear_before_reset": 0}, "linear_before_reset"),
    ("GRU", {}, "linear_before_reset"),  # the default is 0
    ("RNN", {"activations": ["Sigmoid"]}, "Sigmoid"),
])
def test_what_cudnn_has_no_cell_for_is_refused_naming_the_node(op, attrs, why):
    model, (x, y) = single_node(op, **attrs)
    with pytest.raises(dnnx.UnsupportedModelError, match=f"rec.*{why}"):  # at finetune() or the first step
        t = dnnx.load(model, device="cuda").finetune(trainable=["W", "R"], loss="mse")
        t.gradients(x, y)


def test_mixed_activations_are_refused():
    model, (x, y) = single_node("RNN", direction="bidirectional", activations=["Tanh", "Relu"])
    with pytest.raises(dnnx.UnsupportedModelError, match="different activations per direction"):
        t = dnnx.load(model, device="cuda").finetune(trainable=["R"], loss="mse")
        t.gradients(x, y)


@pytest.mark.parametrize("op", ["GRU", "RNN"])
def test_sequence_lens_and_clip_training_are_refused(op):
    lbr = {"linear_before_reset": 1} if op == "GRU" else {}
    model, (x, y) = single_node(op, inputs=("x", "W", "R", "", "lens"), extra={"lens": np.array([4, 2], np.int32)},
                                **lbr)
    with pytest.raises(dnnx.UnsupportedModelError, match="sequence_lens"):
        t = dnnx.load(model, device="cuda").finetune(trainable=["W", "R"], loss="mse")
        t.gradients(x, y)
    model, (x, y) = single_node(op, clip=0.5, **lbr)
    with pytest.raises(dnnx.UnsupportedModelError, match="clip"):
        t = dnnx.load(model, device="cuda").finetune(trainable=["W", "R"], loss="mse")
        t.gradients(x, y)
