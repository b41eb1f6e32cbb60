"""Note [measured layout] (python/dnnx/_layout_choice.py): which channels-last plans are timed
against their ONNX-layout twin, the verdict from the two times, and the load option. The timing
itself runs on CUDA (tests/cuda/test_cuda_layout_choice.py); here fake engines stand in."""
import numpy as np
import pytest

import dnnx
from dnnx import _layout_choice, _pickle
from dnnx.examples import build


def row(name, op):
    return {"name": name, "op": op}


def test_only_the_transposes_the_pass_added_count_as_conversions():
    rows = [row("x/nhwc/transpose", "Transpose"), row("conv", "Conv+Relu@NHWC"), row("shuffle", "Transpose"),
            row("w/nhwc/c8/transpose_pad", "Transpose+Pad"), row("pool", "MaxPool@NHWC"), row("cat", "Concat")]
    assert _layout_choice.plan_counts(rows, {"conv", "shuffle", "pool", "cat"}) == (2, 2)


@pytest.mark.parametrize("conversions, layers, timed", [
    (1, 53, False),    # MobileNetV2: one conversion at the entry
    (8, 55, False),    # ResNet-50d: under a quarter per channels-last layer
    (122, 119, True),  # DenseNet-121
    (53, 56, True),    # ShuffleNetV2 (measured: channels-last wins there)
    (3, 4, False),     # too few to matter
    (5, 0, False),     # nothing runs channels-last
])
def test_which_plans_are_timed(conversions, layers, timed):
    assert _layout_choice.worth_timing(conversions, layers) is timed


def test_the_twin_must_win_by_more_than_the_margin():
    keep, note = _layout_choice.verdict(21.81, 19.02, 122, 119, "64x3x224x224")
    assert keep and note.startswith("layout: ONNX's (NCHW) kept, measured faster: 19.020 ms")
    assert "122 layout conversion(s) for 119 channels-last layer(s)" in note and "64x3x224x224" in note
    keep, note = _layout_choice.verdict(10.0, 10.0 * (1 - _layout_choice.MARGIN / 2), 10, 10, "1x3x8x8")
    assert not keep and note.startswith("layout: channels-last kept, measured:")


class FakeEngine:
    """What choose() asks of an engine: its shapes, plan rows and profiles (a fixed time a replay)."""

    def __init__(self, rows, ms, value_inputs=()):
        self.rows, self.ms, self._value_inputs, self.profiled = rows, ms, list(value_inputs), 0

    def value_inputs(self):
        return self._value_inputs

    def default_shapes(self):
        return [[2, 3, 8, 8]]

    def plan(self, shapes, inputs):
        assert shapes == [[2, 3, 8, 8]] and inputs is None
        return self.rows

    def profile(self, feeds, repeat):
        assert repeat == 1 and feeds[0].shape == (2, 3, 8, 8) and feeds[0].dtype == np.float32
        assert np.any(feeds[0] != 0)  # seeded data, never zeros
        self.profiled += 1
        return {"layers": [{"times_ms": [self.ms / 2]}, {"times_ms": [self.ms / 2]}]}


IR = {"inputs": [("x", ["N", 3, 8, 8], "float32")], "nodes": [("Conv", "conv", [], [], {}, ""),
                                                              ("Concat", "cat", [], [], {}, "")]}
CUT = [row("x/nhwc/transpose", "Transpose"), row("conv", "Conv@NHWC"), row("conv/nchw/transpose", "Transpose"),
       row("a/transpose", "Transpose"), row("b/transpose", "Transpose"), row("cat", "Concat")]


@pytest.mark.parametrize("nhwc_ms, nchw_ms, twin_kept", [(2.0, 1.0, True), (1.0, 2.0, False)])
def test_a_cut_plan_is_timed_against_its_twin(nhwc_ms, nchw_ms, twin_kept):
    engine, twin = FakeEngine(CUT, nhwc_ms), FakeEngine([], nchw_ms)
    built = []
    chosen, note = _layout_choice.choose(engine, IR, lambda: built.append(twin) or twin)
    assert built == [twin] and (chosen is twin) == twin_kept
    assert engine.profiled == twin.profiled == _layout_choice.FIRST_TURNS  # far apart: no more turns
    assert note.startswith("layout: ONNX's (NCHW) kept" if twin_kept else "layout: channels-last kept")


def test_a_near_tie_takes_more_turns():
    engine, twin = FakeEngine(CUT, 1.0), FakeEngine([], 0.97)
    chosen, _ = _layout_choice.choose(engine, IR, lambda: twin)
    assert chosen is twin and engine.profiled == _layout_choice.FIRST_TURNS + _layout_choice.CLOSE_TURNS


@pytest.mark.parametrize("rows, value_inputs", [([row("conv", "Conv@NHWC")], ()), (CUT, (0,))])
def test_no_twin_where_the_choice_is_not_open(rows, value_inputs):
    def refuse():
        raise AssertionError("no twin should be built")

    assert _layout_choice.choose(FakeEngine(rows, 1.0, value_inputs), IR, refuse) == (None, "")


@pytest.mark.parametrize("value", [True, False])
def test_measure_layout_is_a_load_option_that_pickles_and_is_inert_on_the_cpu(value):
    m = dnnx.load(build("lenet"), measure_layout=value)
    assert m._load_options["measure_layout"] is value and _pickle.state(m)["options"]["measure_layout"] is value
    assert "layout_choice" not in m.load_profile() and m.passes["channels_last"]
    assert not [note for note in m.plan().notes if note.startswith("layout:")]
