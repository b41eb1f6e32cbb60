"""A cold load's search, taken apart: where its time went (Note [search parts] in
engine/backends/cuda/search/conv_candidates.cc), the process's memo of cuDNN's answers (Note
[conv query memo], conv_direction.cc) and the scratch the timed searches keep between layers and
let go once the layers are planned (Note [search scratch], search_scratch.h)."""
import numpy as np

import dnnx
from dnnx.examples import build
from cuda_check import check_cuda
from ort_check import rand
from test_cuda_auto_search import BIG, conv_model

PARTS = ("heuristics", "workspace sizes", "find", "retime", "scratch", "own kernels", "cublaslt")


def search_parts(model) -> dict:
    stats = model.planner_stats()
    return {part: stats.get("search_seconds: " + part, 0.0) for part in PARTS}


def test_an_exhaustive_search_says_where_its_time_went():
    # batch 256: conv2 is cuDNN's (over the direct conv+pool kernel's bound) and fc1 cuBLASLt's
    # (over the dense rows kernel's); at batch 64 fc1 took no timed cuBLASLt search
    m = dnnx.load(build("lenet"), device="cuda", algo_search="exhaustive", plan_cache=False, batch_size=256)
    parts = search_parts(m)
    total = m.planner_stats()["search_seconds"]
    assert parts["find"] > 0, parts           # conv2 ran cudnnFind
    assert parts["retime"] > 0, parts         # LeNet's layers are small: their candidates are re-timed warm
    assert parts["cublaslt"] > 0, parts       # fc1's candidates were timed
    # every part lies inside the total; they may nest (a cuDNN candidate's scratch inside an own
    # kernel's timing: the H100 run had the parts' sum 0.57 ms over a 446 ms total), so not their sum
    assert max(parts.values()) <= total + 1e-6, (parts, total)
    assert parts["find"] + parts["retime"] + parts["cublaslt"] <= total + 1e-6, (parts, total)
    check_cuda(build("lenet"), {"x": rand(256, 1, 28, 28)}, algo_search="exhaustive", plan_cache=False)


def test_a_shape_seen_before_asks_cudnn_nothing():
    first = dnnx.load(build("lenet"), device="cuda", algo_search="heuristic", plan_cache=False, batch_size=8)
    again = dnnx.load(build("lenet"), device="cuda", algo_search="heuristic", plan_cache=False, batch_size=8)
    parts = search_parts(again)
    assert parts["heuristics"] == 0 and parts["workspace sizes"] == 0, parts
    assert [r["algorithm"] for r in again.plan()] == [r["algorithm"] for r in first.plan()]
    x = rand(8, 1, 28, 28)
    assert (again.run(x) == first.run(x)).all()


def test_the_search_scratch_is_let_go_once_the_layers_are_planned():
    """The timed search of this conv holds the whole workspace limit (4 GiB, or an eighth of the
    device) while it plans; the model holds none of it afterwards."""
    timed = dnnx.load(conv_model(*BIG), device="cuda", algo_search="exhaustive", plan_cache=False)
    ranked = dnnx.load(conv_model(*BIG), device="cuda", algo_search="heuristic", plan_cache=False)
    assert timed.planner_stats()["timing_runs"] >= 1
    (row,) = [r for r in timed.plan() if r["op"].startswith("Conv")]
    held, plan_bytes = timed.planner_stats()["device_bytes"], ranked.planner_stats()["device_bytes"]
    # the same constants and arena; only the chosen workspaces differ
    assert held <= plan_bytes + row["workspace"] + (64 << 20), (held, plan_bytes, row)


def test_the_find_prewarm_runs_beside_find_and_keeps_the_layers_result(monkeypatch):
    # Note [find prewarm] (search/find_prewarm.h): off by default; DNNX_PROBE_FIND_PREWARM=N spreads each
    # layer's workspace queries over N threads with handles of their own before its Find
    monkeypatch.setenv("DNNX_PROBE_FIND_PREWARM", "4")
    model = conv_model(*BIG)
    x = rand(*BIG[:2], BIG[2], BIG[2], seed=5)
    m = dnnx.load(model, device="cuda", algo_search="exhaustive", plan_cache=False)
    stats = m.planner_stats()
    assert stats.get("search_seconds: prewarm", 0.0) > 0, stats
    assert stats.get("search_seconds: find", 0.0) > 0, stats
    np.testing.assert_allclose(m.run(x), dnnx.load(model).run(x), rtol=1e-4, atol=1e-4)
    monkeypatch.delenv("DNNX_PROBE_FIND_PREWARM")
    off = dnnx.load(model, device="cuda", algo_search="exhaustive", plan_cache=False).planner_stats()
    assert "search_seconds: prewarm" not in off, off
