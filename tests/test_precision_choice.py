"""Note [measured precision] (python/dnnx/_precision_choice.py) without a GPU: the segment rule on
profile rows as Engine.profile gives them, the profile rows' value names and half flags, and the
engine's keep_fp32 option (options["precision_kept"]) on the CPU, where it must change nothing.
The GPU side (LeNet kept fp32, ResNet-50 kept half, plan() reasons) is
tests/cuda/test_cuda_precision_choice.py."""
import numpy as np
import pytest

import dnnx
from dnnx._native import core
from dnnx._precision_choice import segment_choice, zero_inputs
from dnnx.examples import build


def row(name, inputs, outputs, ms, half=True, op="Conv"):
    return {"name": name, "op": op, "inputs": inputs, "outputs": outputs, "half": half, "times_ms": [ms, ms * 1.1, ms]}


def lenet_like(half_ms, fp32_ms):
    """x -> Cast -> conv -> pool -> gemm -> Cast -> y, half; the fp32 twin has conv, pool, gemm."""
    half = [row("x/fp16/cast", ["x"], ["x/fp16"], 0.004, op="Cast"),
            row("conv", ["x/fp16", "w/fp16"], ["c"], half_ms[0]),
            row("pool", ["c"], ["p"], half_ms[1], op="MaxPool"),
            row("gemm", ["p", "g/fp16"], ["y/fp16"], half_ms[2], op="Gemm"),
            row("y/cast", ["y/fp16"], ["y"], 0.003, op="Cast")]
    fp32 = [row("conv", ["x", "w"], ["c"], fp32_ms[0], half=False),
            row("pool", ["c"], ["p"], fp32_ms[1], half=False, op="MaxPool"),
            row("gemm", ["p", "g"], ["y"], fp32_ms[2], half=False, op="Gemm")]
    return half, fp32


def test_a_segment_faster_in_fp32_keeps_fp32_counting_its_conversions():
    # half layers alone: 0.020 ms against fp32's 0.024; with the two Casts the half side costs 0.027
    half, fp32 = lenet_like([0.010, 0.004, 0.006], [0.012, 0.004, 0.008])
    kept = segment_choice(half, fp32, "fp16", [[1, 1, 28, 28]])
    assert set(kept) == {"conv", "pool", "gemm"}
    reason = kept["conv"]
    assert "measured faster in fp32 at input shape 1x1x28x28" in reason
    assert "3 layer(s) took 24.0 µs in fp32 against 27.0 µs in fp16 with 2 conversion(s)" in reason


def test_a_segment_faster_in_half_keeps_half():
    half, fp32 = lenet_like([0.010, 0.004, 0.006], [0.030, 0.004, 0.008])
    assert segment_choice(half, fp32, "bf16", [[8, 1, 28, 28]]) == {}


def test_segments_are_decided_one_by_one():
    """Two half segments split by an fp32 layer (no half kernel): the first is faster in fp32,
    the second in half; only the first keeps fp32."""
    half = [row("a/fp16/cast", ["a"], ["a/fp16"], 0.002, op="Cast"),
            row("small", ["a/fp16"], ["s"], 0.010),
            row("s/fp32/cast", ["s"], ["s/fp32"], 0.002, op="Cast"),
            row("cast", ["s/fp32"], ["i"], 0.001, half=False, op="Cast"),  # the model's own Cast: fp32
            row("i/fp16/cast", ["i"], ["i/fp16"], 0.002, op="Cast"),
            row("big", ["i/fp16", "w/fp16"], ["b/fp16"], 0.100),
            row("b/cast", ["b/fp16"], ["b"], 0.002, op="Cast")]
    fp32 = [row("small", ["a"], ["s"], 0.008, half=False), row("cast", ["s"], ["i"], 0.001, half=False),
            row("big", ["i", "w"], ["b"], 0.300, half=False)]
    kept = segment_choice(half, fp32, "fp16", [[4, 16]])
    assert list(kept) == ["small"]
    assert "1 layer(s) took 8.0 µs in fp32 against 14.0 µs in fp16 with 2 conversion(s)" in kept["small"]


def test_a_narrow_half_win_keeps_half_and_segments_without_nodes_are_ignored():
    half, fp32 = lenet_like([0.010, 0.004, 0.006], [0.010, 0.004, 0.014])  # 27 µs against 28
    assert segment_choice(half, fp32, "fp16", [[1, 1, 28, 28]]) == {}
    only_casts = [row("x/fp16/cast", ["x"], ["x/fp16"], 0.004, op="Cast")]
    assert segment_choice(only_casts, [], "fp16", [[1]]) == {}


def test_profile_rows_carry_values_and_half_flags():
    m = dnnx.load(build("lenet"))
    layers = m._engine.profile(zero_inputs(m._ir, m._engine.default_shapes()), 2)["layers"]
    first = layers[0]
    assert first["name"] == "conv1" and first["inputs"][0] == "x" and first["outputs"] and first["half"] is False
    assert all(len(r["times_ms"]) == 2 for r in layers)
    assert zero_inputs(m._ir, [[3, 1, 28, 28]])[0].shape == (3, 1, 28, 28)


