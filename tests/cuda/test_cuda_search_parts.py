"""A cold load's search, taken apart: where its time went (Note [search parts] in
engine/backends/cuda/search/conv_candidates.cc), the process's memo of cuDNN's answers (Note
[conv query memo], conv_direction.cc) and the scratch the timed searches keep between layers and
let go once the layers are planned (Note [search scratch], search_scratch.h)."""
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
