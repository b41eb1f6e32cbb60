"""algo_search="auto", the default (Note [auto search] in engine/backends/cuda/search/conv_algo.cc):
the fp32 convolutions of 4 GFLOP or more are timed as "exhaustive" times them (times in the
plan, the plan cache), the rest take cuDNN's ranking, and so does every conv at tf32, fp16 and
bf16; with no workspace_limit a model may take up to 4 GiB per layer at every precision (Note
[tensor-op workspace]). A fine-tuning step's backward convolutions are timed at every size in fp32.
Results against onnxruntime at the fp32 tolerances of cuda_check (tf32: test_cuda_precision's)."""
import json

import numpy as np
import pytest
from onnx import helper

import dnnx
from cuda_check import check_cuda
from ort_check import make_model, rand, run_ort
from test_cuda_precision import assert_tf32_close


def conv_model(batch, channels, size):
    """x [batch, C, size, size] -> Conv 3x3 (C filters, pads 1) + Relu: 2 * batch * C * C * 9 * size^2 flops"""
    w = (rand(channels, channels, 3, 3, seed=1) / np.sqrt(9 * channels)).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["y"], name="relu")]
    return make_model(nodes, [("x", [batch, channels, size, size])], [("y", None)], {"w": w, "b": rand(channels, seed=2)})


BIG = (32, 64, 56)    # 2 * 32 * 64 * 64 * 9 * 56^2 = 7.4 GFLOP: timed at fp32
SMALL = (2, 64, 56)   # 0.46 GFLOP: ranked


def conv_row(model):
    (row,) = [r for r in model.plan() if r["op"].startswith("Conv")]
    return row


def test_a_large_fp32_conv_is_timed_by_default(tmp_path):
    model = conv_model(*BIG)
    m = dnnx.load(model, device="cuda", plan_cache=tmp_path / "cache.json")
    row = conv_row(m)
    assert row["time_ms"] is not None and row["time_ms"] > 0, row
    assert any("slower than" in why or "within" in why for _, why in row["rejected"]), row
    assert m.planner_stats()["timing_runs"] >= 1 and m.planner_stats()["cache_writes"] >= 1
    # a second load reads the plan cache: the same algorithm, nothing timed
    again = dnnx.load(model, device="cuda", plan_cache=tmp_path / "cache.json")
    assert again.planner_stats()["timing_runs"] == 0 and again.planner_stats()["cache_hits"] >= 1
    assert conv_row(again)["algorithm"].split(" (")[0] == row["algorithm"].split(" (")[0]
    check_cuda(model, {"x": rand(BIG[0], BIG[1], BIG[2], BIG[2])}, plan_cache=False)


@pytest.mark.parametrize("shape, options", [(SMALL, {}), (BIG, {"algo_search": "heuristic"})])
def test_small_convs_and_heuristic_loads_time_nothing(shape, options):
    m = dnnx.load(conv_model(*shape), device="cuda", plan_cache=False, **options)
    assert conv_row(m)["time_ms"] is None and m.planner_stats()["timing_runs"] == 0


def test_a_large_tf32_conv_takes_the_ranking():
    model = conv_model(*BIG)
    m = dnnx.load(model, device="cuda", precision="tf32", plan_cache=False)
    assert conv_row(m)["time_ms"] is None and m.planner_stats()["timing_runs"] == 0
    x = rand(BIG[0], BIG[1], BIG[2], BIG[2])
    assert_tf32_close(m.run(x), run_ort(model, {"x": x})["y"], "tf32 conv vs onnxruntime")


def test_the_default_workspace_is_4_gib_at_every_precision():
    # a conv whose workspace-hungry algorithms (FFT) want more than 256 MiB: the default allows
    # them at fp32 and at tf32 alike (Note [tensor-op workspace]: R3D-18's 3-D convs at tf32
    # needed 392 MiB for IMPLICIT_PRECOMP_GEMM)
    model = conv_model(*BIG)
    for precision in ("fp32", "tf32"):
        row = conv_row(dnnx.load(model, device="cuda", precision=precision, algo_search="exhaustive", plan_cache=False))
        assert row["workspace"] <= 4 << 30, (precision, row)
        over = [why for _, why in row["rejected"] if "over the limit of" in why]
        for why in over:
            assert why.endswith("4096 MiB"), (precision, why)
    with pytest.raises(ValueError, match="algo_search"):
        dnnx.load(model, device="cuda", algo_search="sometimes")


def test_a_small_fp32_conv_times_its_backward_when_fine_tuned(tmp_path, monkeypatch):
    # The forward of SMALL is ranked (above); its dX and dW are timed under "auto" and cached as
    # the exhaustive search caches them. The direct dW kernel is off: cuDNN's candidates only.
    monkeypatch.setenv("DNNX_PROBE_DIRECT_CONV_GRAD", "0")
    cache = tmp_path / "cache.json"
    model = conv_model(*SMALL)
    m = dnnx.load(model, device="cuda", plan_cache=cache, optimize=False)
    tuner = m.finetune(trainable=["w", "b"], loss="mse", momentum=0.0)
    x = rand(SMALL[0], SMALL[1], SMALL[2], SMALL[2], seed=3)
    tuner.gradients(x, np.zeros((SMALL[0], SMALL[1], SMALL[2], SMALL[2]), np.float32))
    entries = json.loads(cache.read_text())["entries"]
    backward = {k: e for k, e in entries.items() if k.startswith("conv bwd filter |")}
    assert backward and all(e["time_ms"] > 0 for e in backward.values()), entries
    assert not any(k.startswith("conv fwd |") for k in entries), list(entries)
