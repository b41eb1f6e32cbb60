"""Sequences and optionals (issue #36, Note [sequences] in engine/runtime/values/host_value.h):
the sequence and optional ops run by the engine on the host between plan stages, sequence and
optional graph inputs and outputs through Model.run and InferenceSession (a Python list, None or
a value), each model against onnxruntime; and the errors a user can cause, naming the node."""
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import dnnx

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def vi(name, elem=F, shape=None):
    return helper.make_tensor_value_info(name, elem, shape)


def seq_vi(name, elem=F, shape=None):
    """A sequence of `elem` tensors (onnx.checker wants a graph input's element shape: `shape`,
    with None for unknown dims)."""
    return helper.make_value_info(name, helper.make_sequence_type_proto(helper.make_tensor_type_proto(elem, shape)))


def opt_vi(name, elem=F, shape=None):
    return helper.make_value_info(name, helper.make_optional_type_proto(helper.make_tensor_type_proto(elem, shape)))


def const(name, value):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.asarray(value), name))


def model_of(nodes, inputs, outputs, opset=18):
    m = helper.make_model(helper.make_graph(nodes, "g", inputs, outputs), opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 10
    return m


def ort_run(model, feeds):
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def assert_same(got, want):
    """Equal values, sequences as lists of equal arrays (dtypes and shapes included), None as None."""
    if want is None:
        assert got is None
        return
    if isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), f"{got!r} vs {want!r}"
        for g, w in zip(got, want):
            assert_same(g, w)
        return
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape, f"{got.dtype}{got.shape} vs {want.dtype}{want.shape}"
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=0)


def check(model, feeds):
    """dnnx against onnxruntime on `feeds` (by name), every output."""
    want = ort_run(model, feeds)
    m = dnnx.load(model)
    got = m.run_dict(feeds)
    assert len(got) == len(want)
    for g, w in zip(got.values(), want):
        assert_same(g, w)
    return m


@pytest.mark.parametrize("split,axis,new_axis", [(None, 1, 0), ([1, 3, 2], 1, 0), (2, 0, 0), (None, -1, 1), (4, 1, 0)])
def test_split_to_sequence_then_concat_from_sequence(split, axis, new_axis):
    # x [4, 6] -> SplitToSequence (pieces along `axis`) -> reverse the sequence through
    # SequenceAt/SequenceInsert in a Loop-free way (erase and insert) -> ConcatFromSequence.
    nodes, inputs = [], ["x"]
    if split is not None:
        nodes.append(const("split", np.asarray(split, np.int64)))
        inputs.append("split")
    keep = {"keepdims": 0} if new_axis else {}
    nodes += [
        helper.make_node("SplitToSequence", inputs, ["s"], axis=axis, name="split_x", **keep),
        helper.make_node("SequenceLength", ["s"], ["n"]),
        const("zero", np.asarray(0, np.int64)),
        helper.make_node("SequenceAt", ["s", "zero"], ["first"]),
        helper.make_node("SequenceErase", ["s", "zero"], ["rest"]),
        helper.make_node("SequenceInsert", ["rest", "first"], ["rotated"]),  # the first piece moved to the end
        helper.make_node("ConcatFromSequence", ["rotated"], ["y"], axis=axis, new_axis=new_axis),
        helper.make_node("Relu", ["y"], ["z"]),  # a tensor op after the sequence: a plan of its own
    ]
    model = model_of(nodes, [vi("x", F, [4, 6])], [vi("z"), vi("n", I64), seq_vi("s")])
    x = np.random.default_rng(0).standard_normal((4, 6)).astype(np.float32)
    m = check(model, {"x": x})
    staged = [r["algorithm"] for r in m.plan(inputs=[x]) if r["algorithm"].startswith("staged:")]
    assert staged == ["staged: SplitToSequence 'split_x' makes or reads a sequence or optional value, which "
                      "the engine holds on the host; the engine runs it, then plans the rest for the shapes it gives "
                      "(no CUDA graph spans it)"], staged
    assert m.planner_stats()["stages"], "each stage after a sequence op keeps plans of its own"


