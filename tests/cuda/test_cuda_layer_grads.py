"""The CUDA backend's layer gradients (engine/backends/cuda/*_grad_cuda.cc) against the CPU
backend's, through the tuner's gradient hook (Tuner.gradients: loss and dLoss/dparameter, no
update): Conv (1-D/2-D/3-D, groups, pads incl. asymmetric, strides, dilations) with its backward
planner, MaxPool (cuDNN and the direct kernel), Add/Sub/Mul/Div with broadcasting, Transpose,
Concat, BatchNormalization and LSTM (every direction and layout). The CPU gradients are
themselves checked against float64 finite differences in tests/test_gradients.py; here the CPU
is the oracle, and the 1-D conv formulas of issue #4 are also checked directly on CUDA.

Tolerance (fp32, no TF32 anywhere): elementwise |cuda - cpu| <= RTOL * |cpu| + ATOL * max|cpu|
and the relative L2 error ||cuda - cpu|| / ||cpu|| <= L2. A gradient is a sum over the batch and
every output position of fp32 products (dW of a conv sums N*OH*OW terms); cuDNN's backward
algorithms (FFT, Winograd, the atomics of ALGO_0) sum in other orders than the CPU's GEMMs, so
each element can be off by a few ulps of the largest partial sum, hence ATOL scaled by max|cpu|.
TF32 (10-bit mantissa) would show relative L2 errors near 1e-4..1e-3: L2 = 5e-5 still proves
that no TF32 math ran. The loss is one fp32 reduction: rtol 1e-5.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from onnx import helper

import dnnx
from grad_models import (assert_conv1d_formulas, concat_branches, conv1d_time_batch_channel, lstm_last_hidden_state,
                         transpose_chain)
from ort_check import make_model

RTOL = 1e-4
ATOL = 2e-5
L2 = 5e-5
LOSS_RTOL = 1e-5

RNG = np.random.default_rng(11)

# The non-deterministic cuDNN backward algorithms (atomics): deterministic=True must avoid them.
NON_DETERMINISTIC = {"BWD_DATA_ALGO_0", "BWD_FILTER_ALGO_0", "BWD_FILTER_ALGO_3"}


def rand(*shape, scale=1.0, rng=None):
    return ((rng or RNG).standard_normal(shape) * scale).astype(np.float32)


def out_shape(model):
    return [d.dim_value for d in model.graph.output[0].type.tensor_type.shape.dim]


def assert_grad_close(got, want, what: str, atol: float = ATOL, l2: float = L2) -> None:
    """Elementwise within RTOL and atol * max|want|, and a relative L2 error within l2 (the LSTM
    training tests pass their own bounds)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    assert np.isfinite(got).all(), f"{what}: non-finite CUDA gradient"
    g, w = got.astype(np.float64), want.astype(np.float64)
    scale = float(np.abs(w).max()) if w.size else 0.0
    np.testing.assert_allclose(g, w, rtol=RTOL, atol=atol * max(scale, 1e-30), err_msg=what)
    norm = float(np.linalg.norm(w))
    if norm > 0:
        rel = float(np.linalg.norm(g - w)) / norm
        assert rel <= l2, f"{what}: relative L2 error {rel:.3g} > {l2}"


def tuner(model, trainable, device, loss="mse", **load_kwargs):
    m = dnnx.load(model, device=device, optimize=False, **load_kwargs)
    return m, m.finetune(trainable=trainable, loss=loss, momentum=0.0)


def check_cuda_gradients(model, trainable, feeds, target, loss="mse", **load_kwargs):
    """CUDA's loss and gradients of every parameter in `trainable` against the CPU's; returns CUDA's."""
    cpu_model, cpu = tuner(model, trainable, "cpu", loss)
    _, gpu = tuner(model, trainable, "cuda", loss, **load_kwargs)
    x = [feeds[s.name] for s in cpu_model.inputs]
    want_loss, want = cpu.gradients(x, target)
    got_loss, got = gpu.gradients(x, target)
    np.testing.assert_allclose(got_loss, want_loss, rtol=LOSS_RTOL, err_msg="loss")
    assert set(got) == set(want) == set(trainable)
    for name in trainable:
        assert_grad_close(np.asarray(got[name]), np.asarray(want[name]), f"d{name} (cuda vs cpu)")
    return got


