"""Static shapes for import-time folding. With the batch size applied, PyTorch exports compute
their Reshape targets from ``Shape`` of tensors whose shapes are then fully known
(Shape -> Gather -> Unsqueeze -> Concat -> Reshape): folding ``Shape`` to a constant lets the
importer fold the whole chain, so it costs nothing at run time and the planner sees constant
shapes."""
from __future__ import annotations

import numpy as np
import onnx


def _dims(type_proto: onnx.TypeProto):
    """The dims as a tuple of ints when every one is a known value, else None."""
    if not type_proto.HasField("tensor_type") or not type_proto.tensor_type.HasField("shape"):
        return None
    dims = []
    for d in type_proto.tensor_type.shape.dim:
        if not d.HasField("dim_value"):
            return None
        dims.append(d.dim_value)
    return tuple(dims)


def static_shapes(model: onnx.ModelProto) -> dict:
    """{tensor name: dims} for every tensor whose shape onnx's shape inference knows fully, given
    the graph inputs as they stand (batch size applied). Value infos and output shapes stored in
    the file are dropped first: they may still hold the exporter's batch size."""
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    del probe.graph.value_info[:]
    for out in probe.graph.output:
        if out.type.HasField("tensor_type"):
            out.type.tensor_type.ClearField("shape")
    try:
        probe = onnx.shape_inference.infer_shapes(probe, strict_mode=False, data_prop=True)
    except Exception:  # a model onnx cannot infer keeps only its graph inputs' shapes
        pass
    shapes = {}
    for vi in list(probe.graph.input) + list(probe.graph.value_info) + list(probe.graph.output):
        dims = _dims(vi.type)
        if dims is not None:
            shapes[vi.name] = dims
    for t in probe.graph.initializer:
        shapes[t.name] = tuple(t.dims)
    return shapes


def fold_shape_node(node: onnx.NodeProto, dims: tuple):
    """Shape's output for an input of the given dims: int64 [k], the dims in [start, end)
    (opset 15; Python's slice clamps exactly as ONNX specifies)."""
    attrs = {a.name: a.i for a in node.attribute if a.type == onnx.AttributeProto.INT}
    start, end = attrs.get("start", 0), attrs.get("end", len(dims))
    return np.array(dims[start:end], dtype=np.int64)
