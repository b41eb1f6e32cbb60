"""``dnnx info MODEL``: what a model takes and gives, what it is made of, and whether dnnx runs it."""
from __future__ import annotations

from collections import Counter

from .. import supported_ops
from .._importer import read_model
from .._onnx import protos
from .._tensors import numpy_dtype
from ..errors import DnnxError
from ..model import load
from ..plan import format_bytes
from ._args import add_model
from ._parameters import all_nodes, parameters

NAME = "info"
HELP = "show a model's inputs, outputs, ops, parameter count, opset and dnnx support"
FOLDED_AT_IMPORT = {"Constant"}  # never reaches the engine: the importer turns it into a constant


def add_arguments(parser) -> None:
    add_model(parser)


def _dtype_name(elem_type: int) -> str:
    dtype = numpy_dtype(elem_type)
    if dtype is not None:
        return dtype.name
    try:
        return protos().TensorProto.DataType.Name(elem_type).lower()
    except ValueError:
        return str(elem_type)


def _value_line(vi) -> str:
    tt = vi.type.tensor_type
    if not vi.type.HasField("tensor_type"):
        return f"  {vi.name}  (not a tensor)"
    dims = [str(d.dim_value) if d.HasField("dim_value") else (d.dim_param or "?") for d in tt.shape.dim]
    return f"  {vi.name}  {_dtype_name(tt.elem_type)}  [{', '.join(dims)}]"


def _op_name(node) -> str:
    return node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}::{node.op_type}"


def describe(proto, supported: set) -> list:
    """The report's lines, support status excluded."""
    graph = proto.graph
    initializers = {t.name for t in graph.initializer}
    opset = next((i.version for i in proto.opset_import if i.domain in ("", "ai.onnx")), None)
    producer = " ".join(p for p in (proto.producer_name, proto.producer_version) if p) or "unknown"
    count, nbytes = parameters(graph)
    nodes = list(all_nodes(graph))
    ops = Counter(_op_name(n) for n in nodes)
    nested = len(nodes) - len(graph.node)
    lines = [f"producer: {producer}", f"ir version: {proto.ir_version}, opset: {opset}", "inputs:"]
    lines += [_value_line(vi) for vi in graph.input if vi.name not in initializers]
    lines += ["outputs:"] + [_value_line(vi) for vi in graph.output]
    lines.append(f"parameters: {count:,} ({format_bytes(nbytes)})")
    lines.append(f"ops ({len(nodes)} nodes{f', {nested} of them in subgraphs' if nested else ''}):")
    lines += [f"  {op:<24} {n}" for op, n in sorted(ops.items(), key=lambda kv: (-kv[1], kv[0]))]
    unsupported = sorted(op for op in ops if op not in supported and op not in FOLDED_AT_IMPORT)
    if unsupported:
        lines.append("ops outside dnnx's op set: " + ", ".join(unsupported)
                     + " (nodes whose inputs are all constants are folded at import)")
    return lines


def main(args) -> int:
    # FileNotFoundError / InvalidModelError: the caller's one-liner. The weights' bytes are not
    # needed to describe the model (their dims are), and load() reads them from the file itself.
    proto = read_model(args.model, weights=False)
    print(f"model: {args.model}")
    for line in describe(proto, set(supported_ops())):
        print(line)
    # The last word is the engine's: folding can remove unsupported nodes, and an op may be
    # supported with only some of its attributes.
    try:
        load(args.model)
    except (DnnxError, ValueError) as e:
        print(f"dnnx: cannot load it: {' '.join(str(e).split())}")
    else:
        print("dnnx: loads and runs it")
    return 0
