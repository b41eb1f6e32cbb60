"""The exhaustive choice among cuBLASLt's candidates (Note [GEMM candidates] in
engine/backends/cuda/search/lt_search.h) and the warm re-timing of cuDNN's (Note [warm conv timing] in
conv_candidates.cc): the plan shows what was timed, the plan cache keeps the choice, results
match onnxruntime, and fine-tuning through the timed GEMMs follows the CPU and repeats its bits."""
import json

import numpy as np
import pytest

import dnnx
from cuda_check import check_cuda
from dnnx.examples import build
from dnnx.examples.lenet import build_lenet
from ort_check import rand
from test_cuda_dense_rows import gemm_model
from test_cuda_finetune import assert_weights_close, batches, digits, train  # noqa: F401 (fixture)

CANDIDATE = "cuBLASLt candidate "


def lt_rejections(row):
    return [(algo, why) for algo, why in row["rejected"] if CANDIDATE in algo]


@pytest.mark.parametrize("m, k, n, then", [(256, 500, 100, None), (256, 800, 500, "Relu"), (64, 64, 1000, None)])
def test_exhaustive_gemm_times_cublaslt_candidates(tmp_path, m, k, n, then):
    model, a_shape = gemm_model(m, k, n, (-1,), then=then, transB=1)
    cache = tmp_path / "plan-cache.json"
    (row,) = dnnx.load(model, device="cuda", algo_search="exhaustive", plan_cache=str(cache)).plan()
    assert row["algorithm"].startswith("cublasLtMatmul") and " [candidate " in row["algorithm"], row
    assert row["time_ms"] is not None and row["time_ms"] > 0, row
    slower = [float(why.split(" ms")[0]) for _, why in lt_rejections(row) if "slower than" in why]
    ties = [float(why.split(" ms")[0]) for _, why in lt_rejections(row) if "within 10% of" in why]
    assert all(t >= row["time_ms"] for t in slower) and all(row["time_ms"] <= t / 0.9 + 1e-9 for t in ties), row
    entries = json.loads(cache.read_text())["entries"]
    gemm_keys = [key for key in entries if key.startswith("gemm | ")]
    assert len(gemm_keys) == 1 and f"| {m}x{n}x{k} ta 0 tb 1 |" in gemm_keys[0], list(entries)
    rank = entries[gemm_keys[0]]["algo"]
    assert f" [candidate {rank + 1} of " in row["algorithm"], (rank, row)
    # A second load takes the cached rank without timing again.
    (again,) = dnnx.load(model, device="cuda", algo_search="exhaustive", plan_cache=str(cache)).plan()
    assert f" [candidate {rank + 1} of " in again["algorithm"] and ", plan cache, " in again["algorithm"], again
    check_cuda(model, {"a": rand(*a_shape, seed=1)}, algo_search="exhaustive", plan_cache=str(cache))


def test_heuristic_gemm_times_nothing(tmp_path):
    model, _ = gemm_model(256, 500, 100, (-1,), transB=1)
    cache = tmp_path / "plan-cache.json"
    (row,) = dnnx.load(model, device="cuda", plan_cache=str(cache)).plan()
    assert row["algorithm"] == "cublasLtMatmul (bias epilogue)" and row["time_ms"] is None, row
    assert not lt_rejections(row)
    assert not cache.exists() or not any(k.startswith("gemm") for k in json.loads(cache.read_text())["entries"])


def test_exhaustive_conv_times_are_warm_and_sorted():
    plan = dnnx.load(build("lenet"), device="cuda", algo_search="exhaustive", plan_cache=False,
                     passes={"fuse_conv_pool": False}).plan(batch_size=256)
    for row in (r for r in plan if r["op"] == "Conv" and "direct" not in r["algorithm"]):
        slower = [float(why.split(" ms")[0]) for _, why in row["rejected"] if "slower than" in why]
        # a near-tie goes to cuDNN's heuristic order: within 10% of the winner, never further
        ties = [float(why.split(" ms")[0]) for _, why in row["rejected"] if "within 10% of" in why]
        assert slower + ties and all(t >= row["time_ms"] for t in slower), row
        assert all(row["time_ms"] <= 1.1 * t + 1e-9 for t in ties), row


def test_exhaustive_finetune_follows_the_cpu_and_repeats_its_bits(digits, tmp_path):  # noqa: F811
    cache = str(tmp_path / "plan-cache.json")
    _, _, cpu_losses, cpu_w = train("cpu", digits)
    runs = []
    for _ in range(2):  # the second tuner reads the first's choices from the plan cache
        model = dnnx.load(build_lenet(seed=0), device="cuda", algo_search="exhaustive", plan_cache=cache)
        tuner = model.finetune(trainable="last:2", lr=0.05, momentum=0.9)
        backward = {r["name"]: r["algorithm"] for r in tuner.plan(batch_size=64) if r["stage"] == "backward"}
        assert backward["fc2"].startswith("dA cublasLtMatmul") and "dB cublasLtMatmul" in backward["fc2"], backward
        losses = [tuner.step(xb, yb) for xb, yb in batches(digits[0], digits[1], 8)]
        runs.append((np.array(losses), tuner.weights()))
    np.testing.assert_allclose(runs[0][0], cpu_losses, rtol=1e-4)
    assert_weights_close(runs[0][1], cpu_w)
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    for name, w in runs[0][1].items():
        np.testing.assert_array_equal(w, runs[1][1][name], err_msg=name)
