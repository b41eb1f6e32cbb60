"""Shape computations folded when a plan is built (Note [plan-time folding] in
engine/runtime/plan_folding.h): a symbolic-batch export whose Reshape targets, channel shuffles
and zero states are computed from Shape(x) runs at any batch, against onnxruntime, and plans the
same kernels as the model with the batch fixed."""
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper

import dnnx
from ort_check import make_model, rand, run_ort

SHARED = Path(__file__).resolve().parents[2] / "shared" / "external" / "zoo"
I64 = TensorProto.INT64


def const(name, values):
    return helper.make_node("Constant", [], [name], value=helper.make_tensor(name, I64, [len(values)], values))


def flatten_by_shape(batch="N"):
    """x [N,3,4,4] -> Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])) -> Relu: PyTorch's
    x.view(x.size(0), -1)."""
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
             helper.make_node("Unsqueeze", ["n", "axes"], ["n1"]),
             const("minus_one", [-1]),
             helper.make_node("Concat", ["n1", "minus_one"], ["target"], axis=0),
             helper.make_node("Reshape", ["x", "target"], ["flat"]),
             helper.make_node("Relu", ["flat"], ["y"])]
    inits = {"zero": np.array(0, np.int64), "axes": np.array([0], np.int64)}
    return make_model(nodes, [("x", [batch, 3, 4, 4])], [("y", None)], inits)


def channel_shuffle(batch="N", groups=2):
    """ShuffleNetV2's shuffle: C and H, W from Shape(x); int64 Div gives C / groups; Reshape to
    [N, g, C/g, H, W], Transpose, Reshape back through Mul."""
    nodes = [helper.make_node("Shape", ["x"], ["s"])]
    for i, part in enumerate("nchw"):
        nodes += [helper.make_node("Gather", ["s", f"i{i}"], [part], axis=0)]
    nodes += [helper.make_node("Div", ["c", "g"], ["cg"]),
              helper.make_node("Mul", ["cg", "g"], ["c2"])]
    parts5 = ["n", "g", "cg", "h", "w"]
    nodes += [helper.make_node("Unsqueeze", [p, "axes"], [p + "_1"]) for p in parts5 + ["c2"]]
    nodes += [helper.make_node("Concat", [p + "_1" for p in parts5], ["t5"], axis=0),
              helper.make_node("Reshape", ["x", "t5"], ["x5"]),
              helper.make_node("Transpose", ["x5"], ["x5t"], perm=[0, 2, 1, 3, 4]),
              helper.make_node("Concat", ["n_1", "c2_1", "h_1", "w_1"], ["t4"], axis=0),
              helper.make_node("Reshape", ["x5t", "t4"], ["y"])]
    inits = {f"i{i}": np.array(i, np.int64) for i in range(4)}
    inits.update(g=np.array(groups, np.int64), axes=np.array([0], np.int64))
    return make_model(nodes, [("x", [batch, 4, 3, 3])], [("y", None)], inits)


def zero_state_plus(batch="N"):
    """y = x + ConstantOfShape(Shape(x)) of 0.5: an LSTM export's initial state, computed from x."""
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("ConstantOfShape", ["s"], ["z"],
                              value=helper.make_tensor("v", TensorProto.FLOAT, [1], [0.5])),
             helper.make_node("Add", ["x", "z"], ["y"])]
    return make_model(nodes, [("x", [batch, 5])], [("y", None)])


@pytest.mark.parametrize("build", [flatten_by_shape, channel_shuffle, zero_state_plus])
def test_symbolic_batch_runs_at_any_batch(build):
    model = build()
    m = dnnx.load(model)
    shape = [d.dim_value or 1 for d in model.graph.input[0].type.tensor_type.shape.dim]
    for batch in (1, 2, 5):
        x = rand(batch, *shape[1:], seed=batch)
        want = run_ort(model, {"x": x})["y"]
        got = m.run(x)
        np.testing.assert_array_equal(got, want)  # data movement and one exact add: bit for bit


def test_the_shape_computation_runs_nothing_per_call():
    rows = dnnx.load(channel_shuffle()).plan(batch_size=3)
    folded = [r["name"] for r in rows if r["algorithm"].startswith("folded at plan time")]
    assert len(folded) >= 10, rows
    run = [r["op"] for r in rows if not r["algorithm"].startswith(("folded", "view"))]
    assert run == ["Transpose"], rows


@pytest.mark.parametrize("build", [flatten_by_shape, channel_shuffle])
def test_symbolic_batch_plans_the_same_kernels_as_a_fixed_one(build):
    def kernels(model, batch):
        return [(r["op"], r["algorithm"]) for r in dnnx.load(model).plan(batch_size=batch)
                if not r["algorithm"].startswith("folded")]
    for batch in (1, 4):
        assert kernels(build(), batch) == kernels(build(batch), batch)


