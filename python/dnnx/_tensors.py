"""ONNX tensors and attributes as numpy values, without onnx.numpy_helper (it copies every weight
and needs ``import onnx``: Note [onnx without its package import] in _onnx.py).

A tensor stored as raw_data becomes ``np.frombuffer`` over the bytes the protobuf hands out: no
copy here; the engine copies it once into its own constant (bind_graph.cc). Its size is checked
against its dims first, so a truncated file is an InvalidModelError naming the tensor, not a
wrong answer. Typed fields (float_data, int64_data, ...) are small in practice and converted.
"""
from __future__ import annotations

import numpy as np

from .errors import InvalidModelError, UnsupportedModelError

# TensorProto.DataType -> the engine dtype's name, which is numpy's or ml_dtypes' (Note [dtypes] in
# engine/ir/tensor.h); STRING (8) is "string", a numpy object array of str (Note [string tensors]).
# The types numpy has no form for (complex) are absent.
ELEM_NAMES = {
    1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64", 8: "string", 9: "bool",
    10: "float16", 11: "float64", 12: "uint32", 13: "uint64", 16: "bfloat16", 17: "float8_e4m3fn",
    18: "float8_e4m3fnuz", 19: "float8_e5m2", 20: "float8_e5m2fnuz", 21: "uint4", 22: "int4",
    23: "float4_e2m1fn",
}
# The typed field that holds each type's values when a tensor has no raw_data.
_FIELDS = {1: "float_data", 7: "int64_data", 11: "double_data", 12: "uint64_data", 13: "uint64_data"}
_BITS16 = {10, 16}          # float16, bfloat16: int32_data holds their bit patterns
_PACKED4 = {21, 22, 23}     # uint4, int4, float4e2m1: two per byte, the first in the low half
FLOAT, INT32, INT64, STRING = 1, 6, 7, 8
EXTERNAL = 1  # TensorProto.DataLocation
_ML_DTYPES = {"bfloat16", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "uint4", "int4",
              "float4_e2m1fn"}


def dtype_named(name: str) -> np.dtype:
    """The numpy dtype of an engine dtype name (ml_dtypes' for bfloat16, the float8 and 4-bit types)."""
    if name == "string":
        return np.dtype(object)
    if name in _ML_DTYPES:
        import ml_dtypes  # onnx's own dependency; imported only for these types

        return np.dtype(getattr(ml_dtypes, name))
    return np.dtype(name)


def numpy_dtype(elem_type: int):
    """The numpy dtype of a TensorProto.DataType, or None for one numpy has no type for."""
    name = ELEM_NAMES.get(elem_type)
    return dtype_named(name).newbyteorder("<") if name else None


def elem_type_name(proto_module, elem_type: int) -> str:
    try:
        return proto_module.TensorProto.DataType.Name(elem_type)
    except ValueError:
        return str(elem_type)


def tensor_array(tensor, what: str, raw=None) -> np.ndarray:
    """The tensor's value. ``raw``:
    its raw_data as a buffer already (a view of the file's bytes, _wire.py), read instead."""
    dtype = numpy_dtype(tensor.data_type)
    if dtype is None:
        from ._onnx import protos

        raise UnsupportedModelError(f"{what}: element type {elem_type_name(protos(), tensor.data_type)} "
                                    f"is not supported")
    field = _FIELDS.get(tensor.data_type, "int32_data")
    dims = tuple(int(d) for d in tensor.dims)
    if any(d < 0 for d in dims):
        raise InvalidModelError(f"{what}: negative dim in {list(dims)}")
    count = int(np.prod(dims, dtype=np.int64))
    if tensor.data_type == STRING:  # string_data: bytes, kept as bytes (the engine holds UTF-8)
        if len(tensor.string_data) != count:
            raise InvalidModelError(f"{what}: string_data holds {len(tensor.string_data)} values, but dims "
                                    f"{list(dims)} need {count}")
        values = np.empty(count, dtype=object)
        values[:] = list(tensor.string_data)
        return values.reshape(dims)
    if tensor.data_location == EXTERNAL:
        raise InvalidModelError(f"{what}: its external data was not read")
    packed = tensor.data_type in _PACKED4
    stored = (count + 1) // 2 if packed else count  # the elements (bytes, for the 4-bit types) stored
    if raw is not None or tensor.HasField("raw_data"):
        raw = tensor.raw_data if raw is None else raw
        size = 1 if packed else dtype.itemsize
        if len(raw) != stored * size:
            raise InvalidModelError(f"{what}: raw_data holds {len(raw)} bytes, but dims {list(dims)} of "
                                    f"{dtype.name} need {stored * size} (a truncated or corrupt file?)")
        values = np.frombuffer(raw, dtype=np.uint8 if packed else dtype)
    else:
        values = getattr(tensor, field)
        if len(values) != stored:
            raise InvalidModelError(f"{what}: {field} holds {len(values)} values, but dims {list(dims)} "
                                    f"need {stored}")
        if tensor.data_type in _BITS16:
            values = np.array(values, dtype=np.uint16).view(dtype)
        elif packed or dtype.kind == "V":  # the float8 types: their bytes in int32_data
            values = np.array(values, dtype=np.uint8)
            values = values if packed else values.view(dtype)
        else:
            values = np.array(values, dtype=dtype)
    if packed:  # one element per byte, as ml_dtypes holds them
        values = np.stack([values & 0x0F, values >> 4], axis=-1).reshape(-1)[:count].view(dtype)
    return engine_array(values.reshape(dims))


def engine_array(array: np.ndarray) -> np.ndarray:
    """Constants in C order, of their own dtype (on a device, _edges.py then makes float64,
    float16 and bfloat16 ones float32). Little-endian dtypes become native ones (the same bytes
    on the hosts dnnx runs on)."""
    if array.dtype == object:
        return array
    array = array.astype(array.dtype.newbyteorder("="), copy=False)
    return np.asarray(array, order="C")  # not ascontiguousarray: it turns a scalar into shape [1]


# AttributeProto.AttributeType -> the IR's kind
_ATTRIBUTE_KINDS = {1: "float", 2: "int", 3: "string", 4: "tensor", 6: "floats", 7: "ints", 8: "strings"}
_SPARSE_TENSOR = 11
_TYPE_PROTO = 13


def attribute(attr, where: str) -> tuple:
    """(kind, value) as the IR holds it (bind_graph.cc's attribute_from_ir)."""
    kind = _ATTRIBUTE_KINDS.get(attr.type)
    if attr.type == _TYPE_PROTO:  # Optional's `type`: held as its type string (_value_types.py)
        from ._value_types import type_string

        return "string", type_string(attr.tp)
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
