"""The CPU LSTM's plan-time packing (engine/backends/cpu/rnn/lstm_cpu.cc): X·W^T on W packed once
(Note [lstm projection]) and, at batch 1, the steps on R^T packed in column panels (Note
[recurrent panels] in recurrent_panels_cpu.cc), against onnxruntime: hidden sizes that leave a
panel narrower than 256 columns or a vector narrower than 16, both directions, with and without
B; the same bits on 1 and 2 threads; W or R fed at run time read on every call; and fine-tuning,
whose tail must read the weights SGD changed, not a plan-time copy (Note [mutable constants])."""
from __future__ import annotations

import os

import numpy as np
import onnx
import pytest

import dnnx
from dnnx.threads import get_num_threads, set_num_threads
from ort_check import assert_matches_ort
from test_lstm import lstm_case
from test_packed_product_cpu import packed_on

PROJECTION = "packed x·W^T, "


def panels_on() -> bool:
    """Whether a batch-1 LSTM with a constant R plans its panels here (AVX-512, and the vector
    code not switched off by DNNX_RNN_PORTABLE)."""
    model, _ = lstm_case(3, 1, 4, 8)
    return "panels+gates" in dnnx.load(model).plan()[0]["algorithm"]


MIN_PACKED_INPUT = 32  # lstm_cpu.cc's kMinPackedInput: narrower inputs keep sgemm
MAX_TAP_WEIGHTS = 1 << 16  # lstm_cpu.cc's kMaxTapWeights: W^T [I, 4H] within it, a tap plan's blocks project


def lstm_algorithm(steps: str, input_size: int, projection: bool = True, hidden: int | None = None) -> str:
    """The plan's algorithm name of a plain LSTM node with constant weights on this CPU: the step
    products `steps` ("panels+gates" falls back to "dot+gates" without the panels), prefixed by
    the packed projection where the tiles run and the input is wide enough (`projection` False: W
    is not a constant), or else, for "tap+gates" (give `hidden`), by the blocks' own projection
    where W^T is small (Note [lstm step projection])."""
    if not panels_on():
        steps = steps.replace("panels+gates", "dot+gates")
    packed = projection and packed_on() and input_size >= MIN_PACKED_INPUT
    if steps.startswith("tap+gates") and not packed:
        assert hidden is not None, "tap+gates: give the hidden size"
        if input_size * 4 * hidden <= MAX_TAP_WEIGHTS:
            return "tap x·W^T, " + steps
    return (PROJECTION if packed else "") + steps


needs_panels = pytest.mark.skipif(not panels_on(), reason="no AVX-512 or DNNX_RNN_PORTABLE: no recurrent panels")


@pytest.fixture(autouse=True)
def restore_threads():
    before = get_num_threads()
    yield
    set_num_threads(before)


def as_graph_input(model, name):
    """The model with initializer `name` turned into a graph input; and its value."""
    graph = model.graph
    tensor = next(t for t in graph.initializer if t.name == name)
    value = onnx.numpy_helper.to_array(tensor).copy()
    graph.input.append(onnx.helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, list(tensor.dims)))
    graph.initializer.remove(tensor)
    return model, value


@needs_panels
def test_batch_one_plans_both_packings():
    set_num_threads(1)
    model, _ = lstm_case(10, 1, 40, 128, direction="bidirectional")
    assert dnnx.load(model).plan()[0]["algorithm"] == lstm_algorithm("panels+gates", 40)


# hidden 128: 512 columns, two full panels; 96: 384 (a panel of 128); 100: 400 (a last vector of
# 8 lanes); 200: 800 (3 panels and 32); 5 and 13: one panel of a partial vector.
@pytest.mark.parametrize("hidden", [5, 13, 96, 100, 128, 200])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_packed_lstm_matches_ort(hidden, direction):
    model, feeds = lstm_case(9, 1, 40, hidden, direction=direction, initial_h=True, initial_c=True, seed=hidden)
    # The zoo's weight scale (~1/sqrt(hidden)): 0.5 standard normal saturates wide gates.
    for t in model.graph.initializer:
        t.CopyFrom(onnx.numpy_helper.from_array(
            (onnx.numpy_helper.to_array(t) / np.sqrt(hidden)).astype(np.float32), t.name))
    assert_matches_ort(model, feeds)


def test_packed_lstm_without_bias_matches_ort():
    model, feeds = lstm_case(6, 1, 40, 16, direction="bidirectional", bias=False)
    assert_matches_ort(model, feeds)


def test_same_bits_on_one_and_two_threads():
    model, feeds = lstm_case(12, 1, 40, 48, direction="bidirectional", initial_h=True, seed=5)
    results = []
    for threads in (1, 2):
        set_num_threads(threads)
        results.append(dnnx.load(model).run_dict(feeds))
    for name in results[0]:
        np.testing.assert_array_equal(results[1][name], results[0][name])


