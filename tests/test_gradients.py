"""Every op's backward against float64 finite differences (tests/grad_check.py): small models
whose trainable parameters sit upstream of the op, so the gradient flows through it."""
from __future__ import annotations

import zlib

import numpy as np
import pytest
from onnx import helper

from grad_check import check_gradients
from grad_models import (GEMM_C_SHAPES, activation_chain, assert_conv1d_formulas, concat_branches,
                         conv1d_time_batch_channel, gemm_chain, lstm_last_hidden_state, softmax_inside,
                         transpose_chain)
from ort_check import make_model

import dnnx

RNG = np.random.default_rng(7)


@pytest.fixture(autouse=True)
def seeded_rng(request):
    """Each test draws its own data, seeded by its id, whatever ran before it: with one generator
    for the module, a case run alone (or in another order) drew other values, and
    test_conv2d[dilations] alone landed a ReLU input within the finite difference's step of its
    kink (an order-dependent failure)."""
    global RNG
    RNG = np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))


def rand(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def mse_target(shape):
    return rand(*shape)


# --- Gemm -----------------------------------------------------------------------------------
@pytest.mark.parametrize("trans_a", [0, 1])
@pytest.mark.parametrize("trans_b", [0, 1])
@pytest.mark.parametrize("c_shape", GEMM_C_SHAPES)
def test_gemm(trans_a, trans_b, c_shape):
    check_gradients(*gemm_chain(rand, trans_a, trans_b, c_shape))


# --- activations ------------------------------------------------------------------------------
@pytest.mark.parametrize("op", ["Relu", "Sigmoid", "Tanh", "Neg"])
def test_activation(op):
    check_gradients(*activation_chain(rand, op))


# --- Softmax / LogSoftmax ---------------------------------------------------------------------
@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
@pytest.mark.parametrize("axis", [1, -1, 0])
def test_softmax_inside(op, axis):
    check_gradients(*softmax_inside(rand, op, axis))


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


# --- Conv -------------------------------------------------------------------------------------
CONV_CASES = [
    dict(kernel_shape=[3, 3]),
    dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    dict(kernel_shape=[3, 2], strides=[2, 1], pads=[1, 0, 0, 1]),
    dict(kernel_shape=[2, 2], dilations=[2, 2], pads=[1, 1, 1, 1]),
    dict(kernel_shape=[3, 3], group=2, pads=[1, 1, 1, 1]),
    dict(kernel_shape=[1, 1]),
    dict(kernel_shape=[3, 3], auto_pad="SAME_UPPER", strides=[2, 2]),
]


@pytest.mark.parametrize("attrs", CONV_CASES, ids=lambda a: "-".join(f"{k}{v}" for k, v in a.items()))
@pytest.mark.parametrize("bias", [True, False])
def test_conv2d(attrs, bias):
    # x [2,3,7,7] -> Conv1 (3x3, pad 1) -> Relu -> Conv2 (the case) -> mse: conv2's data gradient
    # is checked through conv1's weights, its filter and bias gradients directly.
    group = attrs.get("group", 1)
    kh, kw = attrs["kernel_shape"]
    inits = {"w1": rand(4, 3, 3, 3, scale=0.3), "b1": rand(4, scale=0.1), "w2": rand(6, 4 // group, kh, kw, scale=0.3)}
    conv2_inputs = ["r", "w2"]
    if bias:
        inits["b2"] = rand(6, scale=0.1)
        conv2_inputs.append("b2")
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r"]), helper.make_node("Conv", conv2_inputs, ["y"], **attrs)]
    model = make_model(nodes, [("x", [2, 3, 7, 7])], [("y", None)], inits)
    out_shape = [d.dim_value for d in model.graph.output[0].type.tensor_type.shape.dim]
    check_gradients(model, list(inits), {"x": rand(2, 3, 7, 7)}, mse_target(out_shape))


def test_conv3d():
    inits = {"w1": rand(2, 1, 2, 2, 2, scale=0.5), "w2": rand(3, 2, 2, 3, 2, scale=0.5), "b2": rand(3)}
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], kernel_shape=[2, 2, 2], pads=[1, 0, 1, 0, 1, 0]),
             helper.make_node("Conv", ["c1", "w2", "b2"], ["y"], kernel_shape=[2, 3, 2], strides=[1, 2, 1])]
    model = make_model(nodes, [("x", [2, 1, 4, 5, 4])], [("y", None)], inits)
    out_shape = [d.dim_value for d in model.graph.output[0].type.tensor_type.shape.dim]
    check_gradients(model, list(inits), {"x": rand(2, 1, 4, 5, 4)}, mse_target(out_shape))


