"""GRU and RNN on CUDA (cuDNN's RNN v8 API, the LSTM kernel's code: engine/backends/cuda/rnn/)
against the CPU backend, and onnxruntime where it runs the case (layout 0; onnxruntime has no
layout-1 GRU/RNN, and the CPU backend is itself checked against onnxruntime in the CPU tests).
Covered: GRU with linear_before_reset=1 (cuDNN's CUDNN_GRU) and RNN with Tanh and Relu
(CUDNN_RNN_TANH / CUDNN_RNN_RELU), every direction, both layouts, with and without B,
initial_h, sequence_lens (zero lengths too) from a graph input or a constant, omitted outputs,
weights that are graph inputs; what cuDNN cannot run (GRU linear_before_reset=0, RNN Sigmoid or
one activation per direction, clip) running on the host inside the CUDA plan and still matching;
tf32 and fp16.

Tolerances: fp32 (FMA math on both sides, no TF32) as every CUDA test (cuda_check.py: elementwise
RTOL 1e-4 + ATOL 1e-5 x max|ref|, relative L2 2e-5). tf32: test_cuda_precision.py's bounds
(RTOL/ATOL 5e-3, relative L2 2e-3: operands rounded to TF32's 10-bit mantissa). fp16: the model
bounds of test_cuda_fp16.py (RTOL/ATOL 3e-2, relative L2 2e-2): a recurrence compounds the half
rounding of its inputs, weights and states step by step, as LSTM's fp16 tests say. Host layers
run the CPU's own kernel: rtol 1e-6, atol 1e-7 (as the LSTM host-fallback test).
"""
import warnings

import numpy as np
import pytest
from onnx import helper

import dnnx
from cuda_check import assert_close, check_cuda
from ort_check import make_model, rand
from recurrent_cases import gru_case, recurrent_case, rnn_case
from test_cuda_fp16 import HALF_CONV, MODEL_ATOL, MODEL_L2, MODEL_RTOL, assert_fp16_close, layer
from test_cuda_lstm import to_graph_input, to_initializer

FP32_MATH = "fp32 (CUDNN_FMA_MATH)"
TF32_MATH = "tf32 permitted (CUDNN_DEFAULT_MATH)"
DIRECTIONS = ["forward", "reverse", "bidirectional"]


def check(model, feeds, layout=0):
    """CUDA against the CPU backend, and onnxruntime at layout 0."""
    return check_cuda(model, feeds, ort=layout == 0)


def only_row(model, **load_kwargs):
    (row,) = dnnx.load(model, device="cuda", **load_kwargs).plan()
    return row


def seq_major_y(y, layout):
    return y if layout == 0 else y.transpose(1, 2, 0, 3)  # [seq, D, batch, H]


# --- on cuDNN, fp32 -------------------------------------------------------------------------------
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("layout", [0, 1])
def test_gru_directions_and_layouts(layout, direction, bias):
    model, feeds = gru_case(5, 3, 4, 6, direction=direction, layout=layout, bias=bias)
    row = only_row(model)
    assert row["algorithm"].startswith("cudnnRNNForward"), row
    assert row["math"] == FP32_MATH, row
    check(model, feeds, layout)


@pytest.mark.parametrize("activation", ["Tanh", "Relu"])
@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("layout", [0, 1])
def test_rnn_directions_and_layouts(layout, direction, activation):
    model, feeds = rnn_case(5, 3, 4, 6, direction=direction, layout=layout, activation=activation)
    assert only_row(model)["algorithm"].startswith("cudnnRNNForward")
    check(model, feeds, layout)


def test_rnn_default_activation_is_tanh_on_cudnn():
    # No activations attribute: Tanh for every direction (ONNX's default), CUDNN_RNN_TANH.
    model, feeds = recurrent_case("RNN", 5, 3, 4, 6, direction="bidirectional")
    assert only_row(model)["algorithm"].startswith("cudnnRNNForward")
    check(model, feeds)


CASES = {"gru": gru_case, "rnn_tanh": rnn_case,
         "rnn_relu": lambda *a, **k: rnn_case(*a, activation="Relu", **k)}


@pytest.mark.parametrize("cell", list(CASES))
@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("layout", [0, 1])
def test_initial_h_and_sequence_lens(layout, direction, cell):
    model, feeds = CASES[cell](6, 4, 3, 5, direction=direction, layout=layout, lens=[6, 1, 4, 3], initial_h=True)
    got = check(model, feeds, layout)
    y = seq_major_y(got["Y"], layout)
    assert np.all(y[1:, :, 1] == 0.0) and np.all(y[4:, :, 2] == 0.0)  # past each length: zeros


