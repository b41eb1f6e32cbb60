"""The CPU recurrent kernels' small-batch paths (engine/backends/cpu/rnn/: Note [recurrent dot
product], Note [lstm batch blocks]) against onnxruntime: LSTM, GRU and RNN at batch 1 and above
on random shapes (hidden sizes off the 8-wide vectors, bidirectional, sequence_lens, initial
states, layouts 0 and 1); the same bits on 1 and 2 threads (the directions and batch blocks run on
separate threads); and all of it again with the portable loops forced (DNNX_RNN_PORTABLE=1, in a
subprocess: the switch is read once per process)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import dnnx
from dnnx.threads import get_num_threads, set_num_threads
from ort_check import assert_matches_ort
from test_lstm import lstm_case
from test_lstm_packed_cpu import lstm_algorithm, panels_on
from test_recurrent import recurrent_case

HERE = Path(__file__).resolve().parent


@pytest.fixture(autouse=True)
def restore_threads():
    before = get_num_threads()
    yield
    set_num_threads(before)


def random_lens(rng, batch, seq):
    lens = [int(v) for v in rng.integers(0, seq + 1, size=batch)]
    lens[0] = seq  # the longest sequence sets the steps
    return lens


def build(op, seq, batch, inp, hidden, direction, *, lens, initial, layout=0, seed=0, **attrs):
    if op == "LSTM":
        return lstm_case(seq, batch, inp, hidden, direction=direction, lens=lens, initial_h=initial,
                         initial_c=initial, layout=layout, seed=seed, **attrs)
    # Weights of 0.5 standard normal over 32+ inputs saturate the gates, where the fast tanh's and
    # onnxruntime's rounding drift apart over the steps: the zoo's scale, ~1/sqrt(hidden), there.
    scale = 0.5 if hidden < 32 else 0.1
    return recurrent_case(op, seq, batch, inp, hidden, direction=direction, lens=lens, initial_h=initial,
                          layout=layout, seed=seed, scale=scale, **attrs)


# (seq, batch, input, hidden): batch 1 (dot products), 2-3 (dot products, 4x2 blocks and a
# last odd row), 5 and 17 (LSTM: TapGemms over R^T, a short last block); hidden 1, 5, 13 and 40
# leave a tail past the 8-wide vectors, 128 the zoo's size.
SHAPES = [(7, 1, 5, 13), (1, 1, 3, 5), (9, 2, 4, 1), (6, 3, 11, 40), (5, 5, 7, 9), (4, 17, 6, 13),
          (12, 1, 40, 128), (3, 1, 2, 8)]


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_matches_ort(op, shape, direction):
    seq, batch, inp, hidden = shape
    rng = np.random.default_rng(seq * 1000 + batch * 100 + hidden)
    use_lens = batch > 1 and seq > 1
    lens = random_lens(rng, batch, seq) if use_lens else None
    model, feeds = build(op, seq, batch, inp, hidden, direction, lens=lens, initial=True, seed=hidden)
    got = assert_matches_ort(model, feeds)
    if lens is not None:
        nd = 2 if direction == "bidirectional" else 1
        for b, n in enumerate(lens):
            assert np.all(got["Y"][n:, :, b] == 0.0)
            assert got["Y"].shape[1] == nd


@pytest.mark.parametrize("op, attrs", [("LSTM", {}), ("LSTM", {"clip": 0.8}), ("LSTM", {"input_forget": 1}),
                                       ("GRU", {"linear_before_reset": 1}), ("GRU", {}),
                                       ("RNN", {"activations": ["Relu", "Sigmoid"]})])
@pytest.mark.parametrize("batch", [1, 3, 6])  # 6: the LSTM's, GRU's and RNN's TapGemm steps
def test_batch_major_layout(op, attrs, batch):
    """Layout 1 against the same node in layout 0 (onnxruntime has no layout 1)."""
    seq, inp, hidden = 6, 7, 11
    lens = [6, 2, 0, 6, 4, 1][:batch] if batch > 1 else None
    model1, feeds1 = build(op, seq, batch, inp, hidden, "bidirectional", lens=lens, initial=False, layout=1, **attrs)
    got = dnnx.load(model1).run_dict(feeds1)
    model0, feeds0 = build(op, seq, batch, inp, hidden, "bidirectional", lens=lens, initial=False, **attrs)
    feeds0["X"] = np.ascontiguousarray(feeds1["X"].transpose(1, 0, 2))
    want = assert_matches_ort(model0, feeds0)
    np.testing.assert_allclose(got["Y"], want["Y"].transpose(2, 0, 1, 3), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op, batch, algorithm", [
    ("LSTM", 1, "panels+gates x2 threads"),  # the two directions on two threads
    ("LSTM", 3, "dot+gates x2 threads"),
    ("LSTM", 37, "tap+gates x2 threads"),    # 3 blocks of each direction
    ("GRU", 1, "panels+gates x2 threads"),   # the two directions on two threads
    ("RNN", 2, "gemm+gates x2 threads"),
])
def test_same_bits_on_one_and_two_threads(op, batch, algorithm):
    if op == "LSTM":  # this CPU's projection and batch-1 steps (tests/test_lstm_packed_cpu.py)
        algorithm = lstm_algorithm(algorithm, 24, hidden=48)
    elif not panels_on():  # GRU, RNN: the batch-1 panels where this CPU has them (test_gru_packed_cpu.py)
        algorithm = algorithm.replace("panels+gates", "gemm+gates")
    rng = np.random.default_rng(batch)
    lens = random_lens(rng, batch, 40) if batch > 1 else None
    model, feeds = build(op, 40, batch, 24, 48, "bidirectional", lens=lens, initial=True, seed=3)
    results = []
    for threads in (1, 2):
        set_num_threads(threads)
        m = dnnx.load(model)
        name = m.plan()[0]["algorithm"]
        if threads == 2:
            assert name == algorithm
        else:
            assert "threads" not in name
        results.append(m.run_dict(feeds))
    for key in results[0]:
        np.testing.assert_array_equal(results[1][key], results[0][key])
    assert_matches_ort(model, feeds)


def test_weights_fed_at_run_time_are_read_on_every_call():
    """Nothing is packed or cached across calls: R (and W) given as graph inputs may change."""
    import onnx

    model, feeds = lstm_case(5, 1, 4, 6, direction="bidirectional")
    graph = model.graph
    r = next(t for t in graph.initializer if t.name == "R")
    graph.input.append(onnx.helper.make_tensor_value_info("R", onnx.TensorProto.FLOAT, list(r.dims)))
    r_value = onnx.numpy_helper.to_array(r).copy()
    graph.initializer.remove(r)
    m = dnnx.load(model)
    for scale in (1.0, -0.5):
        feeds2 = dict(feeds, R=(r_value * scale).astype(np.float32))
        np.testing.assert_allclose(m.run_dict(feeds2)["Y"], assert_matches_ort(model, feeds2)["Y"], rtol=1e-5,
                                   atol=1e-6)


@pytest.mark.skipif(os.environ.get("DNNX_RNN_PORTABLE") not in (None, "", "0"), reason="already the portable run")
def test_portable_loops_pass_the_same_tests():
    """This file again, in a subprocess with the portable loops forced (no AVX2 cell, dot
    products or transposes), and their results against the vector code's."""
    env = dict(os.environ, DNNX_RNN_PORTABLE="1")
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x", str(Path(__file__)),
                          "-k", "not portable"], cwd=HERE.parent, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert " passed" in run.stdout


