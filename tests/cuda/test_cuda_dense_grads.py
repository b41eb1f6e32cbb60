"""CUDA's dense gradient kernels (Gemm, MatMul on cuBLAS, the tail's Gemm+Relu; Relu, Sigmoid,
Tanh, Softmax, LogSoftmax on cuDNN) and the CUDA loss, against the CPU's (the CPU ones are checked against
float64 finite differences in tests/test_gradients.py): the same small models as there, the
gradients read through the Tuner's gradient hook (Tuner.gradients) on each device.

Tolerance (fp32 on both sides, no TF32): cuBLAS and OpenBLAS sum the same products in different
orders, and a gradient passes through up to three such sums, so each element may differ by a
few ulps of the largest terms: |cuda - cpu| <= RTOL * |cpu| + ATOL * max|cpu|, and the relative
L2 error <= L2. TF32 (10-bit mantissa) would show ~1e-3, so these bounds also prove fp32 math."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

import dnnx
from grad_models import GEMM_C_SHAPES, activation_chain, gemm_chain, softmax_inside
from ort_check import make_model

RTOL = 1e-4
ATOL = 2e-5
L2 = 5e-5
RNG = np.random.default_rng(11)


def rand(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def assert_grad_close(got, want, what):
    assert got.shape == want.shape, what
    assert np.isfinite(got).all(), what
    scale = float(np.abs(want).max()) if want.size else 0.0
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL * max(scale, 1e-30), err_msg=what)
    norm = float(np.linalg.norm(want))
    if norm > 0:
        assert float(np.linalg.norm(got - want)) / norm <= L2, what


def compare(model, trainable, feeds, target, loss="mse", optimize=False):
    """The loss and every parameter's gradient on CUDA against the CPU; returns CUDA's Tuner."""
    results = []
    for device in ("cpu", "cuda"):
        m = dnnx.load(model, device=device, optimize=optimize)
        tuner = m.finetune(trainable=trainable, loss=loss, momentum=0.0)
        results.append(tuner.gradients([feeds[s.name] for s in m.inputs], target))
    (cpu_loss, cpu), (gpu_loss, gpu) = results
    # The loss: a double sum on both sides over float32 scores that differ by a few ulps.
    assert gpu_loss == pytest.approx(cpu_loss, rel=1e-5, abs=1e-6)
    assert set(gpu) == set(cpu) == set(trainable)
    for name in trainable:
        assert_grad_close(gpu[name], cpu[name], f"d{name} (cuda vs cpu)")
    return tuner


@pytest.mark.parametrize("trans_a", [0, 1])
@pytest.mark.parametrize("trans_b", [0, 1])
@pytest.mark.parametrize("c_shape", GEMM_C_SHAPES)
def test_gemm(trans_a, trans_b, c_shape):
    compare(*gemm_chain(rand, trans_a, trans_b, c_shape))


def test_gemm_large_batch_bias():
    # The bias gradient sums 512 rows per element (launch_broadcast_sum's block reduction).
    inits = {"w": rand(32, 10, scale=0.2), "b": rand(10)}
    model = make_model([helper.make_node("Gemm", ["x", "w", "b"], ["y"])], [("x", [512, 32])], [("y", None)], inits)
    compare(model, list(inits), {"x": rand(512, 32)}, rand(512, 10))


@pytest.mark.parametrize("rows, c_shape", [(12, None), (12, (40,)), (12, (1, 40)), (12, (12, 40)), (8200, (40,))])
def test_gemm_relu_fused_in_the_tail(rows, c_shape):
    # x -> Gemm(w1 [6, 40], c, beta 0.5) -> Relu -> Gemm(w2 [40, 3]) with the passes on: the tail's
    # Gemm+Relu, whose mask kernel sums a row-vector C's gradient (up to 8192 rows) or leaves C's
    # gradient to Gemm's own.
    inits = {"w1": rand(6, 40), "w2": rand(40, 3, scale=0.3)}
    first = ["x", "w1"]
    if c_shape is not None:
        inits["c"] = rand(*c_shape)
        first.append("c")
    nodes = [helper.make_node("Gemm", first, ["g"], beta=0.5), helper.make_node("Relu", ["g"], ["h"]),
             helper.make_node("Gemm", ["h", "w2"], ["y"])]
    model = make_model(nodes, [("x", [rows, 6])], [("y", None)], inits)
    tuner = compare(model, list(inits), {"x": rand(rows, 6)}, rand(rows, 3), optimize=True)
    (fused,) = [r for r in tuner.plan() if r["op"] == "Gemm+Relu backward"]
    summed = c_shape in [(40,), (1, 40)] and rows <= 8192
    assert fused["algorithm"].startswith("relu mask with the bias's sum" if summed else "relu mask, "), fused


@pytest.mark.parametrize("trans_b", [0, 1])
def test_bias_gradient_from_the_weight_gradients_gemm(trans_b):
    # Note [bias gradient epilogue]: C a row vector, alpha and beta 1: dB's cuBLASLt call writes
    # dC too (BGRADA without transB, BGRADB with it) where cuBLASLt has an algorithm for that;
    # the plan says which. Through a Gemm+Relu the masked dZ is what the epilogue sums.
    inits = {"w1": rand(*((40, 6) if trans_b else (6, 40))), "c": rand(40), "w2": rand(40, 3, scale=0.3), "c2": rand(3)}
    nodes = [helper.make_node("Gemm", ["x", "w1", "c"], ["g"], transB=trans_b), helper.make_node("Relu", ["g"], ["h"]),
             helper.make_node("Gemm", ["h", "w2", "c2"], ["y"])]
    model = make_model(nodes, [("x", [64, 6])], [("y", None)], inits)
    tuner = compare(model, list(inits), {"x": rand(64, 6)}, rand(64, 3), optimize=True)
    rows = {r["op"]: r["algorithm"] for r in tuner.plan() if r["stage"] == "backward"}
    fused, last = rows["Gemm+Relu backward"], rows["Gemm backward"]
    if "(bias gradient epilogue)" in fused:
        assert fused.startswith("relu mask, then dB cublasLtMatmul (bias gradient epilogue)"), rows
    else:
        assert fused.startswith("relu mask with the bias's sum"), rows
    assert "dB cublasLtMatmul" in last, rows


@pytest.mark.parametrize("op", ["Relu", "Sigmoid", "Tanh", "Neg"])
def test_activation(op):
    compare(*activation_chain(rand, op))


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
@pytest.mark.parametrize("axis", [1, -1, 0])
def test_softmax_inside(op, axis):
    compare(*softmax_inside(rand, op, axis))


@pytest.mark.parametrize("final", ["Softmax", "LogSoftmax", None])
def test_cross_entropy(final):
    # The CUDA loss kernel: fused with a final Softmax, on log-probabilities, on raw logits.
    inits = {"w": rand(6, 10), "b": rand(10, scale=0.1)}
    nodes = [helper.make_node("Gemm", ["x", "w", "b"], ["z" if final else "y"])]
    if final:
        nodes.append(helper.make_node(final, ["z"], ["y"], axis=1))
    model = make_model(nodes, [("x", [300, 6])], [("y", None)], inits)
    compare(model, list(inits), {"x": rand(300, 6)}, RNG.integers(0, 10, size=300), loss="cross_entropy")


# (h, w): every plan shape of matmul_grad_cuda.cc: batched, the folded shared weight, and the
# per-batch loop for a broadcast side (h [5,4] or [1,5,4] read by every batch of w).
MATMUL_SHAPES = [((5, 4), (4, 3)), ((2, 5, 4), (4, 3)), ((2, 5, 4), (2, 4, 3)), ((2, 5, 4), (1, 4, 3)),
                 ((3, 1, 5, 4), (2, 4, 3)), ((4,), (4, 3)), ((5, 4), (4,)), ((6, 2, 5, 4), (4, 3)),
                 ((5, 4), (2, 4, 3)), ((1, 5, 4), (3, 4, 3))]


@pytest.mark.parametrize("h_shape, w_shape", MATMUL_SHAPES)
def test_matmul(h_shape, w_shape):
    # h = MatMul(x, w0) (x [..., 3], w0 [3, K]), y = MatMul(h, w): dw, dh (the A side, through
    # which dw0 flows: a MatMul whose 2-D weight is shared by every batch).
    x_shape = tuple(h_shape[:-1]) + (3,)
    inits = {"w0": rand(3, h_shape[-1]), "w": rand(*w_shape)}
    out_shape = np.matmul(np.zeros(h_shape), np.zeros(w_shape)).shape
    nodes = [helper.make_node("MatMul", ["x", "w0"], ["h"]), helper.make_node("MatMul", ["h", "w"], ["y"])]
    model = make_model(nodes, [("x", list(x_shape))], [("y", None)], inits)
    compare(model, list(inits), {"x": rand(*x_shape)}, rand(*out_shape))