@pytest.mark.parametrize("insert_at,erase_at,at", [(-1, -1, -2), (-3, -3, -3), (3, 0, 2), (0, -2, -1), (None, None, 0)])
def test_insert_erase_at_with_negative_positions(insert_at, erase_at, at):
    # A sequence input of 3 tensors (a list): insert t at insert_at (None: the end), erase at
    # erase_at (None: the last), read at `at`, and return the sequence, its length and the element.
    nodes, names = [], {}
    for key, value in (("i", insert_at), ("e", erase_at)):
        if value is not None:
            nodes.append(const(key, np.asarray(value, np.int64)))
        names[key] = [key] if value is not None else []
    nodes += [
        helper.make_node("SequenceInsert", ["seq", "t"] + names["i"], ["s1"]),
        helper.make_node("SequenceErase", ["s1"] + names["e"], ["s2"]),
        const("a", np.asarray(at, np.int32)),
        helper.make_node("SequenceAt", ["s2", "a"], ["elem"]),
        helper.make_node("SequenceLength", ["s2"], ["n"]),
    ]
    model = model_of(nodes, [seq_vi("seq", F, [2, None]), vi("t", F, [1, 4])], [seq_vi("s2"), vi("elem"), vi("n", I64)])
    rng = np.random.default_rng(1)
    seq = [rng.standard_normal((2, k + 1)).astype(np.float32) for k in range(3)]
    check(model, {"seq": seq, "t": np.full((1, 4), 7.0, np.float32)})


def test_sequence_construct_and_empty():
    nodes = [helper.make_node("SequenceConstruct", ["a", "b", "a"], ["s"]),
             helper.make_node("SequenceEmpty", [], ["e"], dtype=I64),
             helper.make_node("SequenceLength", ["e"], ["ne"]),
             helper.make_node("ConcatFromSequence", ["s"], ["c"], axis=0)]
    model = model_of(nodes, [vi("a", F, [2, 3]), vi("b", F, [1, 3])], [vi("c"), vi("ne", I64), seq_vi("e", I64)])
    rng = np.random.default_rng(2)
    check(model, {"a": rng.standard_normal((2, 3)).astype(np.float32), "b": rng.standard_normal((1, 3)).astype(np.float32)})


@pytest.mark.parametrize("given", [None, np.array([1.5, -2.0], np.float32)])
def test_optional_input_given_none_and_a_value(given):
    # has = OptionalHasElement(x); y = If(has, OptionalGetElement(x) * 2, zeros): the branch runs
    # only with a value (onnxruntime runs OptionalGetElement lazily in its branch too).
    then_g = helper.make_graph([helper.make_node("OptionalGetElement", ["x"], ["v"]),
                                helper.make_node("Add", ["v", "v"], ["twice"])], "then", [], [vi("twice", F, None)])
    else_g = helper.make_graph([const("zeros", np.zeros(2, np.float32))], "else", [], [vi("zeros", F, None)])
    nodes = [helper.make_node("OptionalHasElement", ["x"], ["has"]),
             helper.make_node("If", ["has"], ["y"], then_branch=then_g, else_branch=else_g),
             helper.make_node("Identity", ["x"], ["x_out"])]
    model = model_of(nodes, [opt_vi("x", F, [2])], [vi("has", B, []), vi("y", F, None), opt_vi("x_out", F, [2])])
    check(model, {"x": given})


def test_optional_of_a_sequence_and_optional_op():
    # Optional(seq) -> OptionalGetElement -> SequenceLength; Optional() of no input -> has = False.
    opt_type = helper.make_optional_type_proto(helper.make_tensor_type_proto(F, None))
    nodes = [helper.make_node("Optional", ["seq"], ["o"]),
             helper.make_node("OptionalGetElement", ["o"], ["s"]),
             helper.make_node("SequenceLength", ["s"], ["n"]),
             helper.make_node("Optional", [], ["none"], type=opt_type.optional_type.elem_type),
             helper.make_node("OptionalHasElement", ["none"], ["has"])]
    model = model_of(nodes, [seq_vi("seq", F, [2])], [vi("n", I64, []), vi("has", B, [])])
    check(model, {"seq": [np.ones((2,), np.float32)] * 4})