# --- Conv -------------------------------------------------------------------------------------
CONV_CASES = [
    dict(kernel_shape=[3, 3]),
    dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 0, 1, 0]),     # asymmetric: padded X, cropped dX
    dict(kernel_shape=[2, 3], pads=[0, 1, 1, 2], strides=[1, 2]),      # asymmetric both ends
    dict(kernel_shape=[2, 2], dilations=[2, 2], pads=[1, 1, 1, 1]),
    dict(kernel_shape=[3, 3], group=2, pads=[1, 1, 1, 1]),
    dict(kernel_shape=[1, 1]),
    dict(kernel_shape=[3, 3], auto_pad="SAME_UPPER", strides=[2, 2]),
]


def conv_ids(a):
    return "-".join(f"{k}{v}" for k, v in a.items())


def two_conv_model(attrs, bias, rng=None):
    """x [2,3,9,9] -> Conv1 (3x3, pad 1) -> Relu -> Conv2 (the case) -> mse: conv2's data gradient
    reaches conv1's parameters, its filter and bias gradients are parameters."""
    group = attrs.get("group", 1)
    kh, kw = attrs["kernel_shape"]
    inits = {"w1": rand(4, 3, 3, 3, scale=0.3, rng=rng), "b1": rand(4, scale=0.1, rng=rng),
             "w2": rand(6, 4 // group, kh, kw, scale=0.3, rng=rng)}
    conv2_inputs = ["r", "w2"]
    if bias:
        inits["b2"] = rand(6, scale=0.1, rng=rng)
        conv2_inputs.append("b2")
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r"]), helper.make_node("Conv", conv2_inputs, ["y"], **attrs)]
    return make_model(nodes, [("x", [2, 3, 9, 9])], [("y", None)], inits), inits


@pytest.mark.parametrize("path", ["direct-where-it-fits", "cudnn"])
@pytest.mark.parametrize("search", ["heuristic", "exhaustive"])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("attrs", CONV_CASES, ids=conv_ids)
def test_conv2d(attrs, bias, search, path, monkeypatch):
    if path == "cudnn":  # cuDNN's backward algorithms, not the direct kernels (Note [direct conv gradients])
        monkeypatch.setenv("DNNX_PROBE_DIRECT_CONV_GRAD", "0")
    model, inits = two_conv_model(attrs, bias)
    check_cuda_gradients(model, list(inits), {"x": rand(2, 3, 9, 9)}, rand(*out_shape(model)), algo_search=search)


def test_conv3d_and_a_trainable_input():
    # x0 (an initializer added to the zero input) makes dL/dX of the first conv a parameter gradient.
    inits = {"x0": rand(2, 1, 4, 5, 4), "w1": rand(2, 1, 2, 2, 2, scale=0.5), "w2": rand(3, 2, 2, 3, 2, scale=0.5),
             "b2": rand(3)}
    nodes = [helper.make_node("Add", ["z", "x0"], ["x"]),
             helper.make_node("Conv", ["x", "w1"], ["c1"], kernel_shape=[2, 2, 2], pads=[1, 0, 1, 0, 1, 0]),
             helper.make_node("Conv", ["c1", "w2", "b2"], ["y"], kernel_shape=[2, 3, 2], strides=[1, 2, 1])]
    model = make_model(nodes, [("z", [2, 1, 4, 5, 4])], [("y", None)], inits)
    check_cuda_gradients(model, list(inits), {"z": np.zeros((2, 1, 4, 5, 4), np.float32)}, rand(*out_shape(model)))


@pytest.mark.parametrize("pad", [0, 1, 2])
def test_conv1d_time_batch_channel_formulas_on_cuda(pad):
    """Issue #4's [T, B, C] 1-D conv on CUDA against its closed forms (tests/grad_models.py),
    evaluated in float64 (fp32 tolerances as the CPU test of the same formulas)."""
    case = conv1d_time_batch_channel(rand, pad)
    m = dnnx.load(case.model, device="cuda", optimize=False)
    _, grads = m.finetune(trainable=["x0", "W", "bias"], loss="mse", momentum=0.0).gradients(case.zeros, case.target)
    assert_conv1d_formulas(case, m.run(case.zeros), grads)


def test_conv1d_asymmetric_pads_and_stride():
    inits = {"x0": rand(2, 3, 11), "w": rand(4, 3, 3, scale=0.4), "b": rand(4)}
    nodes = [helper.make_node("Add", ["z", "x0"], ["x"]),
             helper.make_node("Conv", ["x", "w", "b"], ["y"], kernel_shape=[3], pads=[2, 0], strides=[2])]
    model = make_model(nodes, [("z", [2, 3, 11])], [("y", None)], inits)
    check_cuda_gradients(model, list(inits), {"z": np.zeros((2, 3, 11), np.float32)}, rand(*out_shape(model)))


# --- MaxPool ----------------------------------------------------------------------------------
POOL_CASES = [
    dict(kernel_shape=[2, 2], strides=[2, 2]),                      # the 2x2 kernel (even planes: 10x10)
    dict(kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1]),   # cuDNN, overlapping windows
    dict(kernel_shape=[3, 2], strides=[2, 2], ceil_mode=1),         # direct kernel (ceil_mode)
    dict(kernel_shape=[2, 2], dilations=[2, 2]),                    # direct kernel (dilations)
    dict(kernel_shape=[3, 3], strides=[2, 2], pads=[0, 1, 1, 0]),   # direct kernel (asymmetric pads)
]


@pytest.mark.parametrize("attrs", POOL_CASES, ids=conv_ids)
def test_max_pool(attrs):
    # No Relu before the pool: windows of random conv outputs have no ties (ties are where cuDNN
    # and the CPU may give the gradient to different taps).
    inits = {"w": rand(3, 2, 3, 3, scale=0.5), "b": rand(3, scale=0.1)}
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("MaxPool", ["c"], ["y"], **attrs)]
    model = make_model(nodes, [("x", [2, 2, 9, 9])], [("y", None)], inits)
    check_cuda_gradients(model, list(inits), {"x": rand(2, 2, 9, 9)}, rand(*out_shape(model)))


