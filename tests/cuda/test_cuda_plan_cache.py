"""The persistent plan cache (docs/architecture.md, "The plan cache"): exhaustive choices written to a JSON file
that a second process re-uses without timing anything, keyed so that a new batch size is a new
key, and re-validated on read (a stale entry is dropped with a PlanCacheWarning)."""
import json
import subprocess
import sys

import numpy as np
import pytest

import dnnx
from cuda_check import check_cuda
from dnnx.examples import build
from ort_check import rand

# LeNet's convolutions as layers of their own: their cache entries are the ones counted here
# (test_cuda_conv_pool.py covers the conv+pool entries), beside fc1's GEMM (test_cuda_gemm_search.py).
# fc2 (10 columns) is narrow: its Gemm runs the dense rows kernel, timed against nothing (Note
# [narrow Gemms] in gemm_cuda.cc).
SEARCHES = 3  # timed searches, and cache entries, of one LeNet plan: two convs, one GEMM
UNFUSED = {"fuse_conv_pool": False}

# One process: load LeNet (unfused) with an exhaustive search and this cache; print its stats and conv rows.
PROCESS = """
import json, sys
import dnnx
from dnnx.examples import build
m = dnnx.load(build("lenet"), device="cuda", algo_search="exhaustive", batch_size=int(sys.argv[2]),
              plan_cache=sys.argv[1], passes={"fuse_conv_pool": False})
rows = [[r["name"], r["algorithm"], r["math"], r["workspace"], r["time_ms"]] for r in m.plan()
        if r["op"].startswith("Conv")]
print(json.dumps({"stats": m.planner_stats(), "rows": rows}))
"""


def in_new_process(cache, batch):
    done = subprocess.run([sys.executable, "-c", PROCESS, str(cache), str(batch)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def entries(cache):
    doc = json.loads(cache.read_text())
    assert doc["format"] == "dnnx plan cache 1"
    return doc["entries"]


def test_a_second_process_times_nothing_and_a_new_batch_size_is_a_new_key(tmp_path):
    cache = tmp_path / "sub" / "plan-cache.json"  # the folder is made on the first write
    first = in_new_process(cache, 64)
    assert first["stats"]["timing_runs"] == SEARCHES, first
    assert first["stats"]["cache_misses"] == SEARCHES and first["stats"]["cache_writes"] == SEARCHES
    assert first["stats"]["plan_cache"] == str(cache)
    keys = [key for key in entries(cache) if not key.startswith("gemm | ")]
    assert len(keys) == 2 and len(entries(cache)) == SEARCHES
    for key in keys:
        assert "conv fwd" in key and "sm_" in key and "cuDNN" in key and "64x" in key and "math FMA" in key, key
        assert "workspace limit 4294967296" in key and "deterministic 0" in key, key  # fp32: 4 GiB (Note [auto search])

    second = in_new_process(cache, 64)
    assert second["stats"]["timing_runs"] == 0, second
    assert second["stats"]["cache_hits"] == SEARCHES and second["stats"]["cache_stale"] == 0
    for before, after in zip(first["rows"], second["rows"]):
        assert after[1] == before[1] + " (plan cache)", (before, after)
        assert after[2:] == before[2:]  # math, workspace and the measured time come back

    third = in_new_process(cache, 32)
    assert third["stats"]["timing_runs"] == SEARCHES and third["stats"]["cache_hits"] == 0, third
    assert len(entries(cache)) == 2 * SEARCHES


def test_stale_entries_are_dropped_with_a_warning_and_searched_again(tmp_path):
    cache = tmp_path / "plan-cache.json"
    in_new_process(cache, 16)
    doc = json.loads(cache.read_text())
    for entry in doc["entries"].values():
        entry["workspace"] += 4096  # cuDNN will not report this workspace for the algorithm
    cache.write_text(json.dumps(doc))
    with pytest.warns(dnnx.PlanCacheWarning, match="stale plan-cache entry.*workspace"):
        gpu = dnnx.load(build("lenet"), device="cuda", algo_search="exhaustive", batch_size=16, plan_cache=cache,
                        passes=UNFUSED)
    stats = gpu.planner_stats()
    assert stats["cache_stale"] == SEARCHES and stats["timing_runs"] == SEARCHES and stats["cache_hits"] == 0, stats
    fresh = entries(cache)
    assert set(fresh) == set(doc["entries"]) and all(fresh[k] != e for k, e in doc["entries"].items())
    x = rand(16, 1, 28, 28)
    np.testing.assert_allclose(gpu.run(x), dnnx.load(build("lenet")).run(x), rtol=1e-4, atol=1e-6)


def test_an_unreadable_cache_file_is_a_warning_and_is_rewritten(tmp_path):
    cache = tmp_path / "plan-cache.json"
    cache.write_text("{ not json")
    with pytest.warns(dnnx.PlanCacheWarning, match="ignored"):
        gpu = dnnx.load(build("lenet"), device="cuda", algo_search="exhaustive", batch_size=8, plan_cache=cache,
                        passes=UNFUSED)
    assert gpu.planner_stats()["timing_runs"] == SEARCHES
    assert len(entries(cache)) == SEARCHES


def test_heuristic_plans_and_a_disabled_cache_write_nothing(tmp_path):
    cache = tmp_path / "plan-cache.json"
    heuristic = dnnx.load(build("lenet"), device="cuda", plan_cache=cache,
                        passes=UNFUSED)
    stats = heuristic.planner_stats()
    assert stats["timing_runs"] == 0 and stats["cache_hits"] == 0 and stats["cache_misses"] == 0
    off = dnnx.load(build("lenet"), device="cuda", algo_search="exhaustive", plan_cache=False, passes=UNFUSED)
    stats = off.planner_stats()
    assert stats["plan_cache"] is None and stats["timing_runs"] == 2 and stats["cache_writes"] == 0
    assert not cache.exists()


def test_the_default_file_follows_xdg_cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    gpu = dnnx.load(build("lenet"), device="cuda", algo_search="exhaustive", batch_size=4)
    want = tmp_path / "dnnx" / "plan-cache.json"
    assert gpu.planner_stats()["plan_cache"] == str(want)
    assert len(entries(want)) == 4  # the two convolutions, and the two conv+pool choices (fuse_conv_pool)
    again = dnnx.load(build("lenet"), device="cuda", algo_search="exhaustive", batch_size=4)
    assert again.planner_stats()["timing_runs"] == 0
    check_cuda(build("lenet"), {"x": rand(4, 1, 28, 28)}, algo_search="exhaustive")