def test_sequence_map_against_onnxruntime():
    body = helper.make_graph([helper.make_node("Mul", ["e", "w"], ["p"]), helper.make_node("Shape", ["p"], ["sh"])],
                             "body", [vi("e", F, None), vi("w", F, None)], [vi("p", F, None), vi("sh", I64, None)])
    nodes = [helper.make_node("SequenceMap", ["seq", "w"], ["ps", "shapes"], body=body)]
    model = model_of(nodes, [seq_vi("seq", F, [None, 2]), vi("w", F, [1])], [seq_vi("ps"), seq_vi("shapes", I64)])
    rng = np.random.default_rng(3)
    seq = [rng.standard_normal((k + 1, 2)).astype(np.float32) for k in range(3)]
    check(model, {"seq": seq, "w": np.array([3.0], np.float32)})
    check(model, {"seq": [], "w": np.array([3.0], np.float32)})  # an empty sequence maps to empty ones


def test_loop_carries_a_sequence():
    # Loop 4 times: insert the iteration number into the carried sequence; then concatenate.
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Cast", ["i"], ["f"], to=F),
         helper.make_node("Unsqueeze", ["f", "ax"], ["f1"]),
         helper.make_node("SequenceInsert", ["s_in", "f1"], ["s_out"])],
        "body", [vi("i", I64, []), vi("cond_in", B, []), seq_vi("s_in", F, [None])], [vi("cond_out", B, []), seq_vi("s_out", F, [None])],
        initializer=[numpy_helper.from_array(np.array([0], np.int64), "ax")])
    nodes = [const("m", np.asarray(4, np.int64)), const("c", np.asarray(True)),
             helper.make_node("SequenceEmpty", [], ["s0"]),
             helper.make_node("Loop", ["m", "c", "s0"], ["s"], body=body),
             helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0)]
    check(model_of(nodes, [], [vi("y", F, [4]), seq_vi("s", F, [1])]), {})


def test_inference_session_with_a_sequence_input():
    nodes = [helper.make_node("ConcatFromSequence", ["seq"], ["y"], axis=0, new_axis=1)]
    model = model_of(nodes, [seq_vi("seq", F, [2])], [vi("y")])
    sess = dnnx.InferenceSession(model.SerializeToString())
    assert sess.get_inputs()[0].type == "seq(tensor(float))"
    seq = [np.full((2,), k, np.float32) for k in range(3)]
    np.testing.assert_array_equal(sess.run(None, {"seq": seq})[0], ort_run(model, {"seq": seq})[0])


# --- errors a user can cause: clear exceptions naming the node or the input -----------------------

def _at_model(at):
    nodes = [const("a", np.asarray(at, np.int64)), helper.make_node("SequenceAt", ["seq", "a"], ["y"], name="pick")]
    return model_of(nodes, [seq_vi("seq", F, [2])], [vi("y")])


@pytest.mark.parametrize("at", [3, -4])
def test_sequence_at_out_of_range_names_the_node(at):
    m = dnnx.load(_at_model(at))
    with pytest.raises(dnnx.InvalidModelError, match=r"node 'pick' \(SequenceAt\): position -?\d+ is out of range "
                                                      r"for a sequence of 3 tensors"):
        m.run([np.zeros(2, np.float32)] * 3)


def test_sequence_input_errors_name_the_input():
    m = dnnx.load(_at_model(0))
    with pytest.raises(ValueError, match=r"input 'seq' is a sequence: expected a list of numpy arrays of float32"):
        m.run(np.zeros(2, np.float32))
    with pytest.raises(ValueError, match=r"input 'seq' element 1: expected float32, got \[2\] int64"):
        m.run([np.zeros(2, np.float32), np.zeros(2, np.int64)])


def test_optional_get_element_of_none_names_the_node():
    nodes = [helper.make_node("OptionalGetElement", ["x"], ["y"], name="get")]
    m = dnnx.load(model_of(nodes, [opt_vi("x", F, [2])], [vi("y")]))
    np.testing.assert_array_equal(m.run(np.ones(2, np.float32)), np.ones(2, np.float32))
    with pytest.raises(dnnx.InvalidModelError, match=r"node 'get' \(OptionalGetElement\): input 'x' is an optional "
                                                      r"holding none"):
        m.run(None)


