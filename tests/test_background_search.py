"""algo_search="background" where no GPU is (Note [background search]; the search itself is
tested in tests/cuda/test_cuda_background_search.py): the option's checks and its status."""
import pickle

import pytest

import dnnx
from dnnx.examples import build


def test_background_on_the_cpu_is_off_with_the_reason():
    m = dnnx.load(build("lenet"), algo_search="background")
    status = m.search_status()
    assert status["state"] == "off" and "CPU" in status["why"]
    assert m.wait_search(timeout=0)
    assert m.run(build_input()).shape == (2, 10)


def test_other_policies_report_no_search():
    m = dnnx.load(build("lenet"))
    assert m.search_status() == {"state": "off", "why": "algo_search='auto': the plan is final at load"}
    assert m.wait_search()


@pytest.mark.parametrize("budget", [-1, "10", True, float("nan")])
def test_search_budget_must_be_seconds(budget):
    with pytest.raises(ValueError, match="search_budget"):
        dnnx.load(build("lenet"), algo_search="background", search_budget=budget)


def test_search_budget_needs_the_background_policy():
    with pytest.raises(ValueError, match="search_budget applies to algo_search='background'"):
        dnnx.load(build("lenet"), search_budget=5)


def test_unknown_policy_lists_background():
    with pytest.raises(ValueError, match="auto, heuristic, exhaustive, background"):
        dnnx.load(build("lenet"), algo_search="eventually")


def test_a_pickled_model_keeps_its_policy_and_budget():
    m = dnnx.load(build("lenet"), algo_search="background", search_budget=5)
    again = pickle.loads(pickle.dumps(m))
    assert again._load_options["algo_search"] == "background" and again._load_options["search_budget"] == 5


def build_input():
    import numpy as np

    return np.random.default_rng(0).random((2, 1, 28, 28), np.float32)


# --- the search thread with stand-in engines (no GPU): what a request pays, when it starts ------

class _FakeEngine:
    """An engine's surface the search uses: plan, run, profile, planner_report."""

    def __init__(self, searcher, log, ms):
        self.searcher, self.log, self.ms = searcher, log, ms
        self.timing_runs = 0

    def plan(self, inputs):
        self.log.append(("plan", self.searcher, [getattr(a, "shape", None) for a in inputs]))
        if self.searcher:
            self.timing_runs += 1

    def run(self, inputs, output):
        self.log.append(("run", self.searcher))

    def profile(self, inputs, repeat):
        return {"layers": [{"times_ms": [self.ms]}]}

    def planner_report(self):
        return {"timing_runs": self.timing_runs}


def _fake_search(log, swapped, candidate_ms=1.0):
    from dnnx import _background_search as bs

    made = []

    def build_engine(searcher):
        # the baseline (first twin) times 2 ms, the candidate candidate_ms
        twins = sum(1 for e in made if not e.searcher)
        engine = _FakeEngine(searcher, log, 2.0 if twins == 0 else candidate_ms)
        made.append(engine)
        return engine

    return bs.BackgroundSearch(build_engine=build_engine, swap=lambda e: swapped.append(e) or True, budget_s=60)


def test_a_request_pays_no_search_data_and_the_search_waits_for_its_run(monkeypatch):
    import numpy as np

    from dnnx import _background_search as bs

    monkeypatch.setattr(bs, "_FIRST_RUN_WAIT_S", 30.0)
    log, swapped = [], []
    search = _fake_search(log, swapped)
    x = np.zeros((256, 3, 224, 224), np.float32)
    search.saw([x])
    assert search._data == {}  # the 38.5 M seeded values are the search thread's work, not saw's
    assert not search.wait(0.2) and log == []  # no planning before the first run returns
    search.ran()
    assert search.wait(30), search.status()
    status = search.status()
    assert status["state"] == "done" and status["shapes_searched"] == 1 and status["swaps"] == 1, status
    assert status["speedup"] == 2.0 and len(swapped) == 1
    planned = [entry[2] for entry in log if entry[0] == "plan"]
    assert planned and all(shapes == [(256, 3, 224, 224)] for shapes in planned)


def test_search_data_repeats_one_seeded_block():
    import numpy as np

    from dnnx import _background_search as bs

    a = bs._search_data((4, 70000), "float32")
    block = bs._seeded_block()
    assert a.dtype == np.float32 and a.shape == (4, 70000)
    np.testing.assert_array_equal(a.reshape(-1)[: block.size], block)
    np.testing.assert_array_equal(a.reshape(-1)[block.size: 2 * block.size], block)
    assert np.std(block) > 0.9  # standard normal, not zeros (timing on zeros flatters a kernel)
    assert bs._search_data((3,), "int64").tolist() == [0, 0, 0]
    assert bs._search_data((2, 2), "float16").dtype == np.float16


def test_the_turns_wait_for_an_idle_device_a_bounded_time(monkeypatch):
    import time

    from dnnx import _background_search as bs

    monkeypatch.setattr(bs.core, "foreground_runs", lambda: 1)  # requests back to back, never idle
    start = time.perf_counter()
    bs._wait_for_quiet(0.05)
    assert 0.04 <= time.perf_counter() - start < 1.0
