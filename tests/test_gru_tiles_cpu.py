"""The CPU GRU's and RNN's steps on TapGemms at a batch of 4 rows or more (engine/backends/cpu/rnn/
recurrent_cpu.cc, Note [recurrent step tiles]): R's blocks transposed and packed per call into
tile-width panels (GRU under linear_before_reset: one set over [3H, H]; without: z and r, then
the h block by r ⊙ h_prev). Against onnxruntime over hidden sizes that leave a partial 8-wide
vector or a partial panel, every direction and cell, with sequence lengths (zero included) and a
batch that leaves a short register panel; the same bits on 1 and 2 threads; and the bounds that
keep the dot products (fewer than 4 rows or steps, R^T over 256 KB)."""
from __future__ import annotations

import numpy as np
import pytest

import dnnx
from dnnx.threads import get_num_threads, set_num_threads
from ort_check import assert_matches_ort
from test_lstm_packed_cpu import as_graph_input
from test_recurrent import recurrent_case


@pytest.fixture(autouse=True)
def restore_threads():
    before = get_num_threads()
    yield
    set_num_threads(before)


CELLS = [("GRU", {"linear_before_reset": 1}), ("GRU", {}), ("RNN", {}),
         ("RNN", {"activations": ["Relu", "Sigmoid"]})]


def case(op, seq, batch, hidden, direction, lens=None, **attrs):
    if direction != "bidirectional" and "activations" in attrs:  # one direction's activation
        attrs = {**attrs, "activations": attrs["activations"][:1]}
    return recurrent_case(op, seq, batch, 12, hidden, direction=direction, lens=lens, initial_h=True, seed=hidden,
                          scale=min(0.5, 1.0 / float(np.sqrt(hidden))), **attrs)


def steps_of(model) -> str:
    return dnnx.load(model).plan()[0]["algorithm"]


# hidden 5 and 13: one partial vector; 100: a partial last vector; batch 7: a short row panel.
@pytest.mark.parametrize("cell", CELLS, ids=lambda c: c[0] + "".join(f"-{k}" for k in c[1]))
@pytest.mark.parametrize("hidden", [5, 13, 100])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_tiled_steps_match_ort(cell, hidden, direction):
    op, attrs = cell
    set_num_threads(1)
    model, feeds = case(op, 6, 7, hidden, direction, **attrs)
    assert "tap+gates" in steps_of(model)
    assert_matches_ort(model, feeds)


@pytest.mark.parametrize("cell", CELLS[:3], ids=lambda c: c[0] + "".join(f"-{k}" for k in c[1]))
def test_sequence_lengths_with_an_empty_one(cell):
    op, attrs = cell
    model, feeds = case(op, 8, 5, 16, "bidirectional", lens=[8, 3, 0, 8, 5], **attrs)
    assert "tap+gates" in steps_of(model)
    assert_matches_ort(model, feeds)


@pytest.mark.parametrize("cell", CELLS[:3], ids=lambda c: c[0] + "".join(f"-{k}" for k in c[1]))
def test_same_bits_on_one_and_two_threads(cell):
    op, attrs = cell
    model, feeds = case(op, 10, 9, 24, "bidirectional", lens=[10, 4, 10, 0, 7, 10, 1, 9, 10], **attrs)
    results = []
    for threads in (1, 2):
        set_num_threads(threads)
        m = dnnx.load(model)
        assert "tap+gates" in m.plan()[0]["algorithm"]
        results.append(m.run_dict(feeds))
    for name in results[0]:
        np.testing.assert_array_equal(results[0][name], results[1][name], err_msg=name)


@pytest.mark.parametrize("seq, batch, hidden", [(6, 3, 16), (3, 8, 16), (6, 8, 160)])
def test_outside_the_bounds_the_dot_products_stay(seq, batch, hidden):
    # 3 rows, 3 steps, or GRU's R^T over 2^16 weights (3 * 160 * 160): the dot products.
    set_num_threads(1)
    model, feeds = case("GRU", seq, batch, hidden, "forward")
    assert "gemm+gates" in steps_of(model)
    assert_matches_ort(model, feeds)


@pytest.mark.parametrize("linear_before_reset", [0, 1])
def test_r_fed_at_run_time_is_packed_on_every_call(linear_before_reset):
    # R as a graph input: each call transposes and packs the R it is given.
    set_num_threads(1)
    model, feeds = case("GRU", 6, 5, 16, "bidirectional", linear_before_reset=linear_before_reset)
    model, value = as_graph_input(model, "R")
    m = dnnx.load(model)
    assert "tap+gates" in m.plan()[0]["algorithm"]
    outputs = []
    for scale in (1.0, -0.5):
        feeds2 = dict(feeds, R=(value * scale).astype(np.float32))
        outputs.append(m.run_dict(feeds2)["Y"])
        np.testing.assert_allclose(outputs[-1], assert_matches_ort(model, feeds2)["Y"], rtol=1e-5, atol=1e-6)
    assert not np.allclose(outputs[0], outputs[1])
