"""Issue #15's ops on CUDA against the CPU (whose gradients tests/test_activation_norm_gradients.py
checks against float64 finite differences): the unary math ops and Abs, Pow, PRelu, the
normalizations and Dropout's mask, forward and gradient, through the tuner's gradient hook
(Tuner.gradients), on the models of tests/grad_models_activations.py.

Tolerance (fp32 on both sides, no TF32): the elementwise ops differ only by CUDA's math library
(expf, erff, tanhf, powf, logf within 2 ulp of glibc's), the broadcast sums and the
normalizations' row sums by summation order (the CPU sums a row in double, CUDA in a fixed float
tree): |cuda - cpu| <= RTOL * |cpu| + ATOL * max|cpu| elementwise and a relative L2 error <= L2,
as tests/cuda/test_cuda_dense_grads.py. fp16 storage (precision="fp16", forward only) rounds
every stored value to 11 significant bits (relative 2^-11 ~ 4.9e-4), the input and the output
both: FP16_TOL of the output's largest magnitude."""
from __future__ import annotations

import numpy as np
import pytest

from onnx import TensorProto, helper

import dnnx
from grad_models_activations import (NORM_CASES, UNARY_OPS, dropout_mask_chain, norm_chain, pow_chain, prelu_chain,
                                     unary_chain)
from ort_check import make_model

RTOL = 1e-4
ATOL = 2e-5
L2 = 5e-5
FP16_TOL = 4e-3
RNG = np.random.default_rng(16)

POW_SHAPES = [((2, 3, 4), (2, 3, 4)), ((2, 3, 4), ()), ((2, 3, 4), (3, 1)), ((3, 4), (2, 3, 4))]
SLOPE_SHAPES = [(2, 3, 4, 5), (5,), (3, 1, 1), (1,)]


def rand(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def assert_close(got, want, what):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape, what
    assert np.isfinite(got).all(), what
    scale = float(np.abs(want).max()) if want.size else 0.0
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL * max(scale, 1e-30), err_msg=what)
    norm = float(np.linalg.norm(want))
    if norm > 0:
        assert float(np.linalg.norm(got - want)) / norm <= L2, what


def compare(model, trainable, feeds, target):
    """The outputs, the loss and every parameter's gradient on CUDA against the CPU; returns CUDA's Tuner."""
    results = []
    for device in ("cpu", "cuda"):
        m = dnnx.load(model, device=device, optimize=False)
        outputs = m.run_dict(feeds)
        tuner = m.finetune(trainable=trainable, loss="mse", momentum=0.0)
        results.append((outputs, tuner.gradients([feeds[s.name] for s in m.inputs], target), tuner))
    (cpu_out, (cpu_loss, cpu), _), (gpu_out, (gpu_loss, gpu), tuner) = results
    for name, want in cpu_out.items():
        assert_close(gpu_out[name], want, f"output {name} (cuda vs cpu)")
    assert gpu_loss == pytest.approx(cpu_loss, rel=1e-5, abs=1e-6)
    assert set(gpu) == set(cpu) == set(trainable)
    for name in trainable:
        assert_close(gpu[name], cpu[name], f"d{name} (cuda vs cpu)")
    return tuner


def assert_runs_on_the_device(tuner, op):
    """The op's forward and backward rows are CUDA kernels, not host layers."""
    rows = [r for r in tuner.plan() if r["op"].startswith(op)]
    assert rows, f"no {op} rows in the plan"
    for r in rows:
        assert "on the host" not in r["algorithm"], r


@pytest.mark.parametrize("case", list(UNARY_OPS))
def test_unary_math(case):
    tuner = compare(*unary_chain(rand, case))
    assert_runs_on_the_device(tuner, case.split("-")[0])


@pytest.mark.parametrize("base_shape, exponent_shape", POW_SHAPES)
def test_pow(base_shape, exponent_shape):
    assert_runs_on_the_device(compare(*pow_chain(rand, base_shape, exponent_shape)), "Pow")


@pytest.mark.parametrize("slope_shape", SLOPE_SHAPES)
def test_prelu(slope_shape):
    assert_runs_on_the_device(compare(*prelu_chain(rand, slope_shape)), "PRelu")


@pytest.mark.parametrize("case", list(NORM_CASES))
def test_normalization(case):
    assert_runs_on_the_device(compare(*norm_chain(rand, case)), NORM_CASES[case][0])


def test_normalization_large_rows():
    # Rows longer than a block (1000 > 256 threads: each thread strides over several elements), and
    # 1000 parameters each summed over 64 rows: LayerNormalization over [64, 1000].
    inits = {"q": rand(64, 1000), "scale": rand(1000), "bias": rand(1000)}
    nodes = [helper.make_node("Mul", ["x", "q"], ["h"]),
             helper.make_node("LayerNormalization", ["h", "scale", "bias"], ["y"])]
    model = make_model(nodes, [("x", [64, 1000])], [("y", None)], inits)
    compare(model, list(inits), {"x": rand(64, 1000)}, rand(64, 1000))


def test_dropout_mask():
    model, trainable, feeds, target = dropout_mask_chain(rand)
    compare(model, trainable, feeds, target)
    masked = make_model([helper.make_node("Dropout", ["x"], ["y", "mask"])], [("x", [3, 4])],
                        [("y", [3, 4]), ("mask", [3, 4], TensorProto.BOOL)], opset=13)
    m = dnnx.load(masked, device="cuda")
    x = rand(3, 4)
    for _ in range(3):  # eager, then recorded into a graph, then replayed
        out = m.run_dict({"x": x})
        np.testing.assert_array_equal(out["y"], x)
        assert out["mask"].dtype == np.bool_ and out["mask"].all()
    (row,) = [r for r in m.plan() if r["op"] == "Dropout"]
    assert row["algorithm"] == "view (no copy), mask fill (all kept)", row


def fp16_cases():
    cases = [pytest.param(unary_chain, (c,), id=c) for c in UNARY_OPS if c != "Abs"]
    cases += [pytest.param(pow_chain, s, id=f"Pow-{s[1]}") for s in POW_SHAPES]
    cases += [pytest.param(prelu_chain, (s,), id=f"PRelu-{s}") for s in SLOPE_SHAPES]
    return cases


@pytest.mark.parametrize("builder, args", fp16_cases())
def test_fp16_forward(builder, args):
    model, _, feeds, _ = builder(rand, *args)
    want = dnnx.load(model).run_dict(feeds)
    half = dnnx.load(model, device="cuda", precision="fp16", measure_precision=False)
    got = half.run_dict(feeds)
    for name, w in want.items():
        np.testing.assert_allclose(got[name], w, rtol=FP16_TOL, atol=FP16_TOL * float(np.abs(w).max()), err_msg=name)