@pytest.mark.parametrize("size, algorithm", [(10, "2x2 gradient kernel"), (9, "cudnnPoolingBackward")])
def test_max_pool_2x2_gradient_kernel_and_ties(size, algorithm):
    # Note [2x2 pool gradient]: even planes take the 2x2 kernel, odd ones cuDNN. x is the
    # trainable (x0 + the zero input), rounded to a few values so that many windows hold ties:
    # the 2x2 kernel gives dY to the first maximum in row order, as the CPU does.
    x0 = np.round(rand(4, 3, size, size) * 2).astype(np.float32) / 2
    nodes = [helper.make_node("Add", ["z", "x0"], ["x"]),
             helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2])]
    model = make_model(nodes, [("z", [4, 3, size, size])], [("y", None)], {"x0": x0})
    zeros = {"z": np.zeros((4, 3, size, size), np.float32)}
    if algorithm.startswith("2x2"):
        check_cuda_gradients(model, ["x0"], zeros, rand(*out_shape(model)))
    _, gpu = tuner(model, ["x0"], "cuda")
    pool = [r for r in gpu.plan(batch_size=4) if r["op"] == "MaxPool backward"]
    assert len(pool) == 1 and pool[0]["algorithm"].startswith(algorithm), pool


def test_max_pool_1d():
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[3]),
             helper.make_node("MaxPool", ["c"], ["y"], kernel_shape=[2], strides=[2])]
    model = make_model(nodes, [("x", [3, 1, 10])], [("y", None)], {"w": rand(2, 1, 3, scale=0.5)})
    check_cuda_gradients(model, ["w"], {"x": rand(3, 1, 10)}, rand(3, 2, 4))


