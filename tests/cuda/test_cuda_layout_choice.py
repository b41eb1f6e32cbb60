"""Note [measured layout] (python/dnnx/_layout_choice.py): a channels-last plan cut by many layout
conversions is timed at load against its ONNX-layout twin, and the faster is kept. The verdict is
forced here (MARGIN) where a test checks what each outcome leaves behind; the zoo's DenseNet, whose
concatenations cut its regions 122 times while they kept ONNX's layout, is timed for real."""
import re

import numpy as np
import pytest

import dnnx
from dnnx import _layout_choice
from ort_check import rand, run_ort
from residual_models import residual_block
from test_cuda_channels_last import assert_close
from zoo_check import zoo_model


@pytest.fixture
def every_plan_timed(monkeypatch):
    """Any channels-last plan with a conversion is timed (a residual block has two: in and out)."""
    monkeypatch.setattr(_layout_choice, "MIN_CONVERSIONS", 1)
    monkeypatch.setattr(_layout_choice, "MIN_SHARE", 0)


def layout_notes(m):
    return [n for n in m.plan().notes if n.startswith("layout:")]


def block():
    return residual_block(bias=True, downsample=True, stride=2, channels=32, size=10, down_bias=True), \
        {"x": rand(4, 32, 10, 10)}


@pytest.mark.parametrize("precision", ["tf32", "fp16"])
def test_a_twin_measured_faster_runs_in_onnx_layout_from_then_on(every_plan_timed, monkeypatch, precision):
    monkeypatch.setattr(_layout_choice, "MARGIN", -100.0)  # the twin wins whatever the times
    model, feeds = block()
    m = dnnx.load(model, device="cuda", precision=precision, batch_size=4, plan_cache=False)
    assert m.passes["channels_last"] is False and "layout_choice" in m.load_profile()
    assert not [r["op"] for r in m.plan() if r["op"].endswith("@NHWC")], m.plan()
    notes = layout_notes(m)
    assert len(notes) == 1 and notes[0].startswith("layout: ONNX's (NCHW) kept, measured faster:"), notes
    assert "x".join(map(str, feeds["x"].shape)) in notes[0]
    for name, want in run_ort(model, feeds).items():
        assert_close(precision, m.run_dict(feeds)[name], want, f"{name}: the ONNX-layout twin vs onnxruntime")
    # the engines the model builds later (fine-tuning, the background search) build from m.passes
    twin = dnnx.load(model, device="cuda", precision=precision, batch_size=4, plan_cache=False, passes=m.passes)
    assert not [r["op"] for r in twin.plan() if r["op"].endswith("@NHWC")]


def test_a_channels_last_plan_measured_faster_is_kept(every_plan_timed, monkeypatch):
    monkeypatch.setattr(_layout_choice, "MARGIN", 0.999)  # the twin never wins
    model, feeds = block()
    m = dnnx.load(model, device="cuda", precision="tf32", batch_size=4, plan_cache=False)
    assert m.passes["channels_last"] is True and [r for r in m.plan() if r["op"].endswith("@NHWC")]
    notes = layout_notes(m)
    assert len(notes) == 1 and notes[0].startswith("layout: channels-last kept, measured:"), notes
    for name, want in run_ort(model, feeds).items():
        assert_close("tf32", m.run_dict(feeds)[name], want, f"{name}: channels-last vs onnxruntime")


def test_measure_layout_false_times_nothing(every_plan_timed):
    model, _ = block()
    m = dnnx.load(model, device="cuda", precision="tf32", plan_cache=False, measure_layout=False)
    assert m.passes["channels_last"] and not layout_notes(m) and "layout_choice" not in m.load_profile()


def test_few_conversions_are_not_timed():
    model, _ = block()  # two conversions for its three convs: under the default thresholds
    m = dnnx.load(model, device="cuda", precision="tf32", plan_cache=False)
    assert m.passes["channels_last"] and not layout_notes(m) and "layout_choice" not in m.load_profile()


def test_fp32_has_no_channels_last_plan_to_time(every_plan_timed):
    model, _ = block()
    m = dnnx.load(model, device="cuda", precision="fp32", plan_cache=False)
    assert not layout_notes(m) and "layout_choice" not in m.load_profile()


@pytest.mark.parametrize("precision", ["tf32", "fp16"])
def test_densenet_keeps_the_layout_it_measured_faster(every_plan_timed, precision):
    # its concatenations run channels-last now (Note [channels-last forms] on CUDA), which leaves
    # two conversions (in, out): under the default thresholds, so every plan is timed here
    path = zoo_model("densenet121")  # skips where ../shared/external/zoo is not here
    m = dnnx.load(path, device="cuda", precision=precision, batch_size=16, plan_cache=False)
    notes = layout_notes(m)
    assert len(notes) == 1, m.plan().notes
    nchw_ms, nhwc_ms = (float(v) for v in re.findall(r"([0-9.]+) ms", notes[0])[:2])
    twin_won = nchw_ms < nhwc_ms * (1 - _layout_choice.MARGIN)
    assert (m.passes["channels_last"] is False) == twin_won, notes
    assert notes[0].startswith("layout: ONNX's (NCHW) kept" if twin_won else "layout: channels-last kept"), notes
    x = np.random.default_rng(0).standard_normal((16, 3, 224, 224)).astype(np.float32)
    ref = dnnx.load(path, device="cuda", precision=precision, batch_size=16, plan_cache=False, measure_layout=False)
    assert_close(precision, m.run(x), ref.run(x), "densenet121: the measured layout vs the channels-last plan")
