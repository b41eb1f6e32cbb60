"""dnnx.ray on a GPU (issue #19): actors of one node share the persistent plan cache, so with an
exhaustive search the second actor plans with zero timing runs; a GPU actor's outputs equal a
direct run's. Needs Ray (skipped without it) and a GPU (tests/cuda/conftest.py)."""
import os

import numpy as np
import pytest

import dnnx
from dnnx.examples import build
from ort_check import rand
from ray_cluster import start_ray

ray = pytest.importorskip("ray")


@pytest.fixture(scope="module")
def cluster():
    # the workers import this module (the actor class) and ort_check from the folder above
    here = os.path.dirname(os.path.abspath(__file__))
    module, restore = start_ray(extra_paths=[here, os.path.dirname(here)], num_gpus=1)
    yield module
    restore()


@ray.remote(num_gpus=1, num_cpus=0.5)
class PlanningActor:
    """One dnnx.ray.Predictor on the actor's GPU: its outputs and planner counters for one batch."""

    def __init__(self, model_bytes, cache):
        import dnnx.ray

        self.predictor = dnnx.ray.Predictor(model_bytes, device="cuda", algo_search="exhaustive", plan_cache=cache,
                                            passes={"fuse_conv_pool": False})

    def run(self, x):
        out = self.predictor({"x": x})
        return out["probs"], self.predictor.model.planner_stats()


def test_the_second_actor_on_a_node_times_nothing(cluster, tmp_path):
    model = build("lenet", seed=0).SerializeToString()
    cache = str(tmp_path / "plan-cache.json")
    x = rand(32, 1, 28, 28, seed=5)
    first = PlanningActor.remote(model, cache)
    probs, stats = ray.get(first.run.remote(x))
    assert stats["timing_runs"] > 0 and stats["cache_writes"] == stats["timing_runs"], stats
    ray.kill(first)  # one GPU: the second actor waits for it
    second = PlanningActor.remote(model, cache)
    probs2, stats2 = ray.get(second.run.remote(x))
    assert stats2["timing_runs"] == 0 and stats2["cache_hits"] == stats["timing_runs"], stats2
    np.testing.assert_array_equal(probs2, probs)  # the same algorithms chosen: the same results
    direct = dnnx.load(build("lenet", seed=0), device="cuda", algo_search="exhaustive", plan_cache=cache,
                       passes={"fuse_conv_pool": False})
    np.testing.assert_allclose(probs, direct.run(x), rtol=1e-5, atol=1e-6)
    cpu = dnnx.load(build("lenet", seed=0)).run(x)
    np.testing.assert_allclose(probs, cpu, rtol=1e-4, atol=1e-5)  # fp32 FMA on the GPU vs OpenBLAS
