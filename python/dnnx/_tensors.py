"""ONNX tensors and attributes as numpy values, without onnx.numpy_helper (it copies every weight
and needs ``import onnx``: Note [onnx without its package import] in _onnx.py).

A tensor stored as raw_data becomes ``np.frombuffer`` over the bytes the protobuf hands out: no
copy here; the engine copies it once into its own constant (bind_graph.cc). Its size is checked
against its dims first, so a truncated file is an InvalidModelError naming the tensor, not a
wrong answer. Typed fields (float_data, int64_data, ...) are small in practice and converted.
"""
from __future__ import annotations

import numpy as np

from ._edges import compute_array
from .errors import InvalidModelError, UnsupportedModelError

# TensorProto.DataType -> (numpy dtype, the typed field that holds it when there is no raw_data)
_TYPES = {
    1: (np.dtype("<f4"), "float_data"), 2: (np.dtype("u1"), "int32_data"), 3: (np.dtype("i1"), "int32_data"),
    4: (np.dtype("<u2"), "int32_data"), 5: (np.dtype("<i2"), "int32_data"), 6: (np.dtype("<i4"), "int32_data"),
    7: (np.dtype("<i8"), "int64_data"), 9: (np.dtype("?"), "int32_data"), 10: (np.dtype("<f2"), "int32_data"),
    11: (np.dtype("<f8"), "double_data"), 12: (np.dtype("<u4"), "uint64_data"), 13: (np.dtype("<u8"), "uint64_data"),
}
FLOAT, INT32, INT64 = 1, 6, 7
EXTERNAL = 1  # TensorProto.DataLocation


def numpy_dtype(elem_type: int):
    """The numpy dtype of a TensorProto.DataType, or None for one numpy has no type for."""
    entry = _TYPES.get(elem_type)
    return entry[0] if entry else None


def elem_type_name(proto_module, elem_type: int) -> str:
    try:
        return proto_module.TensorProto.DataType.Name(elem_type)
    except ValueError:
        return str(elem_type)


def tensor_array(tensor, what: str, raw=None) -> np.ndarray:
    """The tensor's value. ``raw``:
    its raw_data as a buffer already (a view of the file's bytes, _wire.py), read instead."""
    entry = _TYPES.get(tensor.data_type)
    if entry is None:
        from ._onnx import protos

        raise UnsupportedModelError(f"{what}: element type {elem_type_name(protos(), tensor.data_type)} "
                                    f"is not supported")
    dtype, field = entry
    dims = tuple(int(d) for d in tensor.dims)
    if any(d < 0 for d in dims):
        raise InvalidModelError(f"{what}: negative dim in {list(dims)}")
    count = int(np.prod(dims, dtype=np.int64))
    if tensor.data_location == EXTERNAL:
        raise InvalidModelError(f"{what}: its external data was not read")
    if raw is not None or tensor.HasField("raw_data"):
        raw = tensor.raw_data if raw is None else raw
        if len(raw) != count * dtype.itemsize:
            raise InvalidModelError(f"{what}: raw_data holds {len(raw)} bytes, but dims {list(dims)} of "
                                    f"{dtype.name} need {count * dtype.itemsize} (a truncated or corrupt file?)")
        array = np.frombuffer(raw, dtype=dtype).reshape(dims)
    else:
        values = getattr(tensor, field)
        if len(values) != count:
            raise InvalidModelError(f"{what}: {field} holds {len(values)} values, but dims {list(dims)} "
                                    f"need {count}")
        if tensor.data_type == 10:  # float16 values are stored as their bit patterns
            array = np.array(values, dtype=np.uint16).view(np.float16).reshape(dims)
        else:
            array = np.array(values, dtype=dtype).reshape(dims)
    return engine_array(array)


def engine_array(array: np.ndarray) -> np.ndarray:
    """Constants in C order; float32, int32, int64 and bool are the engine's, float64 and float16
    become float32 (dnnx computes them in float32: _edges.py), others are left for the core to
    refuse. Little-endian dtypes become native ones (the same bytes on the hosts dnnx runs on)."""
    array = compute_array(array.astype(array.dtype.newbyteorder("="), copy=False))
    return np.asarray(array, order="C")  # not ascontiguousarray: it turns a scalar into shape [1]


# AttributeProto.AttributeType -> the IR's kind
_ATTRIBUTE_KINDS = {1: "float", 2: "int", 3: "string", 4: "tensor", 6: "floats", 7: "ints", 8: "strings"}
_SPARSE_TENSOR = 11


def attribute(attr, where: str) -> tuple:
    """(kind, value) as the IR holds it (bind_graph.cc's attribute_from_ir)."""
    kind = _ATTRIBUTE_KINDS.get(attr.type)
    if kind is None:
        from ._onnx import protos

        type_name = protos().AttributeProto.AttributeType.Name(attr.type) if attr.type else "UNDEFINED"
        raise UnsupportedModelError(f"{where}: attribute '{attr.name}' of type {type_name} is not supported")
    if kind == "float":
        return kind, float(attr.f)
    if kind == "int":
        return kind, int(attr.i)
    if kind == "string":
        return kind, attr.s.decode("utf-8", "replace")
    if kind == "tensor":
        return kind, tensor_array(attr.t, f"{where} attribute '{attr.name}'")
    if kind == "floats":
        return kind, list(attr.floats)
    if kind == "ints":
        return kind, list(attr.ints)
    return kind, [v.decode("utf-8", "replace") for v in attr.strings]


def constant_node_value(node, where: str) -> np.ndarray:
    """A Constant node's value, straight from its one attribute (value, value_float(s),
    value_int(s)); a sparse or string value is refused, naming the node."""
    if len(node.attribute) != 1:
        raise InvalidModelError(f"{where}: a Constant needs exactly one value attribute, it has "
                                f"{[a.name for a in node.attribute]}")
    attr = node.attribute[0]
    if attr.name == "value":
        return tensor_array(attr.t, f"{where} attribute 'value'")
    if attr.name == "value_float":
        return np.array(attr.f, dtype=np.float32)
    if attr.name == "value_floats":
        return np.array(list(attr.floats), dtype=np.float32)
    if attr.name == "value_int":
        return np.array(attr.i, dtype=np.int64)
    if attr.name == "value_ints":
        return np.array(list(attr.ints), dtype=np.int64)
    if attr.name == "sparse_value" or attr.type == _SPARSE_TENSOR:
        raise UnsupportedModelError(f"{where}: sparse Constant values are not supported")
    if attr.name in ("value_string", "value_strings"):
        raise UnsupportedModelError(f"{where}: string Constant values are not supported")
    raise InvalidModelError(f"{where}: unknown Constant attribute '{attr.name}'")
