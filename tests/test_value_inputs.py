"""Run-time shape inputs (Note [value inputs] in engine/runtime/plan_folding.h): a graph input whose
value decides shapes (a Reshape's target, Slice's starts, ConstantOfShape's input, ...) joins the
plan key. A new value builds a plan, a seen one reuses it, the number of plans kept is bounded
(least recently used out) and planner_stats() counts all three; onnxruntime is the reference."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import dnnx
from ort_check import make_model, rand, run_ort

I64 = TensorProto.INT64


def reshape_by_input():
    """y = Relu(Reshape(x, shape)): x [2, 6] float, shape int64 [k] a graph input."""
    nodes = [helper.make_node("Reshape", ["x", "shape"], ["r"]), helper.make_node("Relu", ["r"], ["y"])]
    return make_model(nodes, [("x", [2, 6]), ("shape", [2], I64)], [("y", ["a", "b"])])


def slice_by_input():
    """y = Slice(x, starts, ends) + 1 on axis 1: same output shape for starts 0 and 1 at width 2."""
    nodes = [helper.make_node("Slice", ["x", "starts", "ends", "axes"], ["s"]),
             helper.make_node("Add", ["s", "one"], ["y"])]
    return make_model(nodes, [("x", [3, 4]), ("starts", [1], I64), ("ends", [1], I64)], [("y", [3, "w"])],
                      {"axes": np.array([1], np.int64), "one": np.array(1.0, np.float32)})


def computed_target():
    """The Reshape target is computed from a graph input: Concat(n * 2, [-1]) (host arithmetic)."""
    nodes = [helper.make_node("Mul", ["n", "two"], ["n2"]),
             helper.make_node("Concat", ["n2", "minus_one"], ["target"], axis=0),
             helper.make_node("Reshape", ["x", "target"], ["y"])]
    return make_model(nodes, [("x", [4, 6]), ("n", [1], I64)], [("y", ["a", "b"])],
                      {"two": np.array([2], np.int64), "minus_one": np.array([-1], np.int64)})


def check(m, model, feeds):
    want = run_ort(model, feeds)
    got = m.run_dict(feeds)
    for name, value in want.items():
        assert got[name].shape == value.shape
        np.testing.assert_array_equal(got[name], value)  # data movement and one exact op: bit for bit


def test_the_value_inputs_are_named():
    assert dnnx.load(reshape_by_input()).value_inputs == ["shape"]
    assert dnnx.load(slice_by_input()).value_inputs == ["starts", "ends"]
    assert dnnx.load(computed_target()).value_inputs == ["n"]
    assert dnnx.load(make_model([helper.make_node("Relu", ["x"], ["y"])], [("x", [2])], [("y", None)])).value_inputs == []


def test_two_values_two_plans_a_repeat_builds_none():
    model = reshape_by_input()
    m = dnnx.load(model)
    assert m.planner_stats()["plans_built"] == 0  # nothing to plan before a value is known
    x = rand(2, 6, seed=1) - 0.5
    check(m, model, {"x": x, "shape": np.array([3, 4], np.int64)})
    check(m, model, {"x": x, "shape": np.array([4, -1], np.int64)})
    stats = m.planner_stats()
    assert (stats["plans_built"], stats["plans_reused"], stats["plans_kept"]) == (2, 0, 2)
    check(m, model, {"x": x, "shape": np.array([3, 4], np.int64)})
    check(m, model, {"x": x, "shape": np.array([1, 12], np.int64)})
    stats = m.planner_stats()
    assert (stats["plans_built"], stats["plans_reused"]) == (3, 1)


def test_same_shapes_different_values_never_share_a_plan():
    model = slice_by_input()
    m = dnnx.load(model)
    x = rand(3, 4, seed=2)
    for _ in range(2):
        for start in (0, 1, 2, 0):
            check(m, model, {"x": x, "starts": np.array([start], np.int64), "ends": np.array([start + 2], np.int64)})
    assert m.planner_stats()["plans_built"] == 3


def test_a_value_computed_from_an_input():
    model = computed_target()
    m = dnnx.load(model)
    x = rand(4, 6, seed=3)
    for n in (1, 2, 3, 1):
        check(m, model, {"x": x, "n": np.array([n], np.int64)})
    rows = m.plan(inputs={"x": x, "n": np.array([3], np.int64)})
    assert [r["op"] for r in rows if r["algorithm"].startswith("folded")] == ["Mul", "Concat"], rows
    assert rows[-1]["outputs"] == [[6, 4]]


def test_the_least_recently_used_plan_goes_first():
    model = reshape_by_input()
    m = dnnx.load(model, max_plans=2)
    x = rand(2, 6, seed=4)
    shapes = {"a": [3, 4], "b": [4, 3], "c": [2, 6]}
    for key in "abab":
        check(m, model, {"x": x, "shape": np.array(shapes[key], np.int64)})
    check(m, model, {"x": x, "shape": np.array(shapes["c"], np.int64)})  # evicts a (b was used last)
    stats = m.planner_stats()
    assert (stats["plans_built"], stats["plans_evicted"], stats["plans_kept"], stats["max_plans"]) == (3, 1, 2, 2)
    check(m, model, {"x": x, "shape": np.array(shapes["b"], np.int64)})  # still kept
    assert m.planner_stats()["plans_built"] == 3
    check(m, model, {"x": x, "shape": np.array(shapes["a"], np.int64)})  # planned again
    assert m.planner_stats()["plans_built"] == 4
    m.set_max_plans(1)
    stats = m.planner_stats()
    assert (stats["plans_kept"], stats["plans_evicted"]) == (1, 3)


def test_shape_plans_are_bounded_too():
    model = make_model([helper.make_node("Relu", ["x"], ["y"])], [("x", ["N", 3])], [("y", None)])
    m = dnnx.load(model, max_plans=3)
    for batch in range(1, 8):
        np.testing.assert_array_equal(m.run(np.ones((batch, 3), np.float32)), np.ones((batch, 3), np.float32))
    stats = m.planner_stats()
    assert stats["plans_kept"] == 3 and stats["plans_built"] == 7  # the load's plan (batch 1) reused once
    assert stats["plans_evicted"] == 4


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "4"])
def test_max_plans_must_be_a_positive_int(bad):
    with pytest.raises(ValueError, match="max_plans must be a positive int"):
        dnnx.load(reshape_by_input(), max_plans=bad)


def test_plan_needs_the_values():
    m = dnnx.load(reshape_by_input())
    with pytest.raises(ValueError, match=r"values of input\(s\) \['shape'\]"):
        m.plan()
    with pytest.raises(ValueError, match="pass batch_size or inputs"):
        m.plan(batch_size=2, inputs=[np.zeros((2, 6), np.float32), np.array([1, 12], np.int64)])


def test_a_bad_value_names_the_node():
    m = dnnx.load(reshape_by_input())
    with pytest.raises(dnnx.InvalidModelError, match="Reshape"):
        m.run(np.zeros((2, 6), np.float32), np.array([5, 5], np.int64))


def test_prepare_plans_ahead():
    model = make_model([helper.make_node("Relu", ["x"], ["y"])], [("x", ["N", 3])], [("y", None)])
    m = dnnx.load(model)
    built = m.planner_stats()["plans_built"]
    m.prepare([(4, 3), [(8, 3)], {"x": (16, 3)}])
    assert m.planner_stats()["plans_built"] == built + 3
    for batch in (4, 8, 16):
        m.run(np.zeros((batch, 3), np.float32))
    assert m.planner_stats()["plans_built"] == built + 3  # every request found its plan


def test_prepare_takes_arrays_for_value_inputs():
    m = dnnx.load(reshape_by_input())
    with pytest.raises(ValueError, match="'shape' decides shapes by its value"):
        m.prepare([[(2, 6), (2,)]])
    m.prepare([[np.zeros((2, 6), np.float32), np.array([3, 4], np.int64)]])
    assert m.planner_stats()["plans_built"] == 1
    m.run(np.zeros((2, 6), np.float32), np.array([3, 4], np.int64))
    assert m.planner_stats()["plans_built"] == 1
    with pytest.raises(ValueError, match="expected 2 shape"):
        m.prepare([[(2, 6)]])


def test_a_constant_of_shape_fed_by_an_input_folds_whole():
    model = make_model([helper.make_node("ConstantOfShape", ["s"], ["y"],
                                         value=helper.make_tensor("v", TensorProto.FLOAT, [1], [2.5]))],
                       [("s", [2], I64)], [("y", ["a", "b"])])
    m = dnnx.load(model)
    for dims in ([2, 3], [1, 4], [2, 3]):
        check(m, model, {"s": np.array(dims, np.int64)})
    assert m.planner_stats()["plans_built"] == 2


def test_fine_tuning_refuses_value_inputs():
    model = make_model([helper.make_node("Reshape", ["x", "shape"], ["r"]),
                        helper.make_node("MatMul", ["r", "w"], ["y"])],
                       [("x", [2, 6]), ("shape", [2], I64)], [("y", [2, 2])], {"w": np.ones((6, 2), np.float32)})
    with pytest.raises(dnnx.UnsupportedModelError, match="input 'shape' decides shapes by its value"):
        dnnx.load(model).finetune(trainable="all", loss="mse")
