"""float64 and float16 graph inputs, outputs, initializers and Casts (issue #15), against
onnxruntime, which computes in the declared types. On the CPU they are engine dtypes (issue #35):
the ops without a kernel of their own type run a float32 kernel, converted at its edges
(Note [cpu dtypes]); on a device the importer converts at the graph's edges (_edges.py: its
conversions are checked here through import_model(float_edges=True)).

Tolerances: a float64 model computed in float32 agrees with onnxruntime's float64 to float32's
rounding (rtol 1e-5, atol 1e-6 on these small values); a float16 model agrees to float16's
(rtol 2e-3, atol 2e-3: one half-precision ulp at 1 is 9.8e-4)."""
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as T, helper, numpy_helper

import dnnx

F64, F16 = {"rtol": 1e-5, "atol": 1e-6}, {"rtol": 2e-3, "atol": 2e-3}


def _model(nodes, inputs, outputs, initializers=(), opset=17):
    graph = helper.make_graph(nodes, "edges", inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = min(model.ir_version, 10)  # onnxruntime may lag the onnx package
    return model


def _ort(model, feeds):
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def _mlp(elem_type, dtype):
    """x [N, 6] -> Gemm -> Relu -> MatMul -> Softmax, every value and weight of ``dtype``."""
    rng = np.random.default_rng(0)
    w1 = numpy_helper.from_array(rng.standard_normal((8, 6)).astype(dtype), "w1")
    b1 = numpy_helper.from_array(rng.standard_normal(8).astype(dtype), "b1")
    w2 = numpy_helper.from_array(rng.standard_normal((8, 4)).astype(dtype), "w2")
    nodes = [helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], transB=1),
             helper.make_node("Relu", ["h"], ["r"]),
             helper.make_node("MatMul", ["r", "w2"], ["logits"]),
             helper.make_node("Softmax", ["logits"], ["probs"], axis=-1)]
    return _model(nodes, [helper.make_tensor_value_info("x", elem_type, ["N", 6])],
                  [helper.make_tensor_value_info("probs", elem_type, ["N", 4]),
                   helper.make_tensor_value_info("logits", elem_type, ["N", 4])], [w1, b1, w2])


@pytest.mark.parametrize("elem_type,dtype,tol", [(T.DOUBLE, np.float64, F64), (T.FLOAT16, np.float16, F16)],
                         ids=["float64", "float16"])
def test_mlp_in_declared_dtype_matches_onnxruntime(elem_type, dtype, tol):
    model = _mlp(elem_type, dtype)
    m = dnnx.load(model)
    name = np.dtype(dtype).name
    assert [s.dtype for s in m.inputs] == [name]
    assert [s.dtype for s in m.outputs] == [name, name]
    x = np.random.default_rng(1).standard_normal((5, 6)).astype(dtype)
    got = m.run(x)
    want = _ort(model, {"x": x})
    for g, w in zip(got, want):
        assert g.dtype == np.dtype(dtype) and g.shape == w.shape
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), **tol)
    # by name, run_dict, a new batch: the same conversions
    by_name = m.run_dict({"x": x[:2]})
    assert by_name["probs"].dtype == np.dtype(dtype)
    np.testing.assert_allclose(by_name["logits"].astype(np.float64), want[1][:2].astype(np.float64), **tol)


def test_float16_conv_matches_onnxruntime():
    rng = np.random.default_rng(2)
    w = numpy_helper.from_array((rng.standard_normal((4, 3, 3, 3)) * 0.3).astype(np.float16), "w")
    b = numpy_helper.from_array(rng.standard_normal(4).astype(np.float16), "b")
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("MaxPool", ["r"], ["y"], kernel_shape=[2, 2], strides=[2, 2])]
    model = _model(nodes, [helper.make_tensor_value_info("x", T.FLOAT16, [2, 3, 8, 8])],
                   [helper.make_tensor_value_info("y", T.FLOAT16, [2, 4, 4, 4])], [w, b])
    x = rng.standard_normal((2, 3, 8, 8)).astype(np.float16)
    got = dnnx.load(model).run(x)
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float32), _ort(model, {"x": x})[0].astype(np.float32), **F16)


