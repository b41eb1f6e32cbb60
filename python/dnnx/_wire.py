"""The weights of a serialized ModelProto, found in the protobuf wire format itself, so that
parsing does not copy them: ``strip_weights`` gives the model's bytes without the raw_data of its
large initializers (what protobuf then parses, in milliseconds) and where each of those raw_data
lies in the original bytes. ``np.frombuffer`` over the memory-mapped file at that span is the
weight with no copy; the engine copies it once, from the page cache into its own constant.
(Parsing the whole file copies every weight into the protobuf's memory, and each access to
``TensorProto.raw_data`` copies it again: 50 ms each for a ResNet-50.)

Only the path to the weights is walked: ModelProto.graph (field 7) -> GraphProto.initializer
(field 5) -> TensorProto.name (8) and raw_data (9); every other field is copied as it is.
Anything unexpected gives up (None): the caller then parses the whole file.
"""
from __future__ import annotations

MODEL_GRAPH, GRAPH_INITIALIZER, TENSOR_NAME, TENSOR_RAW_DATA = 7, 5, 8, 9
_VARINT, _I64, _LEN, _I32 = 0, 1, 2, 5


def _varint(buf, pos: int) -> tuple:
    result = shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _fields(buf, start: int, end: int):
    """(field number, wire type, key start, value start, value end) of each field in
    buf[start:end]; a varint's value is not decoded (its start and end bracket it)."""
    pos = start
    while pos < end:
        key_start = pos
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == _VARINT:
            _, after = _varint(buf, pos)
        elif wire == _LEN:
            length, pos = _varint(buf, pos)
            after = pos + length
        elif wire == _I64:
            after = pos + 8
        elif wire == _I32:
            after = pos + 4
        else:  # groups (3, 4) are not in ONNX
            raise ValueError(f"wire type {wire}")
        if after > end:
            raise ValueError("field runs past its message")
        yield number, wire, key_start, pos, after
        pos = after


def _length_delimited(number: int, pieces: list) -> list:
    size = sum(len(p) for p in pieces)
    return [_encode_varint(number << 3 | _LEN), _encode_varint(size), *pieces]


def _strip_tensor(buf, start: int, end: int, min_bytes: int, spans: dict) -> list:
    """The pieces of one TensorProto without its raw_data when that is at least min_bytes long
    (its span then goes into ``spans`` under the tensor's name)."""
    name, raw, pieces = None, None, []
    for number, wire, key_start, value_start, value_end in _fields(buf, start, end):
        if wire == _LEN and number == TENSOR_NAME:
            name = bytes(buf[value_start:value_end]).decode("utf-8")
        if wire == _LEN and number == TENSOR_RAW_DATA and value_end - value_start >= min_bytes:
            raw = (value_start, value_end - value_start)
            continue
        pieces.append(buf[key_start:value_end])
    if raw is None or name is None:
        return [buf[start:end]]
    spans[name] = raw
    return pieces


def strip_weights(buf, min_bytes: int):
    """(the serialized model without the raw_data of its large initializers, {initializer name:
    (offset, length) of that raw_data in ``buf``}); None where the bytes do not read as expected.
    Only the non-weight bytes are copied: parsing the result costs milliseconds, not a pass over
    every weight."""
    try:
        spans, out = {}, []
        for number, wire, key_start, start, end in _fields(buf, 0, len(buf)):
            if number != MODEL_GRAPH or wire != _LEN:
                out.append(buf[key_start:end])
                continue
            graph = []
            for g_number, g_wire, g_key, g_start, g_end in _fields(buf, start, end):
                if g_number == GRAPH_INITIALIZER and g_wire == _LEN:
                    graph += _length_delimited(GRAPH_INITIALIZER, _strip_tensor(buf, g_start, g_end, min_bytes, spans))
                else:
                    graph.append(buf[g_key:g_end])
            out += _length_delimited(MODEL_GRAPH, graph)
        return b"".join(out), spans
    except (ValueError, IndexError, UnicodeDecodeError):
        return None
