"""A weight-free view of a model: what onnx's checker and shape inference read, at a fraction of
the model's bytes (both take serialized bytes: over a 100 MB model that serialization alone cost
0.25 s, and shape inference walked every weight).

The view shares the model's nodes, inputs and outputs (copied: nodes are small), and keeps the
initializers that shape inference needs as values (small integer tensors: Reshape targets, axes,
pads). Every other initializer, and every Constant node holding one, becomes a graph input of the
same element type and shape: the checker and shape inference see the same types and shapes, and
the weights' bytes stay in the model. Value infos are dropped (they may carry the exporter's batch).
"""
from __future__ import annotations

import numpy as np

from ._onnx import check_model, infer_shapes, protos, validation_errors
from ._tensors import INT32, INT64
from .errors import InvalidModelError, UnsupportedModelError

SMALL_INT_ELEMENTS = 64  # integer tensors up to this size stay values: shapes, axes, pads, indices


def _is_shape_like(tensor) -> bool:
    return tensor.data_type in (INT32, INT64) and int(np.prod(tensor.dims, dtype=np.int64)) <= SMALL_INT_ELEMENTS


def _input_like(graph, name: str, tensor) -> None:
    vi = graph.input.add()
    vi.name = name
    tt = vi.type.tensor_type
    tt.elem_type = tensor.data_type
    tt.shape.SetInParent()  # a scalar has a shape too: one without dims
    for d in tensor.dims:
        tt.shape.dim.add().dim_value = d


def weight_free_view(model):
    """A new ModelProto: ``model`` without the bytes of its weights (see the module's docstring)."""
    if len(model.graph.sparse_initializer):
        raise UnsupportedModelError("sparse initializers are not supported")
    view = protos().ModelProto()
    view.ir_version = model.ir_version
    view.opset_import.extend(model.opset_import)
    view.functions.extend(model.functions)
    graph, source = view.graph, model.graph
    graph.name = source.name
    graph.input.extend(source.input)
    graph.output.extend(source.output)
    declared = {vi.name for vi in source.input}
    for tensor in source.initializer:
        if _is_shape_like(tensor):
            graph.initializer.append(tensor)
        elif tensor.name not in declared:  # IR < 4 lists every initializer as an input already
            _input_like(graph, tensor.name, tensor)
    for node in source.node:
        if node.op_type == "Constant" and node.domain in ("", "ai.onnx") and _holds_weight(node):
            _input_like(graph, node.output[0], node.attribute[0].t)
        else:
            graph.node.append(node)
    return view


def _holds_weight(node) -> bool:
    return (len(node.attribute) == 1 and node.attribute[0].name == "value"
            and not _is_shape_like(node.attribute[0].t) and len(node.output) == 1)


def check(view) -> None:
    """onnx.checker over the view; InvalidModelError with the checker's words."""
    try:
        check_model(view.SerializeToString())
    except validation_errors() as e:
        raise InvalidModelError(f"the model fails onnx.checker: {e}") from None


def inferred(view):
    """The view with onnx's shape inference applied (not strict: what cannot be inferred stays
    unknown), or the view itself where inference fails."""
    try:
        data = infer_shapes(view.SerializeToString())
    except validation_errors():
        return view
    out = protos().ModelProto()
    out.ParseFromString(data)
    return out


def known_dims(model) -> dict:
    """{tensor name: dims} of every value whose shape ``model`` (an inferred view) knows fully."""
    shapes = {}
    for vi in list(model.graph.input) + list(model.graph.value_info) + list(model.graph.output):
        if not vi.type.HasField("tensor_type") or not vi.type.tensor_type.HasField("shape"):
            continue
        dims = vi.type.tensor_type.shape.dim
        if all(d.HasField("dim_value") for d in dims):
            shapes[vi.name] = tuple(d.dim_value for d in dims)
    return shapes