@pytest.mark.parametrize("pad", [0, 1, 2])
def test_conv1d_time_batch_channel_formulas(pad):
    """Issue #4's [T, B, C] 1-D conv against its closed forms (tests/grad_models.py)."""
    case = conv1d_time_batch_channel(rand, pad)
    m = dnnx.load(case.model, optimize=False)
    _, grads = m.finetune(trainable=["x0", "W", "bias"], loss="mse").gradients(case.zeros, case.target)
    assert_conv1d_formulas(case, m.run(case.zeros), grads)


# --- MaxPool ----------------------------------------------------------------------------------
POOL_CASES = [
    dict(kernel_shape=[2, 2], strides=[2, 2]),
    dict(kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1]),
    dict(kernel_shape=[3, 2], strides=[2, 2], ceil_mode=1),
    dict(kernel_shape=[2, 2], dilations=[2, 2]),
]


@pytest.mark.parametrize("attrs", POOL_CASES, ids=lambda a: "-".join(f"{k}{v}" for k, v in a.items()))
def test_max_pool(attrs):
    inits = {"w": rand(3, 2, 3, 3, scale=0.5), "b": rand(3, scale=0.1)}
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("MaxPool", ["c"], ["y"], **attrs)]
    model = make_model(nodes, [("x", [2, 2, 7, 7])], [("y", None)], inits)
    out_shape = [d.dim_value for d in model.graph.output[0].type.tensor_type.shape.dim]
    check_gradients(model, list(inits), {"x": rand(2, 2, 7, 7)}, mse_target(out_shape))


def test_max_pool_1d():
    inits = {"w": rand(2, 1, 3, scale=0.5)}
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[3]),
             helper.make_node("MaxPool", ["c"], ["y"], kernel_shape=[2], strides=[2])]
    model = make_model(nodes, [("x", [3, 1, 10])], [("y", None)], inits)
    check_gradients(model, ["w"], {"x": rand(3, 1, 10)}, mse_target((3, 2, 4)))


# --- broadcast binary ops ---------------------------------------------------------------------
@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div"])
@pytest.mark.parametrize("p_shape", [(4,), (3, 1), (1, 3, 4), (2, 1, 1), (2, 3, 4), ()])
@pytest.mark.parametrize("p_first", [False, True])
def test_broadcast_binary(op, p_shape, p_first):
    # h = x * q (q [2,3,4] trainable), y = op(h, p) or op(p, h): both sides' gradients flow.
    q = rand(2, 3, 4)
    p = rand(*p_shape) if p_shape else np.float32(RNG.standard_normal())
    if op == "Div":  # keep denominators away from 0
        if p_first:
            q = (np.abs(q) + 0.5).astype(np.float32)
        else:
            p = (np.abs(p) + 0.5).astype(np.float32)
    inits = {"q": q, "p": np.asarray(p, dtype=np.float32)}
    x = rand(2, 3, 4)
    if op == "Div" and p_first:
        x = (np.abs(x) + 0.5).astype(np.float32)
    nodes = [helper.make_node("Mul", ["x", "q"], ["h"]),
             helper.make_node(op, ["p", "h"] if p_first else ["h", "p"], ["y"])]
    model = make_model(nodes, [("x", [2, 3, 4])], [("y", None)], inits)
    check_gradients(model, ["q", "p"], {"x": x}, mse_target((2, 3, 4)))


# --- MatMul -----------------------------------------------------------------------------------
@pytest.mark.parametrize("x_shape, w_shape", [
    ((3, 4), (4, 5)), ((2, 3, 4), (4, 5)), ((2, 3, 4), (2, 4, 5)), ((3, 4), (2, 4, 5)),
    ((2, 1, 3, 4), (3, 4, 5)), ((4,), (4, 5)), ((3, 4), (4,)),
])
def test_matmul(x_shape, w_shape):
    # h = x * q (trainable q of x's shape), y = MatMul(h, w): both operands' gradients.
    inits = {"q": rand(*x_shape), "w": rand(*w_shape)}
    nodes = [helper.make_node("Mul", ["x", "q"], ["h"]), helper.make_node("MatMul", ["h", "w"], ["y"])]
    model = make_model(nodes, [("x", list(x_shape))], [("y", None)], inits)
    out_shape = [d.dim_value for d in model.graph.output[0].type.tensor_type.shape.dim]
    check_gradients(model, list(inits), {"x": rand(*x_shape)}, mse_target(out_shape))


def test_matmul_add_linear_layer_is_one_parameterised_layer():
    # PyTorch's Linear export: MatMul + Add(bias); "last:1" takes both, and the tail is not fused.
    inits = {"w1": rand(4, 6), "b1": rand(6), "w2": rand(6, 3), "b2": rand(3)}
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["m1"]), helper.make_node("Add", ["m1", "b1"], ["a1"]),
             helper.make_node("Relu", ["a1"], ["r"]), helper.make_node("MatMul", ["r", "w2"], ["m2"]),
             helper.make_node("Add", ["m2", "b2"], ["y"])]
    model = make_model(nodes, [("x", [5, 4])], [("y", None)], inits)
    m = dnnx.load(model)
    assert m.finetune(trainable="last:1").parameters == ["w2", "b2"]
    check_gradients(model, list(inits), {"x": rand(5, 4)}, mse_target((5, 3)))