def test_max_pool_3d():
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[2, 2, 2]),
             helper.make_node("MaxPool", ["c"], ["y"], kernel_shape=[2, 2, 2], strides=[1, 2, 1])]
    model = make_model(nodes, [("x", [2, 1, 5, 6, 5])], [("y", None)], {"w": rand(2, 1, 2, 2, 2, scale=0.5)})
    check_cuda_gradients(model, ["w"], {"x": rand(2, 1, 5, 6, 5)}, rand(*out_shape(model)))


# --- broadcast binary ops ---------------------------------------------------------------------
@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div"])
@pytest.mark.parametrize("p_shape", [(4,), (3, 1), (1, 3, 4), (2, 1, 1), (2, 3, 4), (), (2, 1, 4)])
@pytest.mark.parametrize("p_first", [False, True])
def test_broadcast_binary(op, p_shape, p_first):
    # h = x * q (q [2,3,4] trainable), y = op(h, p) or op(p, h): both sides' gradients flow.
    q = rand(2, 3, 4)
    p = rand(*p_shape) if p_shape else np.float32(RNG.standard_normal())
    x = rand(2, 3, 4)
    if op == "Div":  # denominators away from 0
        if p_first:
            q, x = (np.abs(q) + 0.5).astype(np.float32), (np.abs(x) + 0.5).astype(np.float32)
        else:
            p = (np.abs(p) + 0.5).astype(np.float32)
    inits = {"q": q, "p": np.asarray(p, dtype=np.float32)}
    nodes = [helper.make_node("Mul", ["x", "q"], ["h"]),
             helper.make_node(op, ["p", "h"] if p_first else ["h", "p"], ["y"])]
    model = make_model(nodes, [("x", [2, 3, 4])], [("y", None)], inits)
    check_cuda_gradients(model, ["q", "p"], {"x": x}, rand(2, 3, 4))


def test_broadcast_over_a_large_reduction():
    # A bias [C,1,1] over [N,C,H,W]: one block per channel sums N*H*W = 2048 products.
    inits = {"q": rand(8, 4, 16, 16), "b": rand(4, 1, 1)}
    nodes = [helper.make_node("Mul", ["x", "q"], ["h"]), helper.make_node("Mul", ["h", "b"], ["y"])]
    model = make_model(nodes, [("x", [8, 4, 16, 16])], [("y", None)], inits)
    check_cuda_gradients(model, ["q", "b"], {"x": rand(8, 4, 16, 16)}, rand(8, 4, 16, 16))


# --- Transpose, Concat, BatchNormalization ----------------------------------------------------
@pytest.mark.parametrize("perm", [[0, 2, 1], [2, 0, 1], [1, 0, 2]])
def test_transpose(perm):
    check_cuda_gradients(*transpose_chain(rand, perm))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concat(axis):
    check_cuda_gradients(*concat_branches(rand, axis))


def test_batchnorm_after_a_trainable_conv():
    inits = {"w": rand(3, 2, 3, 3, scale=0.5), "scale": rand(3), "bias": rand(3),
             "mean": rand(3, scale=0.1), "var": (np.abs(rand(3)) + 0.5).astype(np.float32)}
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[3, 3]),
             helper.make_node("BatchNormalization", ["c", "scale", "bias", "mean", "var"], ["y"], epsilon=1e-3)]
    model = make_model(nodes, [("x", [2, 2, 6, 6])], [("y", None)], inits)
    check_cuda_gradients(model, ["w", "scale", "bias"], {"x": rand(2, 2, 6, 6)}, rand(2, 3, 4, 4))
    with pytest.raises(dnnx.UnsupportedModelError, match="running mean"):
        dnnx.load(model, device="cuda").finetune(trainable=["mean"], loss="mse")


