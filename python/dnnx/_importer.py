"""ONNX -> the engine's plain IR. Python reads, checks and folds the model; it does not interpret
operators (the C++ op registry does). Steps:

1. read the source (path, bytes or ModelProto) with external data confined to the model's folder;
2. ``onnx.checker``; upgrade opsets older than 7 with onnx's version converter;
3. apply ``batch_size`` to every graph input whose first dim is 1 or symbolic (and to the
   Reshape targets that carry an exported batch of 1, see _rebatch.py);
4. fold every node whose inputs are all constants (Constant nodes, initializer-only arithmetic)
   with onnx's reference evaluator, and every ``Shape`` whose input's shape is fully known
   (see _shapes.py), so constant subgraphs and PyTorch's shape arithmetic cost nothing at run time;
5. emit the IR dict that ``_core.Engine`` takes.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from ._rebatch import rebatch_reshapes
from ._shapes import fold_shape_node, static_shapes
from .errors import InvalidModelError, UnsupportedModelError

MIN_OPSET = 7  # older models are upgraded to UPGRADE_OPSET with onnx's version converter
UPGRADE_OPSET = 13
# Nodes never folded: their value is not a function of their inputs alone.
NON_FOLDABLE = {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial",
                "Bernoulli"}

_ELEM_NAMES = {TensorProto.FLOAT: "float32", TensorProto.INT32: "int32", TensorProto.INT64: "int64",
               TensorProto.BOOL: "bool"}


@dataclass
class Imported:
    proto: onnx.ModelProto  # the checked (and possibly upgraded) model, before folding
    ir: dict                # what _core.Engine takes
    opset: int


def read_model(src) -> onnx.ModelProto:
    """A ModelProto from a path, bytes or ModelProto; external data may not leave the model's folder."""
    if isinstance(src, onnx.ModelProto):
        model = onnx.ModelProto()
        model.CopyFrom(src)
        return model
    if isinstance(src, (bytes, bytearray, memoryview)):
        return _parse_bytes(bytes(src), "the given bytes")
    if isinstance(src, (str, os.PathLike)):
        path = Path(src)
        if not path.is_file():
            raise FileNotFoundError(f"model file not found: {path}")
        model = _parse_bytes(path.read_bytes(), str(path))
        _load_external_data(model, path.parent)
        return model
    raise TypeError(f"dnnx.load: expected a path, bytes or onnx.ModelProto, got {type(src).__name__}")


def _parse_bytes(data: bytes, what: str) -> onnx.ModelProto:
    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except Exception as e:  # protobuf's DecodeError and friends
        raise InvalidModelError(f"{what} is not an ONNX model (protobuf parse failed: {e})") from None
    if not model.HasField("graph"):
        raise InvalidModelError(f"{what} is not an ONNX model (it has no graph)")
    return model


def _load_external_data(model: onnx.ModelProto, base: Path) -> None:
    from onnx.external_data_helper import ExternalDataInfo, _get_all_tensors, load_external_data_for_tensor

    root = base.resolve()
    for tensor in _get_all_tensors(model):
        if tensor.data_location != TensorProto.EXTERNAL:
            continue
        info = ExternalDataInfo(tensor)
        target = (root / info.location).resolve()
        if root not in target.parents:
            raise InvalidModelError(f"tensor '{tensor.name}': external data path '{info.location}' "
                                    f"leaves the model's folder {root}")
        if not target.is_file():
            raise InvalidModelError(f"tensor '{tensor.name}': external data file '{info.location}' not found")
        try:
            load_external_data_for_tensor(tensor, str(root))
        except Exception as e:
            raise InvalidModelError(f"tensor '{tensor.name}': cannot read external data: {e}") from None
        tensor.data_location = TensorProto.DEFAULT
        del tensor.external_data[:]


def onnx_opset(model: onnx.ModelProto) -> int:
    for imp in model.opset_import:
        if imp.domain in ("", "ai.onnx"):
            return imp.version
    raise InvalidModelError("the model imports no ai.onnx opset")


def check_and_upgrade(model: onnx.ModelProto) -> onnx.ModelProto:
    try:
        # Fills graph outputs declared without a shape (the checker requires one).
        model = onnx.shape_inference.infer_shapes(model)
    except Exception:
        pass  # the checker below reports what is wrong
    try:
        onnx.checker.check_model(model)
    except Exception as e:
        raise InvalidModelError(f"the model fails onnx.checker: {e}") from None
    opset = onnx_opset(model)
    if opset < MIN_OPSET:
        from onnx import version_converter

        try:
            model = version_converter.convert_version(model, UPGRADE_OPSET)
        except Exception as e:
            raise UnsupportedModelError(f"opset {opset} is older than {MIN_OPSET} and onnx's version "
                                        f"converter could not upgrade it: {e}") from None
    return model


def set_batch_size(model: onnx.ModelProto, batch_size: int) -> bool:
    """Sets the leading dim of every graph input whose first dim is 1 or symbolic; returns
    whether a fixed 1 was among them (the exporter's batch, which Reshapes may carry)."""
    if not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
    initializers = {t.name for t in model.graph.initializer}
    fixed_one = False
    for vi in model.graph.input:
        if vi.name in initializers or not vi.type.tensor_type.shape.dim:
            continue
        first = vi.type.tensor_type.shape.dim[0]
        if not first.HasField("dim_value") or first.dim_value == 1:
            fixed_one = fixed_one or first.HasField("dim_value")
            first.Clear()
            first.dim_value = batch_size
    return fixed_one