# --- Transpose, Concat, Reshape, BatchNormalization -------------------------------------------
@pytest.mark.parametrize("perm", [[0, 2, 1], [2, 0, 1], [1, 0, 2]])
def test_transpose(perm):
    check_gradients(*transpose_chain(rand, perm))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concat(axis):
    check_gradients(*concat_branches(rand, axis))


def test_reshape_squeeze_unsqueeze_views():
    inits = {"w": rand(6, 8), "s1": np.array([4, 2, 4], np.int64), "ax": np.array([1], np.int64)}
    nodes = [helper.make_node("Gemm", ["x", "w"], ["h"]), helper.make_node("Reshape", ["h", "s1"], ["r"]),
             helper.make_node("Unsqueeze", ["r", "ax"], ["u"]), helper.make_node("Sigmoid", ["u"], ["s"]),
             helper.make_node("Squeeze", ["s", "ax"], ["y"])]
    model = make_model(nodes, [("x", [4, 6])], [("y", None)], inits)
    check_gradients(model, ["w"], {"x": rand(4, 6)}, mse_target((4, 2, 4)))


def test_batchnorm_after_trainable_conv_is_not_folded():
    inits = {"w": rand(3, 2, 3, 3, scale=0.5), "scale": rand(3), "bias": rand(3),
             "mean": rand(3, scale=0.1), "var": (np.abs(rand(3)) + 0.5).astype(np.float32)}
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[3, 3]),
             helper.make_node("BatchNormalization", ["c", "scale", "bias", "mean", "var"], ["y"], epsilon=1e-3)]
    model = make_model(nodes, [("x", [2, 2, 6, 6])], [("y", None)], inits)
    check_gradients(model, ["w", "scale", "bias"], {"x": rand(2, 2, 6, 6)}, mse_target((2, 3, 4, 4)))
    with pytest.raises(dnnx.UnsupportedModelError, match="running mean"):
        dnnx.load(model).finetune(trainable=["mean"], loss="mse")


# --- LSTM (back-propagation through time) -----------------------------------------------------
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("layout", [0, 1])
@pytest.mark.parametrize("peepholes", [False, True])
def test_lstm(direction, layout, peepholes):
    S, B, I, H = 4, 3, 5, 4
    D = 2 if direction == "bidirectional" else 1
    x_shape = (S, B, I) if layout == 0 else (B, S, I)
    state_shape = (D, B, H) if layout == 0 else (B, D, H)
    inits = {"q": rand(*x_shape), "W": rand(D, 4 * H, I, scale=0.4), "R": rand(D, 4 * H, H, scale=0.4),
             "Bias": rand(D, 8 * H, scale=0.2), "h0": rand(*state_shape, scale=0.5), "c0": rand(*state_shape, scale=0.5)}
    inputs = ["xq", "W", "R", "Bias", "", "h0", "c0"]
    if peepholes:
        inits["P"] = rand(D, 3 * H, scale=0.4)
        inputs.append("P")
    nodes = [helper.make_node("Mul", ["x", "q"], ["xq"]),
             helper.make_node("LSTM", inputs, ["y", "yh"], hidden_size=H, direction=direction, layout=layout)]
    model = make_model(nodes, [("x", list(x_shape))], [("y", None)], inits)
    y_shape = (S, D, B, H) if layout == 0 else (B, S, D, H)
    check_gradients(model, list(inits), {"x": rand(*x_shape)}, mse_target(y_shape))


def test_lstm_loss_on_the_last_hidden_state():
    B = 2
    check_gradients(*lstm_last_hidden_state(rand, S=5, B=B, H=4), RNG.integers(0, 3, size=B), loss="cross_entropy")


def test_lstm_training_refuses_clip_and_sequence_lens():
    S, B, I, H = 3, 2, 3, 2
    inits = {"W": rand(1, 4 * H, I), "R": rand(1, 4 * H, H)}
    clipped = make_model([helper.make_node("LSTM", ["x", "W", "R"], ["y"], hidden_size=H, clip=1.0)],
                         [("x", [S, B, I])], [("y", None)], inits)
    with pytest.raises(dnnx.UnsupportedModelError, match="clip"):
        dnnx.load(clipped).finetune(trainable="all", loss="mse")
    lens = make_model([helper.make_node("LSTM", ["x", "W", "R", "", "lens"], ["y"], hidden_size=H)],
                      [("x", [S, B, I]), ("lens", [B], 6)], [("y", None)], inits)
    with pytest.raises(dnnx.UnsupportedModelError, match="sequence_lens"):
        dnnx.load(lens).finetune(trainable="all", loss="mse")
