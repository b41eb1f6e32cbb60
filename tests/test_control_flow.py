"""Control flow and value-dependent shapes (issue #36, Note [staged plans] in
engine/runtime/stages.h, Note [subgraphs] in engine/ir/graph.h): If, Loop and Scan with bodies
planned like graphs, NonZero and Compress with the rest of the plan staged at their output
shapes; every model against onnxruntime."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import dnnx
from ort_check import assert_matches_ort, make_model, rand

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def vi(name, elem=F, shape=None):
    return helper.make_tensor_value_info(name, elem, shape)


def const(name, value):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.asarray(value), name))


def _if_body_graph(name, nodes, out):
    return helper.make_graph(nodes, name, [], [vi(out, F, None)])


def test_nested_if_inside_loop_reads_outer_scope():
    # Loop 5 times over x [2]: even iterations add the outer `w` (read two scopes down, inside
    # the If's branch), odd ones double; scan output: x after each iteration, stacked [5, 2].
    then_g = helper.make_graph([helper.make_node("Add", ["x_in", "w"], ["t_out"])], "then", [], [vi("t_out")])
    else_g = helper.make_graph([helper.make_node("Mul", ["x_in", "two"], ["e_out"])], "else", [], [vi("e_out")])
    body = helper.make_graph(
        [const("two_i", np.int64(2)), const("zero_i", np.int64(0)),
         helper.make_node("Mod", ["i", "two_i"], ["r"]),
         helper.make_node("Equal", ["r", "zero_i"], ["even"]),
         helper.make_node("If", ["even"], ["x_next"], then_branch=then_g, else_branch=else_g),
         helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Identity", ["x_next"], ["scan_x"])],
        "body", [vi("i", I64, []), vi("cond_in", B, []), vi("x_in", F, None)],
        [vi("cond_out", B, []), vi("x_next", F, None), vi("scan_x", F, None)])
    model = make_model(
        [helper.make_node("Loop", ["M", "", "x0"], ["x_final", "xs"], body=body)],
        [("M", [], I64), ("x0", [2]), ("w", [2])], [("x_final", [2]), ("xs", ["T", 2])],
        initializers={"two": np.float32(2)})
    feeds = {"M": np.array(5, np.int64), "x0": np.array([1, -2], np.float32), "w": np.array([0.5, 3], np.float32)}
    got = assert_matches_ort(model, feeds)
    assert got["xs"].shape == (5, 2)


def test_loop_carried_tensor_grows_and_plans_are_reused():
    # y grows by one element per iteration: [0] -> [k]; each body shape plans once.
    body = helper.make_graph(
        [helper.make_node("Cast", ["i"], ["f"], to=F),
         helper.make_node("Unsqueeze", ["f", "ax"], ["f1"]),
         helper.make_node("Concat", ["y_in", "f1"], ["y_out"], axis=0),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "grow", [vi("i", I64, []), vi("cond_in", B, []), vi("y_in", F, None)],
        [vi("cond_out", B, []), vi("y_out", F, None)],
        initializer=[numpy_helper.from_array(np.array([0], np.int64), "ax")])
    model = make_model([helper.make_node("Loop", ["M", "c", "y0"], ["y"], body=body)],
                       [("M", [], I64), ("c", [], B), ("y0", [1])], [("y", ["Y"])])
    feeds = {"M": np.array(4, np.int64), "c": np.array(True), "y0": np.array([7], np.float32)}
    assert_matches_ort(model, feeds)
    m = dnnx.load(model)
    first = m.run(**feeds)
    np.testing.assert_array_equal(first, [7, 0, 1, 2, 3])
    again = m.run(**feeds)
    np.testing.assert_array_equal(again, first)
    stats = m.planner_stats()
    body_rows = [s for s in stats["stages"] if "body" in s["stage"]]
    assert body_rows and body_rows[0]["plans_built"] == 4  # sizes 1..4, once each
    assert body_rows[0]["plans_reused"] == 4  # the second run reuses all four
    # cond false from the start: no iteration, y0 as it was.
    np.testing.assert_array_equal(m.run(M=np.array(4, np.int64), c=np.array(False), y0=feeds["y0"]), [7])


@pytest.mark.parametrize("in_dir,out_dir,in_axis,out_axis", [(1, 0, 0, 0), (0, 1, 1, 0), (1, 1, 1, 1)])
def test_scan_directions_and_axes(in_dir, out_dir, in_axis, out_axis):
    # A running sum over slices of x [3, 4] along in_axis; state [k].
    k = 4 if in_axis == 0 else 3
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "x_t"], ["s_out"]),
         helper.make_node("Mul", ["s_out", "scale"], ["y_t"])],
        "scan_body", [vi("s_in", F, [k]), vi("x_t", F, [k])], [vi("s_out", F, [k]), vi("y_t", F, [k])])
    model = make_model(
        [helper.make_node("Scan", ["s0", "x"], ["s", "ys"], body=body, num_scan_inputs=1,
                          scan_input_directions=[in_dir], scan_output_directions=[out_dir],
                          scan_input_axes=[in_axis], scan_output_axes=[out_axis])],
        [("s0", [k]), ("x", [3, 4]), ("scale", [1])], [("s", [k]), ("ys", ["A", "B"])])
    assert_matches_ort(model, {"s0": rand(k, seed=1), "x": rand(3, 4), "scale": np.array([0.5], np.float32)})


def _nonzero_model():
    # x [3, 4] -> the positive elements, gathered by NonZero's indices, reshaped to a column and
    # scaled; also their count (Shape of a staged value) and Compress of x's rows.
    nodes = [
        helper.make_node("Greater", ["x", "zero"], ["pos"]),
        helper.make_node("NonZero", ["pos"], ["idx"]),
        helper.make_node("Transpose", ["idx"], ["idx_t"], perm=[1, 0]),
        helper.make_node("GatherND", ["x", "idx_t"], ["vals"]),
        helper.make_node("Reshape", ["vals", "col"], ["vals_col"]),
        helper.make_node("Mul", ["vals_col", "x_scale"], ["scaled"]),
        helper.make_node("Shape", ["idx"], ["idx_shape"]),
        helper.make_node("Cast", ["pos"], ["pos_f"], to=F),
        helper.make_node("ReduceMax", ["pos_f"], ["row_any"], axes=[1], keepdims=0),
        helper.make_node("Cast", ["row_any"], ["row_mask"], to=B),
        helper.make_node("Compress", ["x", "row_mask"], ["rows"], axis=0),
    ]
    return make_model(nodes, [("x", [3, 4])],
                      [("scaled", ["N", 1]), ("idx_shape", [2], I64), ("rows", ["R", 4])],
                      initializers={"zero": np.float32(0), "col": np.array([-1, 1], np.int64),
                                    "x_scale": np.float32(3)}, opset=17)


def test_nonzero_feeds_gather_and_reshape():
    assert_matches_ort(_nonzero_model(), {"x": rand(3, 4)})


def test_all_false_nonzero_gives_empty_outputs():
    got = assert_matches_ort(_nonzero_model(), {"x": -np.abs(rand(3, 4)) - 1})
    assert got["scaled"].shape == (0, 1)
    assert got["rows"].shape == (0, 4)
    np.testing.assert_array_equal(got["idx_shape"], [2, 0])


def test_staged_plan_is_shown_and_reused_per_shape():
    m = dnnx.load(_nonzero_model())
    rows = m.plan()
    staged = [r for r in rows if r["algorithm"].startswith("staged:")]
    assert len(staged) == 1 and staged[0]["op"] == "NonZero"
    assert "value-dependent output shape" in staged[0]["algorithm"]
    a = rand(3, 4, seed=3)
    b = a.copy()
    b[0, 0] = abs(b[0, 0]) + 1 if b[0, 0] <= 0 else -1.0  # one more or one fewer positive value
    m.run(a)
    m.run(b)
    m.run(a)  # a's count again: its continuation plan is reused
    stages = {s["stage"]: s for s in m.planner_stats()["stages"]}
    after = stages["after NonZero 'NonZero_1'"] if "after NonZero 'NonZero_1'" in stages else next(
        s for k, s in stages.items() if k.startswith("after NonZero"))
    assert after["plans_built"] == 2 and after["plans_reused"] == 1
    assert m.planner_stats()["plans_reused"] >= 2  # the stage before NonZero: one shape throughout


def test_if_branches_of_different_shapes():
    then_g = helper.make_graph([helper.make_node("Concat", ["a", "a"], ["t"], axis=0)], "then", [], [vi("t")])
    else_g = helper.make_graph([helper.make_node("Neg", ["a"], ["e"])], "else", [], [vi("e")])
    model = make_model([helper.make_node("If", ["c"], ["out"], then_branch=then_g, else_branch=else_g)],
                       [("c", [], B), ("a", [2, 3])], [("out", ["R", 3])])
    for c in (True, False):
        got = assert_matches_ort(model, {"c": np.array(c), "a": rand(2, 3)})
        assert got["out"].shape == ((4, 3) if c else (2, 3))


def test_value_shaped_node_of_constants_folds():
    # NonZero of an initializer: known at plan time, so the plan is not staged.
    model = make_model([helper.make_node("NonZero", ["k"], ["idx"]), helper.make_node("Cast", ["idx"], ["f"], to=F),
                        helper.make_node("Add", ["f", "x"], ["y"])],
                       [("x", [1])], [("y", [2, 3])], initializers={"k": np.array([[0, 1], [1, 1]], np.float32)})
    assert_matches_ort(model, {"x": np.ones(1, np.float32)})
    assert not any(r["algorithm"].startswith("staged:") for r in dnnx.load(model).plan())


def test_stage_and_body_plans_count_against_max_plans():
    # The growing loop's body plans four shapes; with max_plans=2 the model keeps two in all.
    body = helper.make_graph(
        [helper.make_node("Concat", ["y_in", "y_in"], ["y_out"], axis=0),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "double", [vi("i", I64, []), vi("cond_in", B, []), vi("y_in", F, None)],
        [vi("cond_out", B, []), vi("y_out", F, None)])
    model = make_model([helper.make_node("Loop", ["M", "", "y0"], ["y"], body=body)],
                       [("M", [], I64), ("y0", [1])], [("y", ["Y"])])
    m = dnnx.load(model, max_plans=2)
    np.testing.assert_array_equal(m.run(np.array(4, np.int64), np.ones(1, np.float32)), np.ones(16, np.float32))
    stats = m.planner_stats()
    (body_stats,) = [s for s in stats["stages"] if s["stage"].endswith("body")]
    assert body_stats["plans_built"] == 4 and body_stats["plans_evicted"] == 3 and body_stats["plans_kept"] == 1
    assert stats["plans_kept_total"] == 2


def test_empty_sequence_scan_and_zero_trip_loop():
    # Scan over L = 0 slices: the state passes through and the scan output is [0, 4] (its
    # declared dims); a Loop of M = 0: the initial value and an empty scan output [0, 2].
    scan_body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "x_t"], ["s_out"]), helper.make_node("Identity", ["s_out"], ["y_t"])],
        "scan_body", [vi("s_in", F, [4]), vi("x_t", F, [4])], [vi("s_out", F, [4]), vi("y_t", F, [4])])
    scan = make_model([helper.make_node("Scan", ["s0", "x"], ["s", "ys"], body=scan_body, num_scan_inputs=1)],
                      [("s0", [4]), ("x", ["L", 4])], [("s", [4]), ("ys", ["L", 4])])
    got = dnnx.load(scan).run_dict({"s0": rand(4), "x": np.zeros((0, 4), np.float32)})
    np.testing.assert_array_equal(got["s"], rand(4))
    assert got["ys"].shape == (0, 4) and got["ys"].dtype == np.float32
    loop_body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]), helper.make_node("Neg", ["x_in"], ["x_out"]),
         helper.make_node("Identity", ["x_out"], ["part"])],
        "neg", [vi("i", I64, []), vi("cond_in", B, []), vi("x_in", F, [2])],
        [vi("cond_out", B, []), vi("x_out", F, [2]), vi("part", F, [2])])
    loop = make_model([helper.make_node("Loop", ["M", "", "x0"], ["x", "parts"], body=loop_body)],
                      [("M", [], I64), ("x0", [2])], [("x", [2]), ("parts", ["T", 2])])
    feeds = {"M": np.array(0, np.int64), "x0": rand(2)}
    got = assert_matches_ort(loop, feeds)
    assert got["parts"].shape == (0, 2)
    assert_matches_ort(loop, {"M": np.array(3, np.int64), "x0": rand(2)})


def test_bad_loop_and_scan_inputs_are_named_errors():
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]), helper.make_node("Identity", ["x_in"], ["x_out"])],
        "pass", [vi("i", I64, []), vi("cond_in", B, []), vi("x_in", F, [2])], [vi("cond_out", B, []), vi("x_out", F, [2])])
    loop = dnnx.load(make_model([helper.make_node("Loop", ["M", "", "x0"], ["x"], body=body, name="lp")],
                                [("M", ["k"], I64), ("x0", [2])], [("x", [2])]))
    with pytest.raises(dnnx.InvalidModelError, match=r"node 'lp' \(Loop\): M must hold one element"):
        loop.run(np.array([1, 2], np.int64), rand(2))
    scan = dnnx.load(make_model([helper.make_node("Scan", ["s0", "a", "b"], ["s"], body=helper.make_graph(
        [helper.make_node("Add", ["s_in", "x_t"], ["t"]), helper.make_node("Add", ["t", "y_t"], ["s_out"])], "sb2",
        [vi("s_in", F, [2]), vi("x_t", F, [2]), vi("y_t", F, [2])], [vi("s_out", F, [2])]), num_scan_inputs=2,
        name="sc")], [("s0", [2]), ("a", ["L", 2]), ("b", ["M", 2])], [("s", [2])]))
    with pytest.raises(dnnx.InvalidModelError, match=r"node 'sc' \(Scan\): scan input 1 .* has 4 slices"):
        scan.run(rand(2), rand(3, 2), rand(4, 2))


def test_if_on_a_shape_is_inlined_at_plan_time():
    # cond = (x's first dim == 0), known once the plan has x's shape: the branch is planned in
    # place of the If (Note [inlined branches]), the plan is not staged, and each batch picks.
    then_g = helper.make_graph([helper.make_node("Identity", ["x"], ["t"])], "then", [], [vi("t", F, None)])
    else_g = helper.make_graph([helper.make_node("Mul", ["x", "k"], ["e"]), helper.make_node("Relu", ["e"], ["e2"])],
                               "else", [], [vi("e2", F, None)], initializer=[numpy_helper.from_array(np.float32(2), "k")])
    model = make_model([helper.make_node("Shape", ["x"], ["s"]),
                        helper.make_node("Gather", ["s", "zero_i"], ["n"], axis=0),
                        helper.make_node("Equal", ["n", "zero_i"], ["empty"]),
                        helper.make_node("If", ["empty"], ["y0"], then_branch=then_g, else_branch=else_g),
                        helper.make_node("Add", ["y0", "x"], ["y"])],
                       [("x", ["N", 3])], [("y", ["N", 3])], initializers={"zero_i": np.int64(0)})
    for n in (2, 0):
        assert_matches_ort(model, {"x": rand(n, 3)})
    m = dnnx.load(model)
    rows = m.plan()
    assert not any(r["algorithm"].startswith("staged:") for r in rows)
    assert any(r["op"] == "If" and r["algorithm"].startswith("inlined: else_branch") for r in rows)
    assert any(r["op"] == "Relu" for r in rows)  # the branch's own layers are in the plan


def test_staged_node_last_with_outputs_of_every_origin():
    """Note [stage slots]: a staged node that is the graph's last, whose graph outputs are its own
    output, a graph input passed through, a value carried from the stage before, and an
    initializer; run twice with other shapes between (Note [last stage plan])."""
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("NonZero", ["r"], ["idx"])]
    model = make_model(nodes, [("x", ["N", 3])], [("idx", [2, "K"], I64), ("x", ["N", 3]), ("r", ["N", 3]), ("k", [2])],
                       initializers={"k": np.array([1.5, -2.0], np.float32)}, opset=17)
    m = dnnx.load(model)
    assert [r["op"] for r in m.plan() if r["algorithm"].startswith("staged:")] == ["NonZero"]
    for shape, seed in (((2, 3), 1), ((4, 3), 2), ((2, 3), 3)):
        feeds = {"x": rand(*shape, seed=seed)}
        got = assert_matches_ort(model, feeds)
        np.testing.assert_array_equal(m.run_dict(feeds)["idx"], got["idx"])


def test_staged_node_with_a_constant_input_and_an_omitted_one():
    """Compress with its condition an initializer (the node's input found among the constants,
    not the stage's values), and NonMaxSuppression with an omitted optional input between two
    given ones, then nodes after each (continuations)."""
    nodes = [helper.make_node("Compress", ["x", "keep"], ["rows"], axis=0),
             helper.make_node("Neg", ["rows"], ["neg"]),
             helper.make_node("NonMaxSuppression", ["boxes", "scores", "", "iou"], ["sel"]),
             helper.make_node("Shape", ["sel"], ["sel_shape"])]
    model = make_model(nodes, [("x", [3, 4]), ("boxes", [1, 5, 4]), ("scores", [1, 1, 5])],
                       [("neg", ["R", 4]), ("sel", ["S", 3], I64), ("sel_shape", [2], I64)],
                       initializers={"keep": np.array([True, False, True]), "iou": np.array([0.5], np.float32)},
                       opset=17)
    corner = rand(1, 5, 2, seed=4)
    feeds = {"x": rand(3, 4), "boxes": np.concatenate([corner, corner + 1], axis=2), "scores": rand(1, 1, 5, seed=5)}
    got = assert_matches_ort(model, feeds)
    assert [r["op"] for r in dnnx.load(model).plan() if r["algorithm"].startswith("staged:")] == ["Compress"]
    assert got["neg"].shape == (2, 4)
    # max_output_boxes_per_class omitted: 0, no box selected (onnxruntime's default)
    assert got["sel"].shape == (0, 3)
