"""Import-time work on the graph: Reshape targets that carry an exported batch of 1 follow
batch_size, Constant nodes become constants, and opset 6 models are upgraded with onnx's version
converter. Shape chains (PyTorch's Shape -> Gather -> Unsqueeze -> Concat -> Reshape) are not
folded at import any more but per plan (Note [plan-time folding]): they still cost nothing at
run time, with batch_size or without."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import dnnx
from ort_check import assert_matches_ort, make_model, rand, run_ort

SHAPE_CHAIN_OPS = {"Shape", "Gather", "Unsqueeze", "Concat"}
FOLDED = "folded at plan time"


def run_ops(model, **load_args) -> list:
    """The ops of the plan's layers that run (not folded at plan time, not views)."""
    rows = dnnx.load(model, **load_args).plan()
    return [r["op"] for r in rows if not r["algorithm"].startswith(FOLDED)]


def const(name, value):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.asarray(value), name))


def pytorch_flatten_model(batch="N", opset=13):
    """What torch.onnx.export writes for ``x = conv(x); x.view(x.size(0), -1); fc(x)``."""
    rng = np.random.default_rng(0)
    unsqueeze = (helper.make_node("Unsqueeze", ["n", "axes0"], ["n1"]) if opset >= 13 else
                 helper.make_node("Unsqueeze", ["n"], ["n1"], axes=[0]))
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], name="conv"),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("Shape", ["r"], ["s"], name="shape"),
        const("idx0", np.array(0, np.int64)),
        helper.make_node("Gather", ["s", "idx0"], ["n"], axis=0, name="gather"),
        *([const("axes0", np.array([0], np.int64))] if opset >= 13 else []),
        unsqueeze,
        const("minus1", np.array([-1], np.int64)),
        helper.make_node("Concat", ["n1", "minus1"], ["target"], axis=0, name="concat"),
        helper.make_node("Reshape", ["r", "target"], ["flat"], name="flatten"),
        helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["y"], transB=1, name="fc"),
    ]
    inits = {"w": rng.standard_normal((4, 3, 3, 3)).astype(np.float32),
             "b": rng.standard_normal(4).astype(np.float32),
             "fc_w": rng.standard_normal((5, 4 * 6 * 6)).astype(np.float32) * 0.1,
             "fc_b": rng.standard_normal(5).astype(np.float32)}
    return make_model(nodes, [("x", [batch, 3, 6, 6])], [("y", [batch, 5])], inits, opset=opset)


@pytest.mark.parametrize("opset", [11, 13])
@pytest.mark.parametrize("batch", [1, 8])
def test_shape_chain_folds_with_batch_size(opset, batch):
    model = pytorch_flatten_model(opset=opset)
    assert_matches_ort(model, {"x": rand(batch, 3, 6, 6)}, batch_size=batch)
    ops = run_ops(model, batch_size=batch)
    assert not SHAPE_CHAIN_OPS & set(ops), ops
    assert "Reshape" in ops and "Constant" not in ops


def test_shape_chain_folds_for_a_fixed_batch():
    model = pytorch_flatten_model(batch=4)
    assert_matches_ort(model, {"x": rand(4, 3, 6, 6)})
    assert not SHAPE_CHAIN_OPS & set(run_ops(model))


def test_shape_chain_with_a_symbolic_batch_folds_when_planned():
    # No batch_size: the chain folds per input shape (Note [plan-time folding]), at any batch.
    model = pytorch_flatten_model()
    sample = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim][1:]
    for batch in (1, 3):
        assert_matches_ort(model, {"x": rand(batch, *sample, seed=batch)})


def test_shape_of_a_symbolic_tensor_and_of_a_fixed_one_fold_per_plan():
    nodes = [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Cast", ["s"], ["y"], to=TensorProto.FLOAT)]
    model = make_model(nodes, [("x", ["N", 3])], [("y", [2])])
    dynamic = dnnx.load(model)
    assert [row["op"] for row in dynamic.plan()] == ["Shape", "Cast"]
    np.testing.assert_array_equal(dynamic.run(rand(5, 3)), [5.0, 3.0])
    fixed = dnnx.load(model, batch_size=7)
    assert run_ops(model, batch_size=7) == []  # Shape, then the Cast of it: both folded, nothing runs
    np.testing.assert_array_equal(fixed.run(rand(7, 3)), [7.0, 3.0])


# --- batch_size through Reshape targets that carry an exported batch of 1 -----------------------

@pytest.mark.parametrize("target", [[1, 36], [1, -1]])
def test_batch_size_follows_a_reshape_that_baked_batch_1(target):
    nodes = [helper.make_node("Relu", ["x"], ["r"]),
             helper.make_node("Reshape", ["r", "target"], ["flat"], name="flatten"),
             helper.make_node("Gemm", ["flat", "w"], ["y"], transB=1)]
    inits = {"target": np.array(target, np.int64), "w": rand(3, 36, seed=2)}
    model = make_model(nodes, [("x", [1, 4, 3, 3])], [("y", [1, 3])], inits)
    x = rand(6, 4, 3, 3)
    one = dnnx.load(model)
    want = np.concatenate([one.run(x[i:i + 1]) for i in range(6)])
    got = dnnx.load(model, batch_size=6).run(x)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_reshape_of_a_weight_keeps_its_target():
    # A weight whose leading dim is 1 is not batch data: its Reshape target stays [1, ...].
    nodes = [helper.make_node("Reshape", ["x0", "t0"], ["x"]),
             helper.make_node("Reshape", ["w", "tw"], ["w2"]),
             helper.make_node("MatMul", ["x", "w2"], ["y"])]
    inits = {"w": rand(1, 80, 10, seed=3), "tw": np.array([1, 80, 10], np.int64),
             "t0": np.array([1, 1, 80], np.int64)}
    model = make_model(nodes, [("x0", [1, 80])], [("y", [1, 1, 10])], inits)
    x = rand(4, 80)
    got = dnnx.load(model, batch_size=4).run(x)
    np.testing.assert_allclose(got, (x @ inits["w"][0])[:, None, :], rtol=1e-5, atol=1e-5)


# --- opset 6 models are upgraded at import ------------------------------------------------------

def test_opset_6_model_is_upgraded():
    rng = np.random.default_rng(0)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[3, 3]),
             helper.make_node("BatchNormalization", ["c", "s", "b", "m", "v"], ["bn"], is_test=1, epsilon=1e-3),
             helper.make_node("Relu", ["bn"], ["r"]),
             helper.make_node("Sum", ["r", "r2"], ["y"])]
    nodes.insert(3, helper.make_node("Mul", ["r", "r"], ["r2"]))
    inits = {"w": rng.standard_normal((4, 2, 3, 3)).astype(np.float32),
             "s": rng.standard_normal(4).astype(np.float32), "b": rng.standard_normal(4).astype(np.float32),
             "m": rng.standard_normal(4).astype(np.float32), "v": rng.uniform(0.5, 1.5, 4).astype(np.float32)}
    graph = helper.make_graph(nodes, "old", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2, 5, 5])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4, 3, 3])],
                              [numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 6)])
    model.ir_version = 4  # initializers need not be graph inputs
    loaded = dnnx.load(model)
    assert loaded.opset >= 7
    x = rand(2, 2, 5, 5)
    want = run_ort(loaded.proto, {"x": x})["y"]  # onnxruntime on the upgraded model
    np.testing.assert_allclose(loaded.run(x), want, rtol=1e-4, atol=1e-5)
