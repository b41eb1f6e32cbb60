"""Empty tensors (a dim of 0 anywhere), issue #34: the crashes it fixed (SIGFPE in plan/memory at
batch 0 and in every CLI command on a model whose fixed 0 dim feeds a Conv), an empty batch
through LeNet and the LSTM example against onnxruntime, one case per op family against
onnxruntime (tests/test_empty_every_op.py runs every registered op), and what plan() says:
a layer whose outputs are all empty runs nothing (Note [empty tensors] in engine/runtime/planner.cc)."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import dnnx
from dnnx.cli import main
from dnnx.examples import build
from ort_check import make_model, rand, run_ort

EMPTY = "empty output: nothing to run"


def assert_like_ort(model, feeds, **load):
    want = run_ort(model, feeds)
    got = dnnx.load(model, **load).run_dict(feeds)
    assert set(got) == set(want)
    for name, ref in want.items():
        assert got[name].shape == ref.shape and got[name].dtype == ref.dtype, name
        np.testing.assert_allclose(got[name], ref, rtol=1e-4, atol=1e-5, equal_nan=True, err_msg=name)
    return got


# --- the crashes --------------------------------------------------------------------------------

def test_lenet_plans_and_sizes_an_empty_batch():
    m = dnnx.load(build("lenet"))
    table = m.plan(batch_size=0)
    assert list(table[0]["inputs"][0]) == [0, 1, 28, 28]
    assert all(EMPTY in row["algorithm"] or "view" in row["algorithm"] for row in table), str(table)
    memory = m.memory(batch_size=0)
    assert memory["arena_bytes"] == 0 and memory["naive_bytes"] == 0


def test_lenet_runs_an_empty_batch_as_onnxruntime_does():
    model = build("lenet")
    x = np.zeros((0, 1, 28, 28), np.float32)
    got = assert_like_ort(model, {model.graph.input[0].name: x})
    assert next(iter(got.values())).shape == (0, 10)
    m = dnnx.load(model, batch_size=0)
    assert m.inputs[0].shape == (0, 1, 28, 28) and m.run(x).shape == (0, 10)


def fixed_zero_conv_model():
    """x [0, 3, 8, 8] (a fixed 0 dim) -> Conv 3x3 -> Relu -> GlobalAveragePool -> Flatten."""
    w = rand(4, 3, 3, 3, seed=3)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("GlobalAveragePool", ["r"], ["g"]), helper.make_node("Flatten", ["g"], ["y"])]
    return make_model(nodes, [("x", [0, 3, 8, 8])], [("y", [0, 4])], {"w": w})


@pytest.mark.parametrize("command", [["info"], ["plan"], ["run", "--random"], ["profile", "--repeat", "2"],
                                     ["bench", "--batch", "0", "--iters", "2", "--warmup", "0"]])
def test_cli_on_a_fixed_zero_dim_feeding_a_conv(capsys, tmp_path, command):
    path = tmp_path / "zero.onnx"
    onnx.save(fixed_zero_conv_model(), path)
    status = main([command[0], str(path)] + command[1:])
    out = capsys.readouterr().out
    assert status == 0, out
    if command[0] == "plan":
        assert EMPTY in out
    if command[0] == "run":
        assert "y  float32  [0, 4]" in out


@pytest.mark.parametrize("command", [["plan"], ["run", "--random"], ["profile", "--repeat", "1"]])
def test_cli_batch_zero(capsys, tmp_path, command):
    path = tmp_path / "lenet.onnx"
    onnx.save(build("lenet"), path)
    status = main([command[0], str(path), "--batch", "0"] + command[1:])
    out = capsys.readouterr().out
    assert status == 0, out
    if command[0] == "run":
        assert "[0, 10]" in out


def test_dims_zero_plans_and_runs_an_empty_batch():
    # (onnxruntime 1.32 aborts the process on an LSTM over an empty batch: no oracle here)
    m = dnnx.load(build("lstm"), dims={"N": 0})
    assert m.inputs[0].shape == (16, 0, 8)
    x = np.zeros((16, 0, 8), np.float32)
    assert m.run(x).shape == (0, 10)
    assert dnnx.load(build("lstm")).run(x).shape == (0, 10)
    assert all(EMPTY in row["algorithm"] or "view" in row["algorithm"] for row in m.plan()), str(m.plan())


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
def test_recurrent_layers_over_an_empty_batch_or_sequence(op):
    """An empty batch: every output empty, nothing runs. An empty sequence: Y empty and Y_h zeros,
    whatever the initial state, as onnxruntime's forward LSTM and RNN give (no oracle in-process:
    it aborts on an empty batch and on GRU's empty sequence, and leaves a reverse LSTM's Y_c
    uninitialized; tests/empty_cases.py ORT_ABORTS)."""
    gates = {"LSTM": 4, "GRU": 3, "RNN": 1}[op]
    hidden = 4
    constants = {"w": rand(1, gates * hidden, 2), "r": rand(1, gates * hidden, hidden), "b": rand(1, 2 * gates * hidden),
                 "h0": rand(1, 3, hidden, seed=7)}
    node = helper.make_node(op, ["x", "w", "r", "b", "", "h0"], ["y", "h"], hidden_size=hidden)
    model = make_model([node], [("x", ["T", 3, 2])], [("y", None), ("h", None)], constants)
    x = np.zeros((0, 3, 2), np.float32)
    y, h = dnnx.load(model).run(x)
    assert y.shape == (0, 1, 3, hidden) and h.shape == (1, 3, hidden) and not h.any()
    node = helper.make_node(op, ["x", "w", "r", "b"], ["y", "h"], hidden_size=hidden)
    model = make_model([node], [("x", [5, "N", 2])], [("y", None), ("h", None)], constants)
    m = dnnx.load(model)
    y, h = m.run(np.zeros((5, 0, 2), np.float32))
    assert y.shape == (5, 1, 0, hidden) and h.shape == (1, 0, hidden)
    assert m.plan(batch_size=0)[0]["algorithm"] == EMPTY


def test_range_and_constant_of_shape_make_empty_tensors():
    nodes = [helper.make_node("Range", ["s", "l", "d"], ["r"]), helper.make_node("ConstantOfShape", ["shape"], ["c"]),
             helper.make_node("Concat", ["r", "x"], ["y"], axis=0), helper.make_node("Add", ["c", "c"], ["z"])]
    constants = {"s": np.array(3.0, np.float32), "l": np.array(3.0, np.float32), "d": np.array(1.0, np.float32),
                 "shape": np.array([0, 3], np.int64)}
    model = make_model(nodes, [("x", ["N"])], [("y", None), ("z", None)], constants)
    got = assert_like_ort(model, {"x": rand(4)})
    assert got["y"].shape == (4,) and got["z"].shape == (0, 3)


def test_group_normalization_over_an_empty_batch():
    # (onnxruntime refuses GroupNormalization over an empty batch: the result is the empty output)
    node = helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=2)
    model = make_model([node], [("x", ["N", 4, 3])], [("y", ["N", 4, 3])], {"s": rand(4), "b": rand(4)}, opset=21)
    m = dnnx.load(model)
    assert m.run(np.zeros((0, 4, 3), np.float32)).shape == (0, 4, 3)
    assert m.plan(batch_size=0)[0]["algorithm"] == EMPTY


def test_layer_normalization_over_no_elements_is_refused_naming_the_node():
    # shape[axis:] holds nothing: no mean or variance (onnxruntime refuses it too: "Size of
    # X.shape[axis:] must be at least 1"); the CPU once returned an uninitialized InvStdDev here
    node = helper.make_node("LayerNormalization", ["x", "s"], ["y", "mean", "inv"], axis=0, name="ln")
    model = make_model([node], [("x", [0, 4])], [("y", None), ("mean", None), ("inv", None)],
                       {"s": np.zeros((0, 4), np.float32)}, opset=17)
    with pytest.raises(dnnx.InvalidModelError, match=r"node 'ln' \(LayerNormalization\): X \[0,4\] has no elements "
                                                     r"to normalize over"):
        dnnx.load(model).run(np.zeros((0, 4), np.float32))


# --- one case per op family ---------------------------------------------------------------------

def _reduce(op, axes, keepdims=1):
    return (op, [helper.make_node(op, ["x", "axes"] if op == "ReduceSum" else ["x"], ["y"], keepdims=keepdims,
                                  **({} if op == "ReduceSum" else {"axes": axes}))],
            [("x", [2, 0, 3])], {"axes": np.array(axes, np.int64)} if op == "ReduceSum" else {},
            {"x": np.zeros((2, 0, 3), np.float32)})


FAMILY_CASES = [
    # conv: an empty batch, and no input channels (the output is the bias)
    ("conv, empty batch", [helper.make_node("Conv", ["x", "w", "b"], ["y"], pads=[1, 1, 1, 1])], [("x", [0, 2, 5, 5])],
     {"w": rand(3, 2, 3, 3), "b": rand(3)}, {"x": np.zeros((0, 2, 5, 5), np.float32)}),
    ("conv, no input channels", [helper.make_node("Conv", ["x", "w", "b"], ["y"])], [("x", [1, 0, 5, 5])],
     {"w": np.zeros((3, 0, 3, 3), np.float32), "b": rand(3)}, {"x": np.zeros((1, 0, 5, 5), np.float32)}),
    # dense: K = 0 gives zeros (+ Gemm's C), M = 0 an empty output
    ("matmul K=0", [helper.make_node("MatMul", ["x", "w"], ["y"])], [("x", [4, 0])], {"w": np.zeros((0, 5), np.float32)},
     {"x": np.zeros((4, 0), np.float32)}),
    ("batched matmul K=0", [helper.make_node("MatMul", ["x", "w"], ["y"])], [("x", [2, 4, 0])],
     {"w": np.zeros((2, 0, 5), np.float32)}, {"x": np.zeros((2, 4, 0), np.float32)}),
    ("gemm K=0 with C", [helper.make_node("Gemm", ["x", "w", "c"], ["y"], beta=2.0)], [("x", [4, 0])],
     {"w": np.zeros((0, 5), np.float32), "c": rand(5)}, {"x": np.zeros((4, 0), np.float32)}),
    ("gemm M=0", [helper.make_node("Gemm", ["x", "w", "c"], ["y"], transB=1)], [("x", [0, 6])],
     {"w": rand(5, 6), "c": rand(5)}, {"x": np.zeros((0, 6), np.float32)}),
    # elementwise, broadcast against an empty dim
    ("add broadcast", [helper.make_node("Add", ["x", "b"], ["y"])], [("x", [0, 3])], {"b": rand(3)},
     {"x": np.zeros((0, 3), np.float32)}),
    ("where", [helper.make_node("Greater", ["x", "z"], ["m"]), helper.make_node("Where", ["m", "x", "z"], ["y"])],
     [("x", [3, 0])], {"z": np.zeros((1, 0), np.float32)}, {"x": np.zeros((3, 0), np.float32)}),
    # normalization
    ("batchnorm", [helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"])], [("x", [0, 2, 3, 3])],
     {"s": rand(2), "b": rand(2), "m": rand(2), "v": np.ones(2, np.float32)}, {"x": np.zeros((0, 2, 3, 3), np.float32)}),
    ("softmax", [helper.make_node("Softmax", ["x"], ["y"], axis=1)], [("x", [2, 0, 3])], {},
     {"x": np.zeros((2, 0, 3), np.float32)}),
    ("layernorm, empty rows", [helper.make_node("LayerNormalization", ["x", "s"], ["y"], axis=-1)], [("x", [0, 3])],
     {"s": rand(3)}, {"x": np.zeros((0, 3), np.float32)}),
    # reduce: each over an empty axis gives its identity (onnxruntime's: Max -inf, Min inf, Mean 0)
    _reduce("ReduceSum", [1]), _reduce("ReduceSum", [1], keepdims=0), _reduce("ReduceMean", [1]),
    _reduce("ReduceMax", [1]), _reduce("ReduceMin", [1]), _reduce("ReduceProd", [1]), _reduce("ReduceL2", [1]),
    _reduce("ReduceMean", [0]),
    # layout
    ("concat with an empty input", [helper.make_node("Concat", ["x", "c"], ["y"], axis=0)], [("x", [0, 3])],
     {"c": rand(2, 3)}, {"x": np.zeros((0, 3), np.float32)}),
    ("pad an empty tensor", [helper.make_node("Pad", ["x", "p", "v"], ["y"])], [("x", [0, 3])],
     {"p": np.array([1, 0, 1, 1], np.int64), "v": np.array(5.0, np.float32)}, {"x": np.zeros((0, 3), np.float32)}),
    ("expand to an empty dim", [helper.make_node("Expand", ["x", "s"], ["y"])], [("x", [1, 3])],
     {"s": np.array([0, 3], np.int64)}, {"x": rand(1, 3)}),
    ("transpose", [helper.make_node("Transpose", ["x"], ["y"], perm=[1, 0])], [("x", [0, 3])], {},
     {"x": np.zeros((0, 3), np.float32)}),
    ("slice to empty", [helper.make_node("Slice", ["x", "s", "e"], ["y"])], [("x", [4, 3])],
     {"s": np.array([2], np.int64), "e": np.array([2], np.int64)}, {"x": rand(4, 3)}),
    ("split with an empty part", [helper.make_node("Split", ["x", "s"], ["y", "z"], axis=0)], [("x", [4, 3])],
     {"s": np.array([0, 4], np.int64)}, {"x": rand(4, 3)}),
    ("cast", [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.INT64)], [("x", [0, 3])], {},
     {"x": np.zeros((0, 3), np.float32)}),
    # shape
    ("reshape an empty batch", [helper.make_node("Reshape", ["x", "s"], ["y"])], [("x", [0, 2, 3])],
     {"s": np.array([0, 6], np.int64)}, {"x": np.zeros((0, 2, 3), np.float32)}),
    ("shape of an empty tensor", [helper.make_node("Shape", ["x"], ["s"]),
                                  helper.make_node("Cast", ["s"], ["y"], to=TensorProto.FLOAT)],
     [("x", [0, 3])], {}, {"x": np.zeros((0, 3), np.float32)}),
    ("constant of an empty shape", [helper.make_node("ConstantOfShape", ["s"], ["c"]),
                                    helper.make_node("Add", ["x", "c"], ["y"])],
     [("x", [0, 3])], {"s": np.array([0, 3], np.int64)}, {"x": np.zeros((0, 3), np.float32)}),
    # indexing
    ("gather no indices", [helper.make_node("Gather", ["x", "i"], ["y"])], [("x", [4, 3])],
     {"i": np.zeros((0,), np.int64)}, {"x": rand(4, 3)}),
    ("gather from an empty batch", [helper.make_node("Gather", ["x", "i"], ["y"], axis=1)], [("x", [0, 3])],
     {"i": np.array([2, 0], np.int64)}, {"x": np.zeros((0, 3), np.float32)}),
    ("scatternd no updates", [helper.make_node("ScatterND", ["x", "i", "u"], ["y"])], [("x", [4, 3])],
     {"i": np.zeros((0, 1), np.int64), "u": np.zeros((0, 3), np.float32)}, {"x": rand(4, 3)}),
    ("tile", [helper.make_node("Tile", ["x", "r"], ["y"])], [("x", [0, 3])], {"r": np.array([2, 2], np.int64)},
     {"x": np.zeros((0, 3), np.float32)}),
    ("topk", [helper.make_node("TopK", ["x", "k"], ["y", "i"], axis=1)], [("x", [0, 5])],
     {"k": np.array([2], np.int64)}, {"x": np.zeros((0, 5), np.float32)}),
    # pool
    ("maxpool", [helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2])], [("x", [0, 2, 4, 4])], {},
     {"x": np.zeros((0, 2, 4, 4), np.float32)}),
    ("averagepool", [helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[2, 2])], [("x", [0, 2, 4, 4])], {},
     {"x": np.zeros((0, 2, 4, 4), np.float32)}),
    ("globalaveragepool", [helper.make_node("GlobalAveragePool", ["x"], ["y"])], [("x", [0, 2, 4, 4])], {},
     {"x": np.zeros((0, 2, 4, 4), np.float32)}),
    # resample
    ("resize", [helper.make_node("Resize", ["x", "", "s"], ["y"], mode="nearest")], [("x", [0, 2, 3, 3])],
     {"s": np.array([1, 1, 2, 2], np.float32)}, {"x": np.zeros((0, 2, 3, 3), np.float32)}),
    # rnn: test_recurrent_layers_over_an_empty_batch_or_sequence (onnxruntime is no oracle there)
]


@pytest.mark.parametrize("case", FAMILY_CASES, ids=[c[0] for c in FAMILY_CASES])
def test_family_case_matches_onnxruntime(case):
    _, nodes, inputs, constants, feeds = case
    outputs = [(o, None) for o in nodes[-1].output]
    if nodes[-1].op_type == "TopK":
        outputs = [("y", None), ("i", None, TensorProto.INT64)]
    if nodes[-1].op_type == "Cast":
        outputs = [("y", None, nodes[-1].attribute[0].i)]
    model = make_model(nodes, inputs, outputs, constants)
    assert_like_ort(model, feeds)


def test_reductions_give_their_identities():
    """The identities themselves (what onnxruntime 1.32 gives), not only agreement."""
    x = np.zeros((2, 0, 3), np.float32)
    want = {"ReduceSum": 0.0, "ReduceMean": 0.0, "ReduceProd": 1.0, "ReduceMax": -np.inf, "ReduceMin": np.inf,
            "ReduceL2": 0.0}
    for op, value in want.items():
        _, nodes, inputs, constants, _ = _reduce(op, [1])
        y = dnnx.load(make_model(nodes, inputs, [("y", None)], constants)).run(x)
        assert y.shape == (2, 1, 3) and np.all(y == value), (op, y)


def test_plan_shows_empty_layers_and_runs_the_rest():
    """Concat of an empty input with a constant: the Concat runs (non-empty output), the Relu
    before it has nothing to run."""
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Concat", ["r", "c"], ["y"], axis=0)]
    model = make_model(nodes, [("x", ["N", 3])], [("y", None)], {"c": rand(2, 3)})
    table = dnnx.load(model).plan(batch_size=0)
    assert [row["op"] for row in table] == ["Relu", "Concat"]
    assert table[0]["algorithm"] == EMPTY and table[1]["algorithm"] != EMPTY, str(table)
    assert list(table[1]["outputs"][0]) == [2, 3]


# --- the batch rule -----------------------------------------------------------------------------

def test_lstm_batch_binds_n_everywhere(capsys, tmp_path):
    """The LSTM example's input is [16, N, 8]: its leading dim is fixed (and not 1), so the batch
    binds its only symbolic dim, in load, plan, memory and the CLI alike."""
    model = build("lstm")
    assert dnnx.load(model, batch_size=4).inputs[0].shape == (16, 4, 8)
    m = dnnx.load(model)
    assert list(m.plan(batch_size=4)[0]["inputs"][0]) == [16, 4, 8]
    assert m.memory(batch_size=4) == dnnx.load(model, batch_size=4).memory()
    path = tmp_path / "lstm.onnx"
    onnx.save(model, path)
    assert main(["plan", str(path), "--batch", "4"]) == 0
    assert "16x4x8" in capsys.readouterr().out


@pytest.mark.parametrize("value", [-1, 2.5, True, "2"])
@pytest.mark.parametrize("call", ["plan", "memory", "load"])
def test_a_bad_batch_size_is_a_value_error_naming_it(call, value):
    model = build("lenet")
    with pytest.raises(ValueError, match=r"batch_size must be an int >= 0 \(0: an empty batch\), got"):
        if call == "load":
            dnnx.load(model, batch_size=value)
        else:
            getattr(dnnx.load(model), call)(batch_size=value)


def test_an_ambiguous_batch_dim_says_to_use_dims():
    nodes = [helper.make_node("Relu", ["x"], ["y"])]
    model = make_model(nodes, [("x", [3, "T", "N"])], [("y", [3, "T", "N"])])
    with pytest.raises(ValueError, match=r"input 'x' \[3, T, N\].*dims="):
        dnnx.load(model, batch_size=2)
    with pytest.raises(ValueError, match=r"input 'x' \[3, T, N\].*dims="):
        dnnx.load(model).plan(batch_size=2)
    assert dnnx.load(model, dims={"N": 2, "T": 0}).inputs[0].shape == (3, 0, 2)


def test_a_fixed_model_refuses_another_batch():
    m = dnnx.load(build("lenet"), batch_size=8)
    with pytest.raises(ValueError, match=r"batch_size=4: no input dim takes a batch"):
        m.plan(batch_size=4)
    assert list(m.plan(batch_size=8)[0]["inputs"][0]) == [8, 1, 28, 28]


def test_a_named_batch_binds_every_input_and_output_sharing_it():
    nodes = [helper.make_node("Add", ["x", "z"], ["y"])]
    model = make_model(nodes, [("x", ["N", 3]), ("z", [1, "N", 3])], [("y", [1, "N", 3])])
    m = dnnx.load(model, batch_size=5)
    # x binds its leading N, z its leading 1; N is then 5 in z and in the output too
    assert m.inputs[0].shape == (5, 3) and m.inputs[1].shape == (5, 5, 3) and m.outputs[0].shape[1:] == (5, 3)
    assert m.run(rand(5, 3), rand(5, 5, 3)).shape == (5, 5, 3)
    assert [list(s) for s in dnnx.load(model).plan(batch_size=5)[0]["inputs"]] == [[5, 3], [5, 5, 3]]


def test_global_pools_over_an_empty_plane_read_nothing():
    # [1, 3, 5, 0]: each plane is empty. Max starts at the lowest float as onnxruntime's pools do
    # (it read one element past the plane before: garbage on the CPU, a segfault in a CUDA host
    # fallback); the average is 0 / 0.
    from onnx import helper

    from ort_check import make_model

    x = np.zeros((1, 3, 5, 0), np.float32)
    for op, want in (("GlobalMaxPool", np.finfo(np.float32).min), ("GlobalAveragePool", np.nan)):
        model = make_model([helper.make_node(op, ["x"], ["y"])], [("x", [1, 3, 5, 0])], [("y", [1, 3, 1, 1])])
        np.testing.assert_array_equal(dnnx.load(model).run(x), np.full((1, 3, 1, 1), want, np.float32))