def test_portable_and_vector_paths_agree():
    """The same LSTM and GRU in this process (vector code where the CPU has AVX2) and in one with
    DNNX_RNN_PORTABLE=1: equal within fp32 rounding (FMA against separate multiply and add)."""
    lstm, lstm_feeds = lstm_case(30, 3, 9, 21, direction="bidirectional", initial_h=True, initial_c=True)
    gru, gru_feeds = recurrent_case("GRU", 30, 1, 9, 21, direction="bidirectional", initial_h=True,
                                    linear_before_reset=1)
    script = (
        "import sys, numpy as np, onnx, dnnx\n"
        "m = onnx.load(sys.argv[1]); f = dict(np.load(sys.argv[2]))\n"
        "np.savez(sys.argv[3], **dnnx.load(m).run_dict(f))\n")
    import tempfile

    import onnx

    with tempfile.TemporaryDirectory() as tmp:
        for i, (model, feeds) in enumerate([(lstm, lstm_feeds), (gru, gru_feeds)]):
            path, inputs, out = f"{tmp}/m{i}.onnx", f"{tmp}/in{i}.npz", f"{tmp}/out{i}.npz"
            onnx.save(model, path)
            np.savez(inputs, **feeds)
            env = dict(os.environ, DNNX_RNN_PORTABLE="1")
            subprocess.run([sys.executable, "-c", script, path, inputs, out], check=True, env=env, timeout=300)
            portable = dict(np.load(out))
            here = dnnx.load(model).run_dict(feeds)
            for key in here:
                np.testing.assert_allclose(portable[key], here[key], rtol=1e-5, atol=2e-6)
