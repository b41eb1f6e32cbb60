"""Shared helpers of the tests/test_quant_*.py files: one-node models, onnxruntime's outputs (onnx's
reference evaluator where onnxruntime has no kernel for the case), and the integer comparison."""
import numpy as np
from onnx import TensorProto, helper, numpy_helper

import dnnx
from ort_check import ort_int8_exact, unsigned_weights

MS = "com.microsoft"
# the ops whose 8-bit products onnxruntime's MLAS computes (saturating on AVX2 without VNNI)
INTEGER_PRODUCTS = {"MatMulInteger", "ConvInteger", "QLinearConv", "QLinearMatMul", "QGemm", "MatMulIntegerToFloat",
                    "DynamicQuantizeMatMul", "DynamicQuantizeLSTM"}


def node_model(op, inputs, outputs, opset=21, domain="", out_types=None, node_attrs=None, **attrs):
    """A model of one node. inputs: [(name, array or (elem_type, shape))] — an array is an
    initializer, a (type, shape) a graph input, "" an omitted input; outputs: names, their types
    from onnx's shape inference, or out_types ((onnx TensorProto code, shape) each: com.microsoft's ops);
    node_attrs: attributes whose names clash with these arguments (QLinearSoftmax's opset)."""
    from onnx import shape_inference

    graph_inputs, initializers, names = [], [], []
    for name, value in inputs:
        names.append(name)
        if name == "":
            continue
        if isinstance(value, (np.ndarray, np.generic)):
            initializers.append(numpy_helper.from_array(np.asarray(value), name))
        else:
            graph_inputs.append(helper.make_tensor_value_info(name, value[0], value[1]))
    node = helper.make_node(op, names, outputs, name="n", domain=domain, **attrs, **(node_attrs or {}))
    types = out_types or [TensorProto.UNDEFINED] * len(outputs)
    graph = helper.make_graph([node], "g", graph_inputs,
                              [helper.make_tensor_value_info(o, *(t if isinstance(t, tuple) else (t, None)))
                               for o, t in zip(outputs, types)],
                              initializers)
    imports = [helper.make_opsetid("", opset)] + ([helper.make_opsetid(domain, 1)] if domain else [])
    model = helper.make_model(graph, opset_imports=imports)
    return model if out_types else shape_inference.infer_shapes(model, strict_mode=True)


def reference_outputs(model, feeds):
    """onnxruntime's outputs; onnx's reference evaluator's where onnxruntime cannot run the model,
    or where its uint8 x int8 products saturate on this CPU (ort_int8_exact) and the model's int8
    weights meet uint8 (or dynamically quantized float) activations: then onnx's evaluator for
    ai.onnx ops, and for com.microsoft ones onnxruntime on the same model with its weights made
    uint8 (unsigned_weights), whose products are exact."""
    import onnxruntime as ort

    saturates = (not ort_int8_exact() and any(n.op_type in INTEGER_PRODUCTS for n in model.graph.node)
                 and any(t.data_type == TensorProto.INT8 for t in model.graph.initializer)
                 and not any(np.asarray(v).dtype == np.int8 for v in feeds.values()))
    if saturates and all(n.domain in ("", "ai.onnx") for n in model.graph.node):
        from onnx.reference import ReferenceEvaluator

        return ReferenceEvaluator(model).run(None, feeds), "reference"
    if saturates:
        model = unsigned_weights(model)
    try:
        sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        return sess.run(None, feeds), "onnxruntime"
    except Exception:  # noqa: BLE001 - NOT_IMPLEMENTED and friends: the spec's own reference then
        from onnx.reference import ReferenceEvaluator

        return ReferenceEvaluator(model).run(None, feeds), "reference"


def as_int(a):
    """Integer view of a quantized array (int4/uint4/float8 arrays of ml_dtypes included)."""
    a = np.asarray(a)
    if a.dtype.kind in "iub":
        return a.astype(np.int64)
    if a.dtype.itemsize == 1 and a.dtype.kind == "V" or str(a.dtype).startswith(("int4", "uint4")):
        return a.astype(np.int64)
    return a.view(np.uint8).astype(np.int64) if a.dtype.itemsize == 1 else a


def run_dnnx(model, feeds):
    m = dnnx.load(model)
    return m.run_dict(feeds), m