@pytest.mark.parametrize("name, steps, projection", [("R", "dot+gates", True), ("W", "panels+gates", False)])
def test_weights_fed_at_run_time_are_not_packed(name, steps, projection):
    """A weight that is a graph input may change between calls: it is read on every call."""
    set_num_threads(1)
    model, feeds = lstm_case(5, 1, 40, 16, direction="bidirectional")
    model, value = as_graph_input(model, name)
    m = dnnx.load(model)
    assert m.plan()[0]["algorithm"] == lstm_algorithm(steps, 40, projection)
    for scale in (1.0, -0.5):
        feeds2 = dict(feeds, **{name: (value * scale).astype(np.float32)})
        np.testing.assert_allclose(m.run_dict(feeds2)["Y"], assert_matches_ort(model, feeds2)["Y"], rtol=1e-5,
                                   atol=1e-6)


@pytest.mark.parametrize("inp", [8, 28, 31])
def test_narrow_inputs_keep_sgemm(inp):
    """Note [lstm projection]: below 32 inputs sgemm measured faster than the packed tiles."""
    model, feeds = lstm_case(7, 3, inp, 16)
    assert not dnnx.load(model).plan()[0]["algorithm"].startswith(PROJECTION)
    assert_matches_ort(model, feeds)


def test_fine_tuning_reads_the_updated_weights():
    """Note [mutable constants]: the trainer's tail plans W, R and B as constants that SGD changes
    in place, so a batch-1 tail must not step on a plan-time copy. Each step's loss is the loss of
    the weights the previous step left, which the tuned model's own forward recomputes."""
    from dnnx.examples.lstm_classifier import FEATURES, STEPS, build_lstm_classifier

    rng = np.random.default_rng(0)
    x = rng.normal(0, 0.5, size=(STEPS, 1, FEATURES)).astype(np.float32)
    label = np.array([3])
    model = dnnx.load(build_lstm_classifier(seed=0))
    tuner = model.finetune(trainable="last:2", lr=0.5, momentum=0.0)
    tuner.step(x, label)
    probs = model.run(x)  # the tuned weights, through the inference engine (rebuilt with them)
    assert tuner.step(x, label) == pytest.approx(float(-np.log(probs[0, 3])), rel=1e-4)


@pytest.mark.skipif(os.environ.get("DNNX_RNN_PORTABLE") not in (None, "", "0"), reason="already the portable run")
def test_portable_switch_turns_the_panels_off():
    import subprocess
    import sys

    code = ("import dnnx, sys; sys.path.insert(0, 'tests'); from test_lstm import lstm_case; "
            "m, _ = lstm_case(3, 1, 4, 8); print(dnnx.load(m).plan()[0]['algorithm'])")
    env = dict(os.environ, DNNX_RNN_PORTABLE="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120,
                         cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert out.returncode == 0, out.stderr[-2000:]
    assert "panels" not in out.stdout


@pytest.mark.parametrize("hidden", [40, 16, 7])
def test_the_16_wide_cells_give_the_8_wide_cells_bits(hidden, tmp_path):
    """Note [lstm cell in avx512]: where AVX-512 runs the gate math goes 16 cells at a time, the
    8-wide code's operations lane for lane; DNNX_PROBE_CELL8=1 keeps the 8-wide cells (read once
    per process, so each form runs in a child). Hidden 40: two full vectors and a masked tail of 8;
    7: a tail alone. On a CPU without AVX-512 both children run the 8-wide cells."""
    import subprocess
    import sys

    model, feeds = lstm_case(6, 5, 12, hidden, direction="bidirectional")
    onnx.save(model, tmp_path / "lstm.onnx")
    np.savez(tmp_path / "feeds.npz", **feeds)
    code = ("import dnnx, numpy as np, sys; f = dict(np.load(sys.argv[1] + '/feeds.npz')); "
            "out = dnnx.load(sys.argv[1] + '/lstm.onnx').run_dict(f); "
            "np.savez(sys.argv[1] + '/' + sys.argv[2], **out)")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for label, cell8 in (("wide", None), ("narrow", "1")):
        env = {k: v for k, v in os.environ.items() if k != "DNNX_PROBE_CELL8"}
        if cell8:
            env["DNNX_PROBE_CELL8"] = cell8
        out = subprocess.run([sys.executable, "-c", code, str(tmp_path), label], env=env, capture_output=True,
                             text=True, timeout=120, cwd=root)
        assert out.returncode == 0, out.stderr[-2000:]
    wide, narrow = np.load(tmp_path / "wide.npz"), np.load(tmp_path / "narrow.npz")
    assert set(wide.files) == set(narrow.files) and wide.files
    for name in wide.files:
        np.testing.assert_array_equal(wide[name], narrow[name], err_msg=name)
