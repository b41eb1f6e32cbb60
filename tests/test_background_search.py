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