def import_model(src, batch_size=None) -> Imported:
    model = check_and_upgrade(read_model(src))
    if batch_size is not None and set_batch_size(model, batch_size):
        rebatch_reshapes(model, batch_size)
    opset = onnx_opset(model)
    return Imported(proto=model, ir=_build_ir(model, opset), opset=opset)


def _to_array(tensor: TensorProto, what: str) -> np.ndarray:
    try:
        array = numpy_helper.to_array(tensor)
    except Exception as e:
        raise InvalidModelError(f"{what}: cannot read tensor data: {e}") from None
    return _engine_array(array)


def _engine_array(array: np.ndarray) -> np.ndarray:
    """Constants in C order; float32, int32, int64 and bool are the engine's, others are left for the core to refuse."""
    return np.asarray(array, order="C")  # not ascontiguousarray: it turns a scalar into shape [1]


def _attribute(attr: onnx.AttributeProto, where: str):
    kinds = {
        onnx.AttributeProto.INT: "int", onnx.AttributeProto.FLOAT: "float",
        onnx.AttributeProto.STRING: "string", onnx.AttributeProto.INTS: "ints",
        onnx.AttributeProto.FLOATS: "floats", onnx.AttributeProto.STRINGS: "strings",
        onnx.AttributeProto.TENSOR: "tensor",
    }
    kind = kinds.get(attr.type)
    if kind is None:
        raise UnsupportedModelError(f"{where}: attribute '{attr.name}' of type "
                                    f"{onnx.AttributeProto.AttributeType.Name(attr.type)} is not supported")
    value = helper.get_attribute_value(attr)
    if kind == "string":
        value = value.decode("utf-8", "replace")
    elif kind == "strings":
        value = [v.decode("utf-8", "replace") for v in value]
    elif kind == "tensor":
        value = _to_array(value, f"{where} attribute '{attr.name}'")
    elif kind in ("ints", "floats"):
        value = list(value)
    return (kind, value)


def _fold(node: onnx.NodeProto, values: list, opset: int, where: str) -> list:
    """Evaluates one all-constant node with onnx's reference evaluator."""
    from onnx.reference import ReferenceEvaluator

    inputs = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype), None)
              for n, v in zip([i for i in node.input if i], values)]
    outputs = [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None) for o in node.output if o]
    graph = helper.make_graph([node], "fold", inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    try:
        results = ReferenceEvaluator(model).run(None, dict(zip([i for i in node.input if i], values)))
    except Exception as e:
        raise InvalidModelError(f"{where}: constant folding failed: {e}") from None
    return [np.asarray(r) for r in results]


def _build_ir(model: onnx.ModelProto, opset: int) -> dict:
    graph = model.graph
    constants = {t.name: _to_array(t, f"initializer '{t.name}'") for t in graph.initializer}
    # ONNX lets an initializer double as a graph input (an overridable default): dnnx treats it
    # as a constant, like most runtimes do.
    inputs = []
    for vi in graph.input:
        if vi.name in constants:
            continue
        tt = vi.type.tensor_type
        if not vi.type.HasField("tensor_type"):
            raise UnsupportedModelError(f"graph input '{vi.name}': only tensor inputs are supported")
        elem = _ELEM_NAMES.get(tt.elem_type)
        if elem is None:
            raise UnsupportedModelError(
                f"graph input '{vi.name}': element type {TensorProto.DataType.Name(tt.elem_type)} is not "
                f"supported (float32, int32, int64, bool)")
        dims = [d.dim_value if d.HasField("dim_value") else (d.dim_param or "?") for d in tt.shape.dim]
        inputs.append((vi.name, dims, elem))

    shapes = static_shapes(model)
    nodes, seen_names = [], set()
    for index, node in enumerate(graph.node):
        name = node.name if node.name and node.name not in seen_names else f"{node.op_type}_{index}"
        seen_names.add(name)
        where = f"node '{name}' ({node.op_type})"
        if node.domain not in ("", "ai.onnx"):
            raise UnsupportedModelError(f"{where}: domain '{node.domain}' is not supported (only ai.onnx)")
        real_inputs = [i for i in node.input if i]
        if node.op_type == "Shape" and real_inputs and real_inputs[0] in shapes and node.output[0]:
            constants[node.output[0]] = fold_shape_node(node, shapes[real_inputs[0]])
            continue
        if node.op_type not in NON_FOLDABLE and all(i in constants for i in real_inputs):
            results = _fold(node, [constants[i] for i in real_inputs], opset, where)
            for out, value in zip([o for o in node.output if o], results):
                constants[out] = _engine_array(value)
            continue
        attrs = {a.name: _attribute(a, where) for a in node.attribute}
        nodes.append((node.op_type, name, list(node.input), list(node.output), attrs))

    used = {i for n in nodes for i in n[2]} | {o.name for o in graph.output}
    constants = {k: v for k, v in constants.items() if k in used}
    return {"opset": opset, "nodes": nodes, "constants": constants, "inputs": inputs,
            "outputs": [o.name for o in graph.output]}
