"""The CPU LSTM's batch blocks and dot products (engine/backends/cpu/rnn/lstm_cpu.cc, Note [lstm batch blocks]) and its
AVX2 cell (lstm_cell_avx2_cpu.cc) against onnxruntime: batches of several 16-row blocks with a
short last one, hidden sizes off the 8-wide vectors, sequence_lens and directions across blocks,
the same bits for every thread count, and a large batch of an LSTM too large for the dot
products (sgemm)."""
import numpy as np
import pytest

import dnnx
from dnnx.threads import get_num_threads, set_num_threads
from ort_check import assert_matches_ort
from test_lstm import lstm_case
from test_lstm_packed_cpu import lstm_algorithm


@pytest.fixture(autouse=True)
def restore_threads():
    before = get_num_threads()
    yield
    set_num_threads(before)


@pytest.mark.parametrize("batch", [15, 16, 17, 40, 64])
@pytest.mark.parametrize("hidden", [3, 8, 13, 32])
def test_blocks_and_plain_cell_match_ort(batch, hidden):
    # The plain cell (no peepholes, clip or coupled gates) takes the AVX2 path, 13 and 3 its tail.
    model, feeds = lstm_case(5, batch, 6, hidden, initial_h=True, initial_c=True, seed=batch + hidden)
    assert_matches_ort(model, feeds)


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("peepholes", [False, True])
def test_sequence_lens_across_blocks(direction, peepholes):
    rng = np.random.default_rng(3)
    lens = [int(v) for v in rng.integers(0, 8, size=37)]
    lens[0], lens[20] = 7, 1
    model, feeds = lstm_case(7, 37, 4, 9, direction=direction, lens=lens, peepholes=peepholes, initial_h=True)
    got = assert_matches_ort(model, feeds)
    for b, n in enumerate(lens):
        assert np.all(got["Y"][n:, :, b] == 0.0)


def test_batch_major_layout_across_blocks():
    model, feeds = lstm_case(4, 33, 5, 16, direction="bidirectional", layout=1)
    got = dnnx.load(model).run_dict(feeds)
    # Against the same LSTM in layout 0 (onnxruntime has no layout 1).
    model0, feeds0 = lstm_case(4, 33, 5, 16, direction="bidirectional")
    feeds0["X"] = np.ascontiguousarray(feeds["X"].transpose(1, 0, 2))
    want = assert_matches_ort(model0, feeds0)
    np.testing.assert_allclose(got["Y"], want["Y"].transpose(2, 0, 1, 3), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("clip, input_forget", [(None, 0), (0.7, 0), (None, 1)])
def test_same_bits_for_every_thread_count(clip, input_forget):
    attrs = {"input_forget": input_forget}
    if clip is not None:
        attrs["clip"] = clip
    model, feeds = lstm_case(9, 50, 8, 32, **attrs)
    results = []
    for threads in (1, 2, 3):
        set_num_threads(threads)
        m = dnnx.load(model)
        if threads == 2:
            assert m.plan()[0]["algorithm"] == lstm_algorithm("tap+gates x2 threads", 8, hidden=32)
        results.append(m.run_dict(feeds))
    for other in results[1:]:
        for name in other:
            np.testing.assert_array_equal(other[name], results[0][name])
    assert_matches_ort(model, feeds)


def test_an_lstm_too_large_for_blocks_keeps_sgemm():
    # R [1200, 300] is over the dot products' 256K floats and the batch over one block: one
    # block, OpenBLAS's sgemm.
    set_num_threads(2)
    model, feeds = lstm_case(3, 20, 7, 300, initial_c=True)
    assert dnnx.load(model).plan()[0]["algorithm"] == lstm_algorithm("gemm+gates", 7)
    assert_matches_ort(model, feeds)


@pytest.mark.parametrize("batch, inp, lens", [
    (16, 40, None),                  # two blocks of 8 (a packed W where the tiles run)
    (5, 8, [5, 0, 3, 5, 1]),         # a block of 4 and one of 1, the blocks' own X·W^T, ended rows
])
def test_one_direction_splits_its_rows_so_no_thread_idles(batch, inp, lens):
    # One direction of one block would leave the second thread idle: on 2 threads the blocks are
    # smaller (Note [lstm batch blocks]), with the 1-thread plan's bits.
    model, feeds = lstm_case(6, batch, inp, 24, lens=lens, initial_h=True, seed=batch)
    results = []
    for threads in (1, 2):
        set_num_threads(threads)
        m = dnnx.load(model)
        assert m.plan()[0]["algorithm"].endswith(" x2 threads") == (threads == 2)
        results.append(m.run_dict(feeds))
    for name in results[0]:
        np.testing.assert_array_equal(results[1][name], results[0][name])
    assert_matches_ort(model, feeds)