@pytest.mark.parametrize("cell", list(CASES))
@pytest.mark.parametrize("layout", [0, 1])
def test_zero_length_sequences_give_zeros(layout, cell):
    # cuDNN refuses a length of 0: it runs as 1 and the entry's outputs are zeroed (the CPU: zeros).
    model, feeds = CASES[cell](4, 3, 2, 3, direction="bidirectional", layout=layout, lens=[0, 2, 4],
                               initial_h=True)
    got = check_cuda(model, feeds, ort=False)
    assert np.all(np.take(got["Y_h"], 0, axis=1 if layout == 0 else 0) == 0.0)
    assert np.all(seq_major_y(got["Y"], layout)[:, :, 0] == 0.0)


@pytest.mark.parametrize("cell", ["gru", "rnn_relu"])
@pytest.mark.parametrize("direction", DIRECTIONS)
def test_constant_sequence_lens_fixed_at_plan_time(direction, cell):
    model, feeds = CASES[cell](6, 4, 3, 5, direction=direction, lens=[6, 2, 4, 3], initial_h=True)
    model, feeds = to_initializer(model, feeds, "sequence_lens")
    assert "lengths read per run" not in only_row(model)["algorithm"]
    check(model, feeds)


def test_lengths_as_a_graph_input_are_read_per_run():
    model, feeds = gru_case(5, 3, 4, 6, direction="reverse", layout=1, lens=[5, 2, 4])
    row = only_row(model)
    assert "sequences reversed by kernel" in row["algorithm"] and "lengths read per run" in row["algorithm"], row
    check(model, feeds, 1)
    # Reading the lengths back cannot be recorded into a CUDA graph: the capture fails, saying why,
    # and every run stays eager, each with its own lengths.
    gpu = dnnx.load(model, device="cuda")
    for lens in ([5, 2, 4], [1, 5, 3], [4, 4, 0]):
        feeds["sequence_lens"] = np.array(lens, np.int32)
        want = dnnx.load(model).run_dict(feeds)
        got = gpu.run_dict(feeds)
        for name in want:
            assert_close(got[name], want[name], f"{name} with lengths {lens}")
    (graph,) = gpu.graphs()
    assert graph["state"].startswith("failed") and "sequence_lens" in graph["state"], graph


def test_sequence_lens_out_of_range_is_a_value_error():
    model, feeds = gru_case(4, 2, 3, 4, lens=[4, 5])
    gpu = dnnx.load(model, device="cuda")
    with pytest.raises(ValueError, match="sequence_lens\\[1\\] is 5"):
        gpu.run_dict(feeds)


@pytest.mark.parametrize("cell", ["gru", "rnn_tanh"])
@pytest.mark.parametrize("outputs", [("Y",), ("Y_h",)])
@pytest.mark.parametrize("layout", [0, 1])
def test_omitted_outputs(layout, outputs, cell):
    model, feeds = CASES[cell](4, 2, 3, 4, direction="bidirectional", layout=layout, outputs=outputs, lens=[4, 2],
                               initial_h=True)
    got = check(model, feeds, layout)
    assert set(got) == set(outputs)


@pytest.mark.parametrize("cell", ["gru", "rnn_relu"])
@pytest.mark.parametrize("hidden", [1, 7, 33])
def test_batch_one_odd_hidden(hidden, cell):
    model, feeds = CASES[cell](7, 1, 5, hidden, direction="bidirectional", initial_h=True)
    check(model, feeds)


@pytest.mark.parametrize("cell", ["gru", "rnn_tanh"])
def test_weights_as_graph_inputs_are_packed_per_run(cell):
    model, feeds = CASES[cell](4, 2, 3, 4, direction="bidirectional", lens=[4, 3])
    for name in ("W", "R", "B"):
        model, feeds = to_graph_input(model, feeds, name)
    gpu = dnnx.load(model, device="cuda")
    assert "weights packed per run" in gpu.plan()[0]["algorithm"]
    check(model, feeds)
    # A second run with other weights uses them (nothing of the first run's weights is kept).
    feeds = dict(feeds, W=feeds["W"] * 0.5)
    for name, want in dnnx.load(model).run_dict(feeds).items():
        assert_close(gpu.run_dict(feeds)[name], want, name)


def test_longer_sequence():
    model, feeds = gru_case(32, 8, 16, 32, direction="bidirectional", initial_h=True,
                            lens=[32, 30, 1, 17, 32, 2, 9, 20])
    check(model, feeds)


