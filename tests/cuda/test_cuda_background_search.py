"""algo_search="background" on CUDA (Note [background search], python/dnnx/_background_search.py):
load returns with the heuristic plan, a thread times the shapes the model runs and writes the
plan cache, a faster plan is swapped in between runs, and a second load reads the timed choices
at once. Every output, before, during and after the swap, equals the CPU's at fp32 tolerances
(rtol 1e-4: cuDNN's algorithms sum in different orders)."""
import threading
import time

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import dnnx
from dnnx._native import core


def _conv_stack(channels=64, layers=4, seed=0):
    """A stack of 3x3 convs with Relu: enough algorithms for cuDNN's search to choose among."""
    rng = np.random.default_rng(seed)
    nodes, inits, x = [], [], "x"
    c_in = 3
    for i in range(layers):
        w = (rng.standard_normal((channels, c_in, 3, 3)) / np.sqrt(9 * c_in)).astype(np.float32)
        inits.append(numpy_helper.from_array(w, f"w{i}"))
        nodes.append(helper.make_node("Conv", [x, f"w{i}"], [f"c{i}"], pads=[1, 1, 1, 1], name=f"conv{i}"))
        nodes.append(helper.make_node("Relu", [f"c{i}"], [f"r{i}"], name=f"relu{i}"))
        x, c_in = f"r{i}", channels
    graph = helper.make_graph(nodes, "stack", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 56, 56])],
                              [helper.make_tensor_value_info(x, TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _x(n=8, seed=1):
    return np.random.default_rng(seed).standard_normal((n, 3, 56, 56)).astype(np.float32)


def test_background_search_times_swaps_and_caches(tmp_path):
    model, cache = _conv_stack(), tmp_path / "plans.json"
    x = _x()
    want = dnnx.load(model).run(x)
    m = dnnx.load(model, device="cuda", algo_search="background", plan_cache=cache)
    assert m.planner_stats()["timing_runs"] == 0  # load timed nothing
    assert m.search_status()["state"] == "waiting for a run"  # the batch is symbolic: no shape yet
    np.testing.assert_allclose(m.run(x), want, rtol=1e-4, atol=1e-4)  # the heuristic plan
    status = m.search_status()
    assert status["state"] in ("searching", "done"), status
    # requests from two threads while the search runs: every result right
    errors = []

    def serve():
        try:
            for _ in range(30):
                np.testing.assert_allclose(m.run(x), want, rtol=1e-4, atol=1e-4)
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=serve) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert m.wait_search(timeout=300), m.search_status()
    status = m.search_status()
    assert status["state"] == "done", status
    assert status["shapes_searched"] == 1 and status["shapes_pending"] == 0, status
    assert status["layers_searched"] >= 4, status  # the four convs at least
    assert status["speedup"] >= 1.0 and status["swaps"] in (0, 1), status
    assert core.foreground_runs() == 0
    np.testing.assert_allclose(m.run(x), want, rtol=1e-4, atol=1e-4)  # after any swap
    assert cache.exists() and cache.stat().st_size > 0
    # A second model (a new process reads the same file) takes the timed choices at load.
    again = dnnx.load(model, device="cuda", algo_search="background", plan_cache=cache, batch_size=8)
    stats = again.planner_stats()
    assert stats["timing_runs"] == 0 and stats["cache_hits"] >= 4, stats
    assert all("(plan cache)" in row["algorithm"] for row in again.plan(batch_size=8) if row["op"].startswith("Conv"))
    np.testing.assert_allclose(again.run(x), want, rtol=1e-4, atol=1e-4)
    assert again.wait_search(timeout=300)
    assert again.search_status()["state"] == "done"


def test_a_new_shape_is_searched_too(tmp_path):
    m = dnnx.load(_conv_stack(channels=32, layers=2), device="cuda", algo_search="background",
                  plan_cache=tmp_path / "plans.json")
    for n in (2, 5):
        m.run(_x(n))
    assert m.wait_search(timeout=300), m.search_status()
    assert m.search_status()["shapes_searched"] == 2


def test_without_a_cache_file_the_search_uses_a_private_one():
    m = dnnx.load(_conv_stack(channels=32, layers=2), device="cuda", algo_search="background", plan_cache=False)
    m.run(_x(4))
    assert m.wait_search(timeout=300)
    status = m.search_status()
    assert status["state"] == "done" and status["layers_searched"] >= 2, status


def test_deterministic_plans_never_swap():
    m = dnnx.load(_conv_stack(channels=16, layers=1), device="cuda", algo_search="background", deterministic=True)
    m.run(_x(2))
    status = m.search_status()
    assert status["state"] == "off" and "deterministic" in status["why"]
    assert m.wait_search(timeout=0)


def test_a_zero_budget_searches_nothing(tmp_path):
    m = dnnx.load(_conv_stack(channels=16, layers=1), device="cuda", algo_search="background", search_budget=0,
                  plan_cache=tmp_path / "plans.json")
    m.run(_x(2))
    assert m.wait_search(timeout=30)
    status = m.search_status()
    assert status["swaps"] == 0 and status["shapes_searched"] == 0, status


def test_inference_session_defaults_to_the_background_search():
    model = _conv_stack(channels=16, layers=1)
    sess = dnnx.InferenceSession(model.SerializeToString(), providers=["CUDAExecutionProvider"])
    x = _x(2)
    got = sess.run(None, {"x": x})[0]
    np.testing.assert_allclose(got, dnnx.load(model).run(x), rtol=1e-4, atol=1e-4)


def test_searcher_options_time_while_no_run_is_in_flight():
    _, options = core.device_options("cuda", "fp32", None, "background", False, False, None)
    searcher = options.as_searcher()
    assert searcher.searcher and not options.searcher
    assert searcher.algo_search == core.AlgoSearch.exhaustive
    # the search's engines run at the device's lowest stream priority, the model's at its highest
    assert searcher.background_priority and not options.background_priority
    candidate = options.in_background()
    assert candidate.background_priority and not candidate.searcher
    assert candidate.algo_search == options.algo_search


def test_requests_back_to_back_make_the_search_retake_its_timings(tmp_path):
    """Requests with their inputs on the device leave the GPU no idle gap: a timing a request
    overlaps is taken again, a few times at most, and a wait for an idle moment gives up after a
    bound (Note [background search], device_timing.cc), so the search still finishes while the
    requests go on, and the results stay right meanwhile."""
    model = _conv_stack(channels=64, layers=3)
    x = _x(16)
    want = dnnx.load(model).run(x)
    m = dnnx.load(model, device="cuda", algo_search="background", plan_cache=tmp_path / "plans.json",
                  batch_size=16)  # a fixed shape: the search starts at load
    on_device = m.to_device(x)
    runs, outs = 0, []
    deadline = time.perf_counter() + 60.0
    while m.search_status()["state"] == "searching" and time.perf_counter() < deadline:
        out = m.run(on_device, output="device")
        runs += 1
        if runs % 50 == 1:
            outs.append(out)  # checked after the loop: a copy back here would leave the GPU a gap
    for out in outs:
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-4, atol=1e-4)
    status = m.search_status()
    assert status["state"] == "done" and status["shapes_searched"] == 1, (runs, status)
    # the requests disturbed timings (taken again) or left no idle moment (waits gave up)
    assert status["timings_retaken"] + status["quiet_waits_given_up"] > 0, (runs, status)
    np.testing.assert_allclose(m.run(x), want, rtol=1e-4, atol=1e-4)
    assert core.foreground_runs() == 0


@pytest.mark.parametrize("precision", ["tf32", "fp16"])
def test_background_search_at_reduced_precision(tmp_path, precision):
    model = _conv_stack(channels=32, layers=2)
    x = _x(4)
    m = dnnx.load(model, device="cuda", precision=precision, algo_search="background",
                  plan_cache=tmp_path / "plans.json")
    before = m.run(x)
    assert m.wait_search(timeout=300), m.search_status()
    after = m.run(x)
    want = dnnx.load(model).run(x)
    tol = 5e-2 if precision == "fp16" else 1e-2  # docs/precision.md: half storage / tf32 products
    np.testing.assert_allclose(before, want, rtol=tol, atol=tol)
    np.testing.assert_allclose(after, want, rtol=tol, atol=tol)