# --- LSTM -------------------------------------------------------------------------------------
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("layout", [0, 1])
def test_lstm(direction, layout):
    S, B, I, H = 5, 3, 6, 4
    D = 2 if direction == "bidirectional" else 1
    x_shape = (S, B, I) if layout == 0 else (B, S, I)
    state_shape = (D, B, H) if layout == 0 else (B, D, H)
    inits = {"q": rand(*x_shape), "W": rand(D, 4 * H, I, scale=0.4), "R": rand(D, 4 * H, H, scale=0.4),
             "Bias": rand(D, 8 * H, scale=0.2), "h0": rand(*state_shape, scale=0.5),
             "c0": rand(*state_shape, scale=0.5)}
    # Y and Y_h both reach the loss (Y_h added to every step of Y), so dY and dY_h both flow.
    nodes = [helper.make_node("Mul", ["x", "q"], ["xq"]),
             helper.make_node("LSTM", ["xq", "W", "R", "Bias", "", "h0", "c0"], ["y", "yh"], hidden_size=H,
                              direction=direction, layout=layout)]
    if layout == 0:  # yh [D, B, H] broadcasts over Y [S, D, B, H]
        nodes.append(helper.make_node("Add", ["y", "yh"], ["out"]))
    else:  # yh [B, D, H] -> [B, 1, D, H] over Y [B, S, D, H]
        nodes += [helper.make_node("Unsqueeze", ["yh", "axis1"], ["yh1"]),
                  helper.make_node("Add", ["y", "yh1"], ["out"])]
        inits_extra = {"axis1": np.array([1], np.int64)}
    y_shape = (S, D, B, H) if layout == 0 else (B, S, D, H)
    model = make_model(nodes, [("x", list(x_shape))], [("out", None)], {**inits, **(inits_extra if layout else {})})
    assert out_shape(model) == list(y_shape)
    check_cuda_gradients(model, list(inits), {"x": rand(*x_shape)}, rand(*y_shape))


def test_lstm_loss_on_the_last_hidden_state():
    B = 4
    check_cuda_gradients(*lstm_last_hidden_state(rand, S=6, B=B, H=5), RNG.integers(0, 3, size=B),
                         loss="cross_entropy")


def test_lstm_without_bias_trains_w_and_r():
    S, B, I, H = 4, 2, 3, 4
    inits = {"W": rand(1, 4 * H, I, scale=0.5), "R": rand(1, 4 * H, H, scale=0.5)}
    nodes = [helper.make_node("LSTM", ["x", "W", "R"], ["y"], hidden_size=H)]
    model = make_model(nodes, [("x", [S, B, I])], [("y", None)], inits)
    check_cuda_gradients(model, list(inits), {"x": rand(S, B, I)}, rand(S, 1, B, H))


def test_lstm_peephole_training_is_refused_on_cuda():
    S, B, I, H = 3, 2, 3, 2
    inits = {"W": rand(1, 4 * H, I), "R": rand(1, 4 * H, H), "P": np.zeros((1, 3 * H), np.float32)}
    model = make_model([helper.make_node("LSTM", ["x", "W", "R", "", "", "", "", "P"], ["y"], hidden_size=H)],
                       [("x", [S, B, I])], [("y", None)], inits)
    with pytest.raises(dnnx.UnsupportedModelError, match="peephole"):  # at finetune() or the first step
        t = dnnx.load(model, device="cuda").finetune(trainable=["P"], loss="mse")
        t.gradients(rand(S, B, I), rand(S, 1, B, H))


# --- the backward planner ---------------------------------------------------------------------
# These tests are of cuDNN's backward planner: the direct kernels (which take this small model's
# convs, Note [direct conv gradients]) are switched off.
@pytest.fixture
def cudnn_backward(monkeypatch):
    monkeypatch.setenv("DNNX_PROBE_DIRECT_CONV_GRAD", "0")


def planner_model():
    """The same model in every process (its own seeded generator)."""
    model, inits = two_conv_model(dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1]), True, rng=np.random.default_rng(5))
    return model, list(inits)


