"""The CPU GRU's and RNN's plan-time packing (engine/backends/cpu/rnn/recurrent_cpu.cc, Note [gru
panels]): at batch 1 the steps on R^T packed in column panels (GRU under linear_before_reset: one
set over [3H, H]; without: the z and r blocks, then the h block on its own), and X·W^T on W packed
once where the input is 32 wide or more; against onnxruntime over hidden sizes that leave a panel
narrower than 256 columns or a vector narrower than 16, every direction, with and without B; the
same bits on 1 and 2 threads; W or R fed at run time read on every call."""
from __future__ import annotations

import numpy as np
import pytest

import dnnx
from dnnx.threads import get_num_threads, set_num_threads
from ort_check import assert_matches_ort
from test_lstm_packed_cpu import MIN_PACKED_INPUT, PROJECTION, as_graph_input, needs_panels, panels_on
from test_packed_product_cpu import packed_on
from test_recurrent import recurrent_case


@pytest.fixture(autouse=True)
def restore_threads():
    before = get_num_threads()
    yield
    set_num_threads(before)


def algorithm(inp: int, width: int = 16, *, steps: bool = True, projection: bool = True) -> str:
    """The plan's algorithm name of a batch-1 GRU or RNN on this CPU (1 thread); `width` the
    projection's columns, num_dir * G * H (the tiles take 16 or more, Note [packed product])."""
    packed = projection and packed_on() and inp >= MIN_PACKED_INPUT and width >= 16
    return (PROJECTION if packed else "") + ("panels+gates" if steps and panels_on() else "gemm+gates")


def case(op, seq, inp, hidden, direction, **attrs):
    # The zoo's weight scale, ~1/sqrt(hidden): 0.5 standard normal saturates wide gates.
    return recurrent_case(op, seq, 1, inp, hidden, direction=direction, initial_h=True, seed=hidden,
                          scale=min(0.5, 1.0 / float(np.sqrt(hidden))), **attrs)


CELLS = [("GRU", {"linear_before_reset": 1}), ("GRU", {}), ("RNN", {}),
         ("RNN", {"activations": ["Relu", "Sigmoid"]})]


# hidden 128: GRU 384 columns (a full panel and 128; z and r alone: 256, one full panel); 96:
# 288; 100: a last vector of 4 lanes; 5 and 13: one panel of a partial vector.
@pytest.mark.parametrize("cell", CELLS, ids=lambda c: c[0] + "".join(f"-{k}" for k in c[1]))
@pytest.mark.parametrize("hidden", [5, 13, 96, 100, 128])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_packed_matches_ort(cell, hidden, direction):
    op, attrs = cell
    if direction != "bidirectional" and "activations" in attrs:  # one direction's activation
        attrs = {"activations": attrs["activations"][:1]}
    set_num_threads(1)
    model, feeds = case(op, 9, 40, hidden, direction, **attrs)
    width = (2 if direction == "bidirectional" else 1) * (3 if op == "GRU" else 1) * hidden
    assert dnnx.load(model).plan()[0]["algorithm"] == algorithm(40, width)
    assert_matches_ort(model, feeds)


@pytest.mark.parametrize("linear_before_reset", [0, 1])
def test_packed_gru_without_bias_matches_ort(linear_before_reset):
    model, feeds = recurrent_case("GRU", 6, 1, 40, 16, direction="bidirectional", bias=False,
                                  linear_before_reset=linear_before_reset, scale=0.25)
    assert_matches_ort(model, feeds)


@pytest.mark.parametrize("linear_before_reset", [0, 1])
def test_same_bits_on_one_and_two_threads(linear_before_reset):
    """The directions run on two threads, the packed projection splits across the pool."""
    model, feeds = case("GRU", 50, 320, 128, "bidirectional", linear_before_reset=linear_before_reset)
    results = []
    for threads in (1, 2):
        set_num_threads(threads)
        m = dnnx.load(model)
        assert m.plan()[0]["algorithm"].startswith(algorithm(320))
        results.append(m.run_dict(feeds))
    for name in results[0]:
        np.testing.assert_array_equal(results[1][name], results[0][name])
    assert_matches_ort(model, feeds)


@needs_panels
@pytest.mark.parametrize("name, steps, projection", [("R", False, True), ("W", True, False)])
def test_weights_fed_at_run_time_are_not_packed(name, steps, projection):
    """A weight that is a graph input may change between calls: it is read on every call."""
    set_num_threads(1)
    model, feeds = case("GRU", 5, 40, 16, "bidirectional", linear_before_reset=1)
    model, value = as_graph_input(model, name)
    m = dnnx.load(model)
    assert m.plan()[0]["algorithm"] == algorithm(40, steps=steps, projection=projection)
    for scale in (1.0, -0.5):
        feeds2 = dict(feeds, **{name: (value * scale).astype(np.float32)})
        np.testing.assert_allclose(m.run_dict(feeds2)["Y"], assert_matches_ort(model, feeds2)["Y"], rtol=1e-5,
                                   atol=1e-6)


def test_batch_two_keeps_the_dot_products():
    set_num_threads(1)
    model, feeds = recurrent_case("GRU", 5, 2, 40, 16, scale=0.25)
    assert "panels" not in dnnx.load(model).plan()[0]["algorithm"]
    assert_matches_ort(model, feeds)