def test_integer_arithmetic_on_the_cpu():
    # Div truncates toward zero (as onnxruntime), and a zero divisor gives 0 instead of a crash.
    a = np.array([7, -7, 9, 5], np.int64)
    b = np.array([2, 2, -4, 0], np.int64)
    model = make_model([helper.make_node("Div", ["a", "b"], ["y"])], [("a", [4], I64), ("b", [4], I64)],
                       [("y", None, I64)])
    got = dnnx.load(model).run_dict({"a": a, "b": b})["y"]
    np.testing.assert_array_equal(got[:3], np.array([3, -3, -2]))
    assert got[3] == 0
    for op, fn in [("Add", np.add), ("Sub", np.subtract), ("Mul", np.multiply)]:
        model = make_model([helper.make_node(op, ["a", "b"], ["y"])], [("a", [4], I64), ("b", [4], I64)],
                           [("y", None, I64)])
        np.testing.assert_array_equal(dnnx.load(model).run_dict({"a": a, "b": b})["y"], fn(a, b))


def test_a_value_computed_from_data_joins_the_plan_key():
    # Reshape's target computed from x's values (not its shape): x is a value input (Note [value
    # inputs]); each value of x plans anew, computed on the host.
    nodes = [helper.make_node("Cast", ["x"], ["xi"], to=I64),
             helper.make_node("Reshape", ["x", "xi"], ["y"])]
    model = make_model(nodes, [("x", [2])], [("y", ["a", "b"])])
    m = dnnx.load(model)
    assert m.value_inputs == ["x"]
    for x in ([1.0, 2.0], [2.0, 1.0], [1.0, 2.0]):
        x = np.array(x, np.float32)
        np.testing.assert_array_equal(m.run(x), run_ort(model, {"x": x})["y"])
    assert m.planner_stats()["plans_built"] == 2


def zoo(name):
    path = SHARED / f"{name}.onnx"
    if not path.is_file():
        pytest.skip(f"{path} is not here (the shared zoo models are optional)")
    import sys
    sys.path.insert(0, str(SHARED))
    import zoo_models
    return zoo_models.materialized(str(path))


@pytest.mark.parametrize("name", ["lstm_bi", "shufflenet_v2_x1_0"])
def test_dynamic_batch_zoo_exports_match_onnxruntime(name):
    model = zoo(name)
    m = dnnx.load(model)
    inp = model.graph.input[0]
    dims = [d.dim_value if d.HasField("dim_value") else None for d in inp.type.tensor_type.shape.dim]
    for batch in (1, 2, 5):
        shape = [batch if d is None else d for d in dims]
        x = rand(*shape, seed=batch)
        want = run_ort(model, {inp.name: x})
        got = m.run_dict({inp.name: x})
        for out, value in want.items():
            np.testing.assert_allclose(got[out], value, rtol=1e-4, atol=1e-5, err_msg=f"{name} batch {batch} {out}")


def fixed_batch(model, batch):
    """The same export with its batch fixed: the graph input's first dim set to `batch`."""
    import onnx

    fixed = onnx.ModelProto()
    fixed.CopyFrom(model)
    first = fixed.graph.input[0].type.tensor_type.shape.dim[0]
    first.Clear()
    first.dim_value = batch
    return fixed


def kernel_rows(model, batch, **load_args):
    """(name, op, algorithm, math) of every layer that runs a kernel, planned at `batch` (a choice
    the plan cache gave is the same choice: algo_search="auto" times large fp32 convs)."""
    rows = dnnx.load(model, **load_args).plan(batch_size=batch)
    return [(r["name"], r["op"], r["algorithm"].replace(" (plan cache)", ""), r["math"]) for r in rows
            if not r["algorithm"].startswith(("folded", "view"))]


@pytest.mark.parametrize("name", ["shufflenet_v2_x1_0", "resnet18"])
def test_a_symbolic_batch_export_plans_as_a_fixed_one(name):
    model = zoo(name)
    for batch in (1, 64):
        assert kernel_rows(model, batch) == kernel_rows(fixed_batch(model, batch), batch), f"{name} batch {batch}"


def test_constant_nodes_fold_once_at_load():
    # A node whose inputs are all graph constants is evaluated by the engine at load (before the
    # passes): it is gone from every plan. The IR is built by hand, past the importer.
    from dnnx._native import core

    ir = {"opset": 17, "inputs": [("x", [2, 3], "float32")], "outputs": ["y"],
          "constants": {"a": np.full((2, 3), 2.0, np.float32), "b": np.arange(6, dtype=np.float32).reshape(2, 3)},
          "nodes": [("Mul", "scale", ["a", "b"], ["ab"], {}), ("Add", "add", ["x", "ab"], ["y"], {})]}
    engine = core.Engine(ir, "cpu", {}, passes={})
    assert [r["name"] for r in engine.plan()] == ["add"]
    x = rand(2, 3, seed=7)
    np.testing.assert_array_equal(engine.run([x], "numpy")[0], x + 2.0 * np.arange(6, dtype=np.float32).reshape(2, 3))