def test_keep_fp32_option_changes_nothing_on_the_cpu():
    """The engine reads options["precision_kept"] only under half storage: a CPU engine given one
    plans and computes exactly as without it."""
    m = dnnx.load(build("lenet"))
    kind, options = m._backend
    kept = core.Engine(m._ir, kind, dict(options, precision_kept={"conv1": "why"}), passes=m.passes)
    x = np.random.default_rng(0).standard_normal((2, 1, 28, 28)).astype(np.float32)
    np.testing.assert_array_equal(kept.run([x], "numpy")[0], m.run(x))
    assert [r["math"] for r in kept.plan(None, None)] == [r["math"] for r in m.plan()]


def test_measure_precision_is_a_load_option_that_pickles():
    m = dnnx.load(build("lenet"), measure_precision=False)
    assert m._load_options["measure_precision"] is False
    from dnnx import _pickle
    assert _pickle.state(m)["options"]["measure_precision"] is False


@pytest.mark.parametrize("value", [True, False])
def test_measure_precision_on_the_cpu_is_accepted_and_inert(value):
    m = dnnx.load(build("lenet"), measure_precision=value)
    assert "precision_choice" not in m.load_profile()


def chain(half_ms, fp32_ms, cast_ms=0.004):
    """x -> Cast -> a -> b -> c -> Cast -> y in half (a ConvNeXt-like block chain), the fp32 twin's
    a, b, c; every value 1000 elements (the Casts' 4 µs each: 4e-6 ms per element)."""
    names = ["a", "b", "c"]
    values = ["x/fp16", "v1", "v2", "y/fp16"]
    half = [row("x/fp16/cast", ["x"], ["x/fp16"], cast_ms, op="Cast")]
    half += [row(n, [values[i]], [values[i + 1]], half_ms[i]) for i, n in enumerate(names)]
    half.append(row("y/cast", ["y/fp16"], ["y"], cast_ms, op="Cast"))
    fp32 = [row(n, ["x" if i == 0 else values[i]], ["y" if i == 2 else values[i + 1]], fp32_ms[i], half=False)
            for i, n in enumerate(names)]
    sizes = {v: 1000 for v in ["x", "y"] + values}
    return half, fp32, sizes


def test_the_cut_keeps_fp32_only_where_a_layer_pays_for_its_conversions():
    # b: 100 µs in half, 20 in fp32; its two new conversions are estimated at 4 µs each
    half, fp32, sizes = chain([0.010, 0.100, 0.010], [0.030, 0.020, 0.030])
    kept = segment_choice(half, fp32, "fp16", [[1, 8]], sizes)
    assert list(kept) == ["b"], kept
    assert "its segment of 1 layer(s) took 20.0 µs in fp32 against 100.0 µs in fp16 with 0 conversion(s)" in kept["b"]
    assert "2 conversion(s) at the edges estimated at 8.0 µs (Note [precision cut])" in kept["b"]
    # without sizes the segment stays whole: half 128 µs against fp32 80: all of it keeps fp32
    whole = segment_choice(half, fp32, "fp16", [[1, 8]])
    assert set(whole) == {"a", "b", "c"}
    assert "3 layer(s) took 80.0 µs in fp32 against 128.0 µs in fp16 with 2 conversion(s)" in whole["a"]


def test_the_cut_keeps_half_where_the_new_conversions_cost_more():
    # b saves 6 µs in fp32, but its edges would cost 2 x 4 µs
    half, fp32, sizes = chain([0.010, 0.026, 0.010], [0.030, 0.020, 0.030])
    assert segment_choice(half, fp32, "fp16", [[1, 8]], sizes) == {}


def test_the_cut_drops_the_entry_conversion_with_its_layer():
    # a is cheaper in fp32 and sits next to the entry Cast: keeping a in fp32 saves the Cast too
    half, fp32, sizes = chain([0.012, 0.010, 0.010], [0.010, 0.030, 0.030])
    kept = segment_choice(half, fp32, "fp16", [[1, 8]], sizes)
    assert list(kept) == ["a"], kept
    assert "1 layer(s) took 10.0 µs in fp32 against 16.0 µs in fp16 with 1 conversion(s)" in kept["a"]


def test_min_cut_solver_on_a_diamond():
    from dnnx._precision_cut import cut_segment

    # a feeds b and c, both feed d; c is slow in half; links cost 1 each
    layers = {"a": (1, 5), "b": (1, 5), "c": (20, 2), "d": (1, 5)}
    links = [("a", "b", 1), ("a", "c", 1), ("b", "d", 1), ("c", "d", 1)]
    assert cut_segment(layers, [], links) == {"c"}
    assert cut_segment(layers, [(30, ["a"])], links) == {"a", "c"}  # a's conversion (30) goes with it
    assert cut_segment({"a": (3, 3)}, [], []) == set()  # a tie keeps half
