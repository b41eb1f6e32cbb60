"""ONNX value types that are not tensors, as the engine takes them (Note [sequences] in
engine/runtime/values/host_value.h): a sequence of tensors, or an optional of a tensor or of a
sequence of tensors. The IR lists such a graph input with its element type (and no dims), and
``input_kinds`` ("tensor", "sequence" or "optional", one per input) says which it is; Model.run
takes a Python list for a sequence and None or a value for an optional, and returns the same."""
from __future__ import annotations

from .errors import UnsupportedModelError


def value_kind(type_proto, what: str) -> tuple:
    """(kind, element type code) of an ONNX TypeProto: ("tensor", elem) for a tensor (or an untyped
    value: elem 0), ("sequence", elem) for a sequence of tensors, ("optional", elem) for an optional
    of a tensor or of a sequence of tensors. Maps and nested sequences are refused naming ``what``."""
    which = type_proto.WhichOneof("value")
    if which in (None, "tensor_type"):
        return "tensor", type_proto.tensor_type.elem_type if which else 0
    if which == "sequence_type":
        inner = type_proto.sequence_type.elem_type
        if inner.WhichOneof("value") not in (None, "tensor_type"):
            raise UnsupportedModelError(f"{what}: a sequence of {inner.WhichOneof('value')} values is not "
                                        f"supported (sequences of tensors are)")
        return "sequence", inner.tensor_type.elem_type
    if which == "optional_type":
        kind, elem = value_kind(type_proto.optional_type.elem_type, what)
        if kind == "optional":
            raise UnsupportedModelError(f"{what}: an optional of an optional is not supported")
        return "optional", elem
    raise UnsupportedModelError(f"{what}: a {which} value is not supported (tensors, sequences of tensors and "
                                f"optionals of either are)")


def type_string(type_proto) -> str:
    """A TYPE_PROTO attribute (Optional's ``type``) as the engine reads it: "tensor(float32)",
    "sequence(tensor(int64))", ... (runtime/values/optional_ops.cc takes the element type)."""
    from ._tensors import ELEM_NAMES

    which = type_proto.WhichOneof("value")
    if which == "tensor_type":
        return f"tensor({ELEM_NAMES.get(type_proto.tensor_type.elem_type, 'undefined')})"
    if which == "sequence_type":
        return f"sequence({type_string(type_proto.sequence_type.elem_type)})"
    if which == "optional_type":
        return f"optional({type_string(type_proto.optional_type.elem_type)})"
    return "undefined"
