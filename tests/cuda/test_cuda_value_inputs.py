"""Run-time shape inputs on CUDA (Note [value inputs] in engine/runtime/plan_folding.h): each value
of a value input has its own plan and its own CUDA graph; alternating values (same shapes or not)
never replay a stale graph; device value inputs are read back to the host for the key; the plan
bound drops the graphs of the plans it evicts."""
import numpy as np
import pytest
from onnx import helper

import dnnx
from ort_check import make_model, rand
from test_value_inputs import check, computed_target, reshape_by_input, slice_by_input


def test_alternating_slice_values_replay_their_own_graphs():
    model = slice_by_input()
    m = dnnx.load(model, device="cuda")
    x = rand(3, 4, seed=1)
    for _ in range(3):  # eager, capture, replay for each value
        for start in (0, 1, 2):
            check(m, model, {"x": x, "starts": np.array([start], np.int64), "ends": np.array([start + 2], np.int64)})
    graphs = m.graphs()
    assert len(graphs) == 3 and all(g["state"] == "captured" for g in graphs), graphs
    assert m.planner_stats()["plans_built"] == 3


def test_reshape_values_and_device_value_inputs():
    model = reshape_by_input()
    m = dnnx.load(model, device="cuda")
    x = rand(2, 6, seed=2) - 0.5
    for _ in range(3):
        for shape in ([3, 4], [4, -1], [1, 12]):
            check(m, model, {"x": x, "shape": np.array(shape, np.int64)})
    # The value input given in GPU memory: read back to the host for the plan key.
    got = m.run(m.to_device(x), m.to_device(np.array([4, 3], np.int64)))
    np.testing.assert_array_equal(got, np.maximum(x.reshape(4, 3), 0))
    assert m.planner_stats()["plans_built"] == 4


def test_computed_targets_on_cuda():
    model = computed_target()
    m = dnnx.load(model, device="cuda")
    x = rand(4, 6, seed=3)
    for _ in range(2):
        for n in (1, 2, 3):
            check(m, model, {"x": x, "n": np.array([n], np.int64)})


def test_evicted_plans_drop_their_graphs():
    model = slice_by_input()
    m = dnnx.load(model, device="cuda", max_plans=2)
    x = rand(3, 4, seed=4)
    for start in (0, 1, 2, 0, 1, 2):
        for _ in range(2):
            check(m, model, {"x": x, "starts": np.array([start], np.int64), "ends": np.array([start + 2], np.int64)})
    assert len(m.graphs()) <= 2
    stats = m.planner_stats()
    assert stats["plans_kept"] == 2 and stats["plans_evicted"] == 4


def test_prepare_records_the_graphs():
    model = make_model([helper.make_node("Relu", ["x"], ["y"])], [("x", ["N", 3])], [("y", None)])
    m = dnnx.load(model, device="cuda")
    m.prepare([(4, 3), (8, 3)])
    states = {tuple(g["input_shapes"][0]): g["state"] for g in m.graphs()}
    assert states[(4, 3)] == "captured" and states[(8, 3)] == "captured", states
    built = m.planner_stats()["plans_built"]
    x = rand(8, 3, seed=5) - 0.5
    np.testing.assert_array_equal(m.run(x), np.maximum(x, 0))
    assert m.planner_stats()["plans_built"] == built
