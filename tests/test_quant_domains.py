"""Op domains (Note [op domains] in engine/ir/graph.h): a model's opset_import per domain reaches
the engine, the ops dnnx knows of com.microsoft load, and every other op of a foreign domain is an
UnsupportedModelError naming the node, the op, its domain and opset."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import dnnx

MS = "com.microsoft"


def relu_model(opset_imports):
    node = helper.make_node("Relu", ["x"], ["y"], name="relu")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    return helper.make_model(graph, opset_imports=opset_imports)


def test_declared_domains_no_node_uses_are_accepted():
    # what onnxruntime's quantization tool writes: nine domains imported, only ai.onnx used
    imports = [helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 5),
               helper.make_opsetid("ai.onnx.training", 1), helper.make_opsetid("ai.onnx.preview", 1),
               helper.make_opsetid(MS, 1), helper.make_opsetid("com.microsoft.nchwc", 1),
               helper.make_opsetid("org.pytorch.aten", 1), helper.make_opsetid("org.example", 3)]
    m = dnnx.load(relu_model(imports))
    x = np.array([[-1, 2, -3], [4, -5, 6]], np.float32)
    np.testing.assert_array_equal(m.run(x), np.maximum(x, 0))


def qlinear_sigmoid_model(ms_version=1):
    node = helper.make_node("QLinearSigmoid", ["x", "xs", "xz", "ys", "yz"], ["y"], name="qsig", domain=MS)
    inits = [helper.make_tensor("xs", TensorProto.FLOAT, [], [0.05]), helper.make_tensor("xz", TensorProto.UINT8, [], [128]),
             helper.make_tensor("ys", TensorProto.FLOAT, [], [1 / 255]), helper.make_tensor("yz", TensorProto.UINT8, [], [0])]
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.UINT8, [2, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.UINT8, [2, 8])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS, ms_version)])


def test_a_com_microsoft_op_dnnx_knows_runs_and_plans_under_its_domain():
    import onnxruntime as ort

    model = qlinear_sigmoid_model()
    x = np.arange(16, dtype=np.uint8).reshape(2, 8) * 16
    m = dnnx.load(model)
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    got = m.run(x)
    assert got.dtype == np.uint8
    assert np.max(np.abs(got.astype(int) - want.astype(int))) <= 1  # one quantization step
    assert [row["op"] for row in m.plan()] == ["com.microsoft::QLinearSigmoid"]
    assert "com.microsoft::QLinearSigmoid" in dnnx.supported_ops()


def test_an_unknown_op_of_a_known_domain_names_node_op_domain_and_opset():
    node = helper.make_node("QAttention", ["x"], ["y"], name="qatt", domain=MS)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)])
    with pytest.raises(dnnx.UnsupportedModelError,
                       match=r"node 'qatt' \(com.microsoft::QAttention\): op QAttention \(domain com.microsoft, "
                             r"opset 1\) is not supported by dnnx; of domain 'com.microsoft' dnnx runs .*QGemm"):
        dnnx.load(model)


def test_an_unknown_domain_is_refused_naming_it():
    node = helper.make_node("Relu", ["x"], ["y"], name="r", domain="org.example")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("org.example", 4)])
    with pytest.raises(dnnx.UnsupportedModelError,
                       match=r"node 'r' \(org.example::Relu\): op Relu \(domain org.example, opset 4\) is not "
                             r"supported by dnnx; dnnx runs no op of domain 'org.example'"):
        dnnx.load(model)