def cpu_planner_gradients():
    """(trainable, the CPU's gradients) of planner_model() on the inputs PROCESS uses (seed 0)."""
    model, trainable = planner_model()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 9, 9)).astype(np.float32)
    y = rng.standard_normal((2, 6, 9, 9)).astype(np.float32)
    _, want = dnnx.load(model, optimize=False).finetune(trainable=trainable, loss="mse", momentum=0.0).gradients(x, y)
    return trainable, want


# One process: an exhaustive plan with this cache, the tuner's gradients; prints stats and grads.
PROCESS = """
import json, sys
import numpy as np
import dnnx
sys.path[:0] = [sys.argv[3], sys.argv[3] + "/.."]
from test_cuda_layer_grads import planner_model
model, trainable = planner_model()
m = dnnx.load(model, device="cuda", optimize=False, algo_search="exhaustive", plan_cache=sys.argv[1],
              workspace_limit=int(sys.argv[2]))
rng = np.random.default_rng(0)
x = rng.standard_normal((2, 3, 9, 9)).astype(np.float32)
y = rng.standard_normal((2, 6, 9, 9)).astype(np.float32)
loss, grads = m.finetune(trainable=trainable, loss="mse", momentum=0.0).gradients(x, y)
print(json.dumps({"stats": m.planner_stats(), "loss": loss, "grads": {k: np.asarray(v).tolist() for k, v in grads.items()}}))
"""


def in_new_process(cache, workspace_limit=256 << 20, env=None):
    here = os.path.dirname(os.path.abspath(__file__))
    done = subprocess.run([sys.executable, "-c", PROCESS, str(cache), str(workspace_limit), here],
                          capture_output=True, text=True,
                          env={**os.environ, "DNNX_PROBE_DIRECT_CONV_GRAD": "0", **(env or {})})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def entries(cache):
    return json.loads(cache.read_text())["entries"]


def backward_entries(cache, direction):
    return {k: e for k, e in entries(cache).items() if k.startswith(f"conv {direction} |")}


def test_exhaustive_backward_choices_are_cached_and_a_second_process_times_nothing(tmp_path):
    # The tuner plans on a backend of its own (the model's options), so what it searched shows in
    # the shared cache file: a search that found no entry writes one, a re-validated hit writes
    # nothing. An unchanged file after a second process therefore means no backward search ran.
    cache = tmp_path / "plan-cache.json"
    first = in_new_process(cache)
    data, filt = backward_entries(cache, "bwd data"), backward_entries(cache, "bwd filter")
    # conv2 needs dX and dW, conv1 dW only (its X is the graph input).
    assert len(data) == 1 and len(filt) == 2, list(entries(cache))
    for key, e in {**data, **filt}.items():
        assert "sm_" in key and "math FMA" in key and "deterministic 0" in key, key
        assert e["algorithm"].startswith("BWD_DATA_" if "bwd data" in key else "BWD_FILTER_"), e
        assert e["math"] == "fp32 (CUDNN_FMA_MATH)" and e["time_ms"] > 0, e
        for name, why in e["rejected"]:  # every candidate that lost says why
            assert why, (name, e)
    before = (cache.read_bytes(), cache.stat().st_mtime_ns)
    second = in_new_process(cache)
    assert (cache.read_bytes(), cache.stat().st_mtime_ns) == before, "the second process searched again"
    assert second["stats"]["timing_runs"] == 0 and second["stats"]["cache_stale"] == 0, second["stats"]
    # The same algorithms come back (ALGO_0's atomics may still round differently run to run).
    np.testing.assert_allclose(second["loss"], first["loss"], rtol=LOSS_RTOL)
    for name, g in first["grads"].items():
        assert_grad_close(np.asarray(second["grads"][name], np.float32), np.asarray(g, np.float32), f"d{name}")


def test_stale_backward_entries_are_dropped_and_searched_again(tmp_path):
    cache = tmp_path / "plan-cache.json"
    in_new_process(cache)
    doc = json.loads(cache.read_text())
    stale = [k for k in doc["entries"] if k.startswith("conv bwd")]
    assert stale
    for key in stale:
        doc["entries"][key]["workspace"] += 4096  # cuDNN will not report this workspace for the algorithm
    cache.write_text(json.dumps(doc))
    in_new_process(cache)
    fresh = entries(cache)
    assert set(stale) <= set(fresh)
    assert all(fresh[k]["workspace"] != doc["entries"][k]["workspace"] for k in stale), "stale entries were used"
    for k, e in doc["entries"].items():  # the forward entries were valid and stay as they were
        if not k.startswith("conv bwd"):
            assert fresh[k] == e, k


