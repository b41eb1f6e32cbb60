"""``dnnx info MODEL``: what a model takes and gives, what it is made of, and whether dnnx runs it."""
from __future__ import annotations

from collections import Counter

import numpy as np
import onnx
from onnx import helper

from .. import supported_ops
from .._importer import read_model
from ..errors import DnnxError
from ..model import load
from ..plan import format_bytes
from ._args import add_model

NAME = "info"
HELP = "show a model's inputs, outputs, ops, parameter count, opset and dnnx support"
FOLDED_AT_IMPORT = {"Constant"}  # never reaches the engine: the importer turns it into a constant


def add_arguments(parser) -> None:
    add_model(parser)


def _dtype_name(elem_type: int) -> str:
    try:
        return np.dtype(helper.tensor_dtype_to_np_dtype(elem_type)).name
    except (KeyError, TypeError, ValueError):
        return onnx.TensorProto.DataType.Name(elem_type).lower()


def _value_line(vi: onnx.ValueInfoProto) -> str:
    tt = vi.type.tensor_type
    if not vi.type.HasField("tensor_type"):
        return f"  {vi.name}  (not a tensor)"
    dims = [str(d.dim_value) if d.HasField("dim_value") else (d.dim_param or "?") for d in tt.shape.dim]
    return f"  {vi.name}  {_dtype_name(tt.elem_type)}  [{', '.join(dims)}]"


def _op_name(node: onnx.NodeProto) -> str:
    return node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}::{node.op_type}"


def _parameters(graph: onnx.GraphProto) -> tuple:
    """(count, bytes) of floating-point initializers: the weights. Integer initializers are shapes
    and axes, not parameters."""
    count = nbytes = 0
    for t in graph.initializer:
        try:
            dtype = np.dtype(helper.tensor_dtype_to_np_dtype(t.data_type))
        except (KeyError, TypeError, ValueError):  # strings, or a type numpy has no name for
            continue
        if dtype.kind == "f":
            n = int(np.prod(t.dims, dtype=np.int64))
            count += n
            nbytes += n * dtype.itemsize
    return count, nbytes


def describe(proto: onnx.ModelProto, supported: set) -> list:
    """The report's lines, support status excluded."""
    graph = proto.graph
    initializers = {t.name for t in graph.initializer}
    opset = next((i.version for i in proto.opset_import if i.domain in ("", "ai.onnx")), None)
    producer = " ".join(p for p in (proto.producer_name, proto.producer_version) if p) or "unknown"
    count, nbytes = _parameters(graph)
    ops = Counter(_op_name(n) for n in graph.node)
    lines = [f"producer: {producer}", f"ir version: {proto.ir_version}, opset: {opset}", "inputs:"]
    lines += [_value_line(vi) for vi in graph.input if vi.name not in initializers]
    lines += ["outputs:"] + [_value_line(vi) for vi in graph.output]
    lines.append(f"parameters: {count:,} ({format_bytes(nbytes)})")
    lines.append(f"ops ({len(graph.node)} nodes):")
    lines += [f"  {op:<24} {n}" for op, n in sorted(ops.items(), key=lambda kv: (-kv[1], kv[0]))]
    unsupported = sorted(op for op in ops if op not in supported and op not in FOLDED_AT_IMPORT)
    if unsupported:
        lines.append("ops outside dnnx's op set: " + ", ".join(unsupported)
                     + " (nodes whose inputs are all constants are folded at import)")
    return lines


def main(args) -> int:
    proto = read_model(args.model)  # FileNotFoundError / InvalidModelError: the caller's one-liner
    print(f"model: {args.model}")
    for line in describe(proto, set(supported_ops())):
        print(line)
    # The last word is the engine's: folding can remove unsupported nodes, and an op may be
    # supported with only some of its attributes.
    try:
        load(proto)
    except (DnnxError, ValueError) as e:
        print(f"dnnx: cannot load it: {' '.join(str(e).split())}")
    else:
        print("dnnx: loads and runs it")
    return 0