def test_concat_of_mismatched_tensors_names_the_node():
    nodes = [helper.make_node("ConcatFromSequence", ["seq"], ["y"], axis=0, name="cat")]
    m = dnnx.load(model_of(nodes, [seq_vi("seq", F, [2, None])], [vi("y")]))
    with pytest.raises(dnnx.InvalidModelError, match=r"node 'cat' \(ConcatFromSequence\): tensor 1 \[2,4\] float32 "
                                                      r"does not match tensor 0 \[2,3\] float32"):
        m.run([np.zeros((2, 3), np.float32), np.zeros((2, 4), np.float32)])
    with pytest.raises(dnnx.InvalidModelError, match=r"cannot concatenate an empty sequence"):
        m.run([])


def test_a_tensor_op_reading_a_sequence_names_the_node():
    nodes = [helper.make_node("SplitToSequence", ["x"], ["s"]), helper.make_node("Relu", ["s"], ["y"], name="bad")]
    model = model_of(nodes, [vi("x", F, [2])], [vi("y", F, [2])])
    with pytest.raises((dnnx.InvalidModelError, dnnx.UnsupportedModelError), match=r"node 'bad' \(Relu\)"):
        dnnx.load(model).run(np.zeros(2, np.float32))


@pytest.mark.parametrize("given", [None, [np.ones((2,), np.float32), np.zeros((3,), np.float32)]])
def test_optional_sequence_input_given_none_and_a_list(given):
    opt_seq = helper.make_value_info("x", helper.make_optional_type_proto(
        helper.make_sequence_type_proto(helper.make_tensor_type_proto(F, [None]))))
    nodes = [helper.make_node("OptionalHasElement", ["x"], ["has"])]
    check(model_of(nodes, [opt_seq], [vi("has", B, [])]), {"x": given})


def test_split_sizes_that_do_not_sum_name_the_node():
    nodes = [const("sizes", np.array([1, 1], np.int64)),
             helper.make_node("SplitToSequence", ["x", "sizes"], ["s"], axis=0, name="cut"),
             helper.make_node("SequenceLength", ["s"], ["n"])]
    m = dnnx.load(model_of(nodes, [vi("x", F, [3])], [vi("n", I64, [])]))
    with pytest.raises(dnnx.InvalidModelError, match=r"node 'cut' \(SplitToSequence\): split sizes sum to 2, but the "
                                                      r"input \[3\] float32 has 3 along axis 0"):
        m.run(np.zeros(3, np.float32))


def test_inserting_another_type_names_the_node():
    nodes = [helper.make_node("SequenceInsert", ["seq", "t"], ["out"], name="ins")]
    m = dnnx.load(model_of(nodes, [seq_vi("seq", F, [2]), vi("t", I64, [2])], [seq_vi("out")]))
    with pytest.raises(dnnx.InvalidModelError, match=r"node 'ins' \(SequenceInsert\): the inserted tensor \[2\] int64 "
                                                      r"must have the sequence's element type float32"):
        m.run([np.zeros(2, np.float32)], np.zeros(2, np.int64))


@pytest.mark.parametrize("axis,shape", [(1, (0, 4)), (0, (0, 4)), (0, (3, 0))])
def test_empty_tensors_and_sequences_against_onnxruntime(axis, shape):
    # Note [empty tensors]: pieces of an empty tensor (or no pieces: an empty sequence, whose
    # length is 0), then back; an insert into a sequence of empty tensors.
    nodes = [helper.make_node("SplitToSequence", ["x"], ["s"], axis=axis),
             helper.make_node("SequenceLength", ["s"], ["n"]),
             helper.make_node("SequenceInsert", ["s", "x"], ["s2"]),
             helper.make_node("SequenceLength", ["s2"], ["n2"]),
             helper.make_node("ConcatFromSequence", ["s2"], ["y"], axis=axis)]
    model = model_of(nodes, [vi("x", F, list(shape))], [vi("n", I64, []), vi("n2", I64, []), vi("y"), seq_vi("s")])
    check(model, {"x": np.zeros(shape, np.float32)})