def test_zero_workspace_limit_holds_for_backward(tmp_path):
    cache = tmp_path / "plan-cache.json"
    out = in_new_process(cache, workspace_limit=0)
    bwd = {**backward_entries(cache, "bwd data"), **backward_entries(cache, "bwd filter")}
    assert bwd and all(e["workspace"] == 0 for e in bwd.values()), bwd
    assert all("workspace limit 0" in k for k in bwd)
    for e in bwd.values():
        for name, why in e["rejected"]:
            assert "over the limit" in why or "slower than" in why or "cuDNN" in why or "not" in why, (name, why)
    trainable, want = cpu_planner_gradients()
    for name in trainable:
        assert_grad_close(np.asarray(out["grads"][name], np.float32), want[name], f"d{name} (limit 0)")


@pytest.mark.parametrize("search", ["heuristic", "exhaustive"])
def test_deterministic_backward_is_bit_identical_and_avoids_atomics(search, tmp_path, cudnn_backward):
    model, trainable = planner_model()
    x, y = rand(2, 3, 9, 9), rand(2, 6, 9, 9)
    cache = tmp_path / "plan-cache.json"
    runs = []
    for _ in range(2):
        m = dnnx.load(model, device="cuda", optimize=False, algo_search=search, deterministic=True, plan_cache=cache)
        runs.append(m.finetune(trainable=trainable, loss="mse", momentum=0.0).gradients(x, y)[1])
    for name in trainable:
        np.testing.assert_array_equal(runs[0][name], runs[1][name], err_msg=name)
    check_cuda_gradients(model, trainable, {"x": x}, y, algo_search=search, deterministic=True)
    if search == "exhaustive":
        bwd = {k: e for k, e in entries(cache).items() if k.startswith("conv bwd")}
        assert bwd and all("deterministic 1" in k for k in bwd)
        for e in bwd.values():
            assert e["algorithm"] not in NON_DETERMINISTIC, e
            for name, why in e["rejected"]:
                if name in NON_DETERMINISTIC and "slower" not in why:
                    assert "not deterministic" in why or "cuDNN" in why or "limit" in why, (name, why)


def test_a_forced_failure_of_the_backward_choice_falls_back(tmp_path):
    # DNNX_TEST_FAIL_ALGO names the first exhaustive choice of each backward direction; a fresh
    # process must then choose another one (and not cache a choice that reflects the failure).
    cache = tmp_path / "plan-cache.json"
    in_new_process(cache)
    chosen = sorted({e["algorithm"] for k, e in entries(cache).items() if k.startswith("conv bwd")})
    failed = in_new_process(tmp_path / "other.json", env={"DNNX_TEST_FAIL_ALGO": ",".join(chosen)})
    other = entries(tmp_path / "other.json") if (tmp_path / "other.json").exists() else {}
    assert all(e["algorithm"] not in chosen for k, e in other.items() if k.startswith("conv bwd"))
    trainable, want = cpu_planner_gradients()
    for name in trainable:
        assert_grad_close(np.asarray(failed["grads"][name], np.float32), want[name], f"d{name} (fallback)")


def test_the_tuner_plan_names_both_backward_algorithms(cudnn_backward):
    model, trainable = planner_model()
    t = dnnx.load(model, device="cuda", optimize=False).finetune(trainable=trainable, loss="mse")
    if not hasattr(t, "plan"):
        pytest.skip("Tuner.plan() is not on this branch yet (the trainer plumbing shows TailPlan::steps())")
    text = str(t.plan())
    assert "BWD_DATA_" in text and "BWD_FILTER_" in text and "CUDNN_FMA_MATH" in text, text