def test_gru_between_other_layers():
    # x -> Mul -> GRU -> Squeeze -> RNN: both on cuDNN, the GRU's Y feeding the RNN.
    S, B, I, H = 6, 3, 4, 5
    inits = {"q": 1.0 + 0.2 * np.arange(I, dtype=np.float32),
             "W0": np.random.default_rng(1).standard_normal((1, 3 * H, I)).astype(np.float32) * 0.4,
             "R0": np.random.default_rng(2).standard_normal((1, 3 * H, H)).astype(np.float32) * 0.4,
             "W1": np.random.default_rng(3).standard_normal((1, H, H)).astype(np.float32) * 0.4,
             "R1": np.random.default_rng(4).standard_normal((1, H, H)).astype(np.float32) * 0.4,
             "axes": np.array([1], np.int64)}
    nodes = [helper.make_node("Mul", ["x", "q"], ["xq"]),
             helper.make_node("GRU", ["xq", "W0", "R0"], ["y0"], hidden_size=H, linear_before_reset=1, name="gru"),
             helper.make_node("Squeeze", ["y0", "axes"], ["s0"]),
             helper.make_node("RNN", ["s0", "W1", "R1"], ["y1"], hidden_size=H, name="rnn")]
    model = make_model(nodes, [("x", [S, B, I])], [("y1", [S, 1, B, H])], inits)
    check(model, {"x": rand(S, B, I)})
    rows = {r["name"]: r for r in dnnx.load(model, device="cuda").plan()}
    assert rows["gru"]["algorithm"].startswith("cudnnRNNForward") and rows["rnn"]["algorithm"].startswith(
        "cudnnRNNForward"), rows


# --- what cuDNN cannot run: the host, inside the CUDA plan ---------------------------------------
HOST_CASES = {
    "gru_linear_before_reset_0": (lambda **k: gru_case(5, 3, 4, 6, linear_before_reset=0, **k), "linear_before_reset"),
    "gru_default_linear_before_reset": (lambda **k: recurrent_case("GRU", 5, 3, 4, 6, **k), "linear_before_reset"),
    "gru_clip": (lambda **k: gru_case(5, 3, 4, 6, clip=0.5, **k), "clip"),
    "rnn_sigmoid": (lambda **k: rnn_case(5, 3, 4, 6, activation="Sigmoid", **k), "Sigmoid"),
    "rnn_clip": (lambda **k: rnn_case(5, 3, 4, 6, clip=0.5, **k), "clip"),
    "rnn_two_activations": (lambda **k: recurrent_case("RNN", 5, 3, 4, 6, activations=["Tanh", "Relu"],
                                                       **{**k, "direction": "bidirectional"}),
                            "different activations per direction"),
}


@pytest.mark.parametrize("layout", [0, 1])
@pytest.mark.parametrize("case", list(HOST_CASES))
def test_what_cudnn_cannot_run_runs_on_the_host_naming_the_node(case, layout):
    make, why = HOST_CASES[case]
    model, feeds = make(direction="bidirectional", layout=layout, initial_h=True, lens=[5, 2, 0])
    with pytest.warns(dnnx.HostFallbackWarning, match=f"rec0.*{why}"):
        gpu = dnnx.load(model, device="cuda")
    row = gpu.plan()[0]
    assert row["algorithm"].startswith("on the host") and why in row["algorithm"], row
    want = dnnx.load(model).run_dict(feeds)
    for _ in range(3):  # eager, captured, replayed
        got = gpu.run_dict(feeds)
        assert set(got) == set(want)
        for name, value in want.items():
            np.testing.assert_allclose(got[name], value, rtol=1e-6, atol=1e-7, err_msg=name)  # the same CPU kernel
    assert [g["state"] for g in gpu.graphs()] == ["captured"]


def test_host_gru_next_to_a_cudnn_gru():
    # Two GRUs on one input: linear_before_reset=1 on cuDNN, =0 on the host; both match the CPU.
    S, B, I, H = 5, 2, 3, 4
    rng = np.random.default_rng(7)
    inits = {n: (rng.standard_normal(s) * 0.4).astype(np.float32)
             for n, s in {"W": (1, 3 * H, I), "R": (1, 3 * H, H), "B": (1, 6 * H)}.items()}
    nodes = [helper.make_node("GRU", ["x", "W", "R", "B"], ["y1"], hidden_size=H, linear_before_reset=1, name="g1"),
             helper.make_node("GRU", ["x", "W", "R", "B"], ["y0"], hidden_size=H, linear_before_reset=0, name="g0")]
    model = make_model(nodes, [("x", [S, B, I])], [("y1", [S, 1, B, H]), ("y0", [S, 1, B, H])], inits)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dnnx.HostFallbackWarning)
        rows = {r["name"]: r for r in dnnx.load(model, device="cuda").plan()}
    assert rows["g1"]["algorithm"].startswith("cudnnRNNForward"), rows
    assert rows["g0"]["algorithm"].startswith("on the host"), rows
    got = check(model, {"x": rand(S, B, I)})
    # The two forms differ (the test would not notice a swapped form otherwise).
    assert np.abs(got["y1"] - got["y0"]).max() > 1e-3