def test_casts_to_and_from_double_and_half_inside_a_float32_model():
    """float32 in and out; inside, Casts to DOUBLE and FLOAT16, a float64 Constant and a float64
    ConstantOfShape value: on the CPU each computed in its own type, so the results are onnxruntime's."""
    c = numpy_helper.from_array(np.array([0.5, -1.25, 2.0], np.float64), "c")
    nodes = [helper.make_node("Cast", ["x"], ["xd"], to=T.DOUBLE),
             helper.make_node("Constant", [], ["k"], value=c),
             helper.make_node("Mul", ["xd", "k"], ["p"]),
             helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("ConstantOfShape", ["s"], ["ones"],
                              value=numpy_helper.from_array(np.array([1.5], np.float64), "v")),
             helper.make_node("Add", ["p", "ones"], ["q"]),
             helper.make_node("Cast", ["q"], ["qh"], to=T.FLOAT16),
             helper.make_node("Cast", ["qh"], ["y"], to=T.FLOAT),
             helper.make_node("Cast", ["q"], ["i"], to=T.INT64)]
    model = _model(nodes, [helper.make_tensor_value_info("x", T.FLOAT, ["N", 3])],
                   [helper.make_tensor_value_info("y", T.FLOAT, ["N", 3]),
                    helper.make_tensor_value_info("i", T.INT64, ["N", 3])])
    m = dnnx.load(model)
    assert [s.dtype for s in m.outputs] == ["float32", "int64"]
    assert m.plan().notes == []  # nothing converted at the edges: the Casts are inside
    x = np.random.default_rng(3).standard_normal((4, 3)).astype(np.float32) * 3
    y, i = m.run(x)
    want_y, want_i = _ort(model, {"x": x})
    np.testing.assert_array_equal(y, want_y)  # q rounded to float16 before the last Cast, in both
    np.testing.assert_array_equal(i, want_i)


def test_float64_range_value_input():
    """Range's bounds are value inputs (they decide the shape): float64 ones are converted first."""
    nodes = [helper.make_node("Range", ["start", "limit", "delta"], ["r"]),
             helper.make_node("Mul", ["r", "r"], ["y"])]
    scalar = [helper.make_tensor_value_info(n, T.DOUBLE, []) for n in ("start", "limit", "delta")]
    model = _model(nodes, scalar, [helper.make_tensor_value_info("y", T.DOUBLE, None)])
    m = dnnx.load(model)
    feeds = {"start": np.float64(1.0), "limit": np.float64(4.5), "delta": np.float64(0.5)}
    feeds = {k: np.array(v) for k, v in feeds.items()}
    got = m.run(feeds)
    want = _ort(model, feeds)[0]
    assert got.dtype == np.float64 and got.shape == want.shape == (7,)
    np.testing.assert_allclose(got, want, **F64)


def test_cpu_plan_says_which_float64_layers_compute_in_float32():
    m = dnnx.load(_mlp(T.DOUBLE, np.float64))
    plan = m.plan(batch_size=2)
    assert plan.notes == []  # nothing converted at the graph's edges on the CPU
    assert all("float64 computed in float32" in row["algorithm"] for row in plan)


def test_device_import_converts_at_the_edges():
    """What a device model gets (python/dnnx/_edges.py): float32 inside, the declared types at the edges."""
    from dnnx._importer import import_model

    imported = import_model(_mlp(T.DOUBLE, np.float64), float_edges=True)
    assert imported.ir["inputs"][0][2] == "float32"
    assert all(v.dtype == np.float32 for v in imported.ir["constants"].values())
    assert imported.edges.notes() == ["x: float64 -> float32 at the input edge",
                                      "probs: float32 -> float64 at the output edge",
                                      "logits: float32 -> float64 at the output edge"]
    x = np.zeros((2, 6))
    assert imported.edges.to_engine(["x"], [x])[0].dtype == np.float32
    assert imported.edges.from_engine(["probs", "logits"], [np.zeros(2, np.float32)] * 2)[0].dtype == np.float64
    on_cpu = import_model(_mlp(T.DOUBLE, np.float64))
    assert on_cpu.ir["inputs"][0][2] == "float64" and not on_cpu.edges


def test_wrong_dtype_for_a_float64_input_names_it():
    m = dnnx.load(_mlp(T.DOUBLE, np.float64))
    with pytest.raises(ValueError, match=r"input 'x'.*float64.*float32"):
        m.run(np.zeros((2, 6), np.float32))
    assert m.run(np.zeros((2, 6), np.float64))[0].dtype == np.float64  # still usable


def test_float64_chunked_run_and_prepare():
    model = _mlp(T.DOUBLE, np.float64)
    m = dnnx.load(model)
    m.prepare([(3, 6)])  # zeros of the declared dtype, converted like a run's inputs
    x = np.random.default_rng(4).standard_normal((7, 6))
    probs, logits = m.run(x, chunk_size=3)
    assert probs.dtype == logits.dtype == np.float64
    np.testing.assert_allclose(logits, _ort(model, {"x": x})[1], **F64)


def test_a_device_import_makes_ai_onnx_ml_tensor_attributes_float32():
    # TreeEnsemble's splits and weights have X's type: a float64 model is float32 on a device
    # (python/dnnx/_edges.py), its attributes with it (the H200 run refused it: "nodes_splits is
    # float64, expected X's type float32")
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from node_suite import cases

    from dnnx._importer import import_model

    (case,) = [c for c in cases() if c.name == "test_ai_onnx_ml_tree_ensemble_single_tree"]
    attrs = import_model(case.model, float_edges=True).ir["nodes"][0][4]
    assert attrs["nodes_splits"][1].dtype == np.float32 and attrs["leaf_weights"][1].dtype == np.float32
    assert import_model(case.model).ir["nodes"][0][4]["nodes_splits"][1].dtype == np.float64  # the CPU keeps them
