"""Graph-valued attributes (If's branches, Loop's and Scan's body) as the engine's IR takes them.

Note [subgraphs] (engine/ir/graph.h): each body becomes an IR dict of its own (converted like the
model's graph, recursively), and every name a body reads from an enclosing scope is passed in
explicitly: appended to the node's inputs and to each of its bodies' inputs, in one order, with
the count in the node's ``__captured`` attribute. A nested body's outer names surface as inputs
of its own node, so they are outer names of the enclosing body in turn, up to the scope that
defines them.
"""
from __future__ import annotations

from ._tensors import ELEM_NAMES
from ._value_types import value_kind
from .errors import UnsupportedModelError

GRAPH = 5  # onnx.AttributeProto.GRAPH
GRAPHS = 10
CAPTURED = "__captured"  # kCapturedAttr in engine/ir/graph.h


def body_attribute(attr, where: str, convert):
    """("graph", IR dict) for a GRAPH attribute (``convert(body, scope)`` builds it), else None."""
    if attr.type != GRAPH:
        return None
    return "graph", convert(attr.g, f"{where} {attr.name}: ")


def declared(values, constants: dict, scope: str) -> list:
    """[(name, dims, dtype)] of a body's own inputs (or outputs). A body's input types decide
    nothing in the engine (the parent passes typed tensors: the plan key carries their dtypes), so
    one declared without a tensor type (or with an unknown rank) is listed as float32 without
    dims, and a sequence or optional by its element type; an output's type serves a Loop or Scan
    output of no iterations (and a SequenceMap of an empty sequence)."""
    out = []
    for vi in values:
        if vi.name in constants:
            continue
        kind, elem_type = value_kind(vi.type, f"{scope}'{vi.name}'")
        if kind != "tensor":  # Note [sequences]: the parent passes the value; its element type serves an empty one
            out.append((vi.name, [], ELEM_NAMES.get(elem_type, "float32")))
            continue
        tt = vi.type.tensor_type if vi.type.HasField("tensor_type") else None
        elem = ELEM_NAMES.get(tt.elem_type, "float32") if tt is not None else "float32"
        dims = ([d.dim_value if d.HasField("dim_value") else (d.dim_param or "?") for d in tt.shape.dim]
                if tt is not None and tt.HasField("shape") else [])
        out.append((vi.name, dims, elem))
    return out


def _outer_names(ir: dict) -> list:
    """The names a body IR reads that it does not define (first-read order)."""
    defined = {name for name, _, _ in ir["inputs"]} | set(ir["constants"])
    free, seen = [], set()
    for _, _, inputs, outputs, *_ in ir["nodes"]:
        for name in inputs:
            if name and name not in defined and name not in seen:
                free.append(name)
                seen.add(name)
        defined.update(o for o in outputs if o)
    for name in ir["outputs"]:
        if name not in defined and name not in seen:
            free.append(name)
            seen.add(name)
    return free


def capture_outer_names(node_inputs: list, attrs: dict) -> list:
    """The node's inputs with its bodies' outer names appended (Note [subgraphs]); each body's
    inputs gain the same names, and ``attrs`` the count. A node without bodies is unchanged."""
    bodies = [value for kind, value in attrs.values() if kind == "graph"]
    if not bodies:
        return node_inputs
    captured = []
    for ir in bodies:
        captured += [n for n in _outer_names(ir) if n not in captured]
    for ir in bodies:
        ir["inputs"] = ir["inputs"] + [(name, [], "float32") for name in captured]
    attrs[CAPTURED] = ("int", len(captured))
    return node_inputs + captured