# --- tf32 and fp16 --------------------------------------------------------------------------------
@pytest.mark.parametrize("cell", list(CASES))
@pytest.mark.parametrize("direction", DIRECTIONS)
def test_tf32(direction, cell):
    model, feeds = CASES[cell](8, 4, 16, 32, direction=direction, lens=[8, 3, 5, 8], initial_h=True)
    gpu = dnnx.load(model, device="cuda", precision="tf32")
    assert layer(gpu.plan(), model.graph.node[0].op_type)["math"] == TF32_MATH
    got, want = gpu.run_dict(feeds), dnnx.load(model).run_dict(feeds)
    for name, w in want.items():
        assert_recurrent_tf32_close(got[name], w, f"{name} tf32 vs cpu")


# tf32 rounds each GEMM operand to a 10-bit mantissa (~5e-4 relative), and a recurrence feeds
# every step's error into the next through R: over the 8 steps here an ungated Tanh RNN grew it to
# 8.8e-3 absolute on 3 of 1024 outputs of |Y| <= 1 (H200, 2026-12-02), past the one-layer bounds
# of test_cuda_precision (5e-3). So 2e-2 of max|want| per element, and 5e-3 relative L2 overall.
def assert_recurrent_tf32_close(got, want, what):
    np.testing.assert_allclose(got, want, rtol=2e-2, atol=2e-2 * float(np.abs(want).max()), err_msg=what)
    l2 = float(np.linalg.norm(got.astype(np.float64) - want) / np.linalg.norm(want.astype(np.float64)))
    assert l2 <= 5e-3, f"{what}: relative L2 {l2:.3g}"


@pytest.mark.parametrize("cell", list(CASES))
@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("layout", [0, 1])
def test_fp16(layout, direction, cell):
    model, feeds = CASES[cell](6, 4, 8, 16, direction=direction, layout=layout, lens=[6, 1, 4, 0], initial_h=True)
    gpu = dnnx.load(model, device="cuda", precision="fp16", measure_precision=False)
    assert layer(gpu.plan(), model.graph.node[0].op_type)["math"] == HALF_CONV, gpu.plan()
    got, want = gpu.run_dict(feeds), dnnx.load(model).run_dict(feeds)
    assert set(got) == set(want)
    for name, w in want.items():
        assert got[name].dtype == np.float32  # outputs come back as float32
        assert_fp16_close(got[name], w, f"{name} fp16 vs cpu", MODEL_RTOL, MODEL_ATOL, MODEL_L2)
    y = seq_major_y(got["Y"], layout)
    assert np.all(y[1:, :, 1] == 0.0) and np.all(y[:, :, 3] == 0.0)  # past each length: zeros


def test_fp16_weights_as_graph_inputs():
    model, feeds = gru_case(5, 3, 8, 8, direction="bidirectional")
    for name in ("W", "R", "B"):
        model, feeds = to_graph_input(model, feeds, name)
    gpu = dnnx.load(model, device="cuda", precision="fp16", measure_precision=False)
    got, want = gpu.run_dict(feeds), dnnx.load(model).run_dict(feeds)
    for name, w in want.items():
        assert_fp16_close(got[name], w, f"{name} fp16 vs cpu", MODEL_RTOL, MODEL_ATOL, MODEL_L2)


def test_fp16_host_gru_still_matches():
    # linear_before_reset=0 runs on the host in float32 inside an fp16 plan (Note [host fallback]).
    model, feeds = gru_case(5, 3, 8, 8, direction="bidirectional", linear_before_reset=0, initial_h=True)
    with pytest.warns(dnnx.HostFallbackWarning, match="linear_before_reset"):
        gpu = dnnx.load(model, device="cuda", precision="fp16", measure_precision=False)
    assert layer(gpu.plan(), "GRU")["algorithm"].startswith("on the host"), gpu.plan()
    got, want = gpu.run_dict(feeds), dnnx.load(model).run_dict(feeds)
    for name, w in want.items():
        assert_fp16_close(got[name], w, f"{name} fp16 plan vs cpu", MODEL_RTOL, MODEL_ATOL, MODEL_L2)
