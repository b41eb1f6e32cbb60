"""ONNX -> the engine's plain IR. Python reads, checks and converts the model; it does not
interpret operators (the C++ op registry does) and does not infer shapes for the engine (the
planner folds shape computations per plan: Note [plan-time folding]). Steps:

1. read the source (path, bytes or ModelProto) once: a file is memory-mapped and parsed, and its
   weights are found in the mapped bytes (_wire.py); external data may not leave the model's
   folder; a ModelProto is used as it is (copied only where batch_size or dims change it);
2. ``onnx.checker`` once, over a weight-free view (_view.py); upgrade opsets older than 7 with
   onnx's version converter;
3. apply ``dims`` to named dims, then ``batch_size`` under the one batch rule (Note [one batch
   rule] in _dims.py; and to the Reshape targets that carry an exported batch of 1, _rebatch.py);
4. convert: initializers become arrays over the file's bytes (_tensors.py: one copy, into the
   engine), Constant nodes are converted from their attribute, and a node of an op the engine
   does not know whose inputs are all constants is folded with onnx's reference evaluator; any
   other node of an op the engine does not know (in any domain: the engine knows ai.onnx's ops
   and some of com.microsoft's and ai.onnx.ml's, Note [op domains] in engine/ir/graph.h) and one the evaluator
   cannot fold are an UnsupportedModelError naming the node, the op, its domain and opset (the
   evaluator's error as __cause__); every other node goes to the engine, with its domain, which
   folds what is constant itself;
5. emit the IR dict that ``_core.Engine`` takes.

Nothing here imports onnx's package or serializes the model (Note [onnx without its package
import] in _onnx.py); ``phases`` says how long each step took.
"""
from __future__ import annotations

import mmap
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import _view
from ._edges import EDGE_TYPES, FLOAT, Edges, compute_array
from ._dims import bind_dims, check_dims, check_size, data_input_names, set_batch_size
from ._onnx import protos
from ._rebatch import rebatch_reshapes
from ._tensors import ELEM_NAMES, EXTERNAL, attribute, constant_node_value, elem_type_name, engine_array, tensor_array
from ._value_types import value_kind
from ._wire import strip_weights
from .errors import InvalidModelError, UnsupportedModelError

MIN_OPSET = 7  # older models are upgraded to UPGRADE_OPSET with onnx's version converter
UPGRADE_OPSET = 13
UPGRADE_IR_VERSION = 7  # the IR version of opset 13
# raw_data of at least this many bytes stays in the file, out of the parsed proto (_wire.py); it is
# above what _view.py keeps as values (64 int64s), so every tensor shape inference reads is parsed.
STRIPPED_BYTES = 4096
# Nodes never folded: their value is not a function of their inputs alone.
NON_FOLDABLE = {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial",
                "Bernoulli"}

# ONNX's quantization ops (QDQ, QOperator and dynamic quantization): an unknown one says so.
QUANTIZATION_OPS = {"QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "QLinearConv", "QLinearMatMul",
                    "MatMulInteger", "ConvInteger"}



@dataclass
class Imported:
    proto: object           # the onnx.ModelProto read (upgraded, batch_size and dims applied), before folding,
                            # without the raw_data of ``weights``
    ir: dict                # what _core.Engine takes
    opset: int
    outputs: list           # [(name, dims, elem type, kind)] of the graph outputs (inferred where not declared;
    #                         kind: "tensor", "sequence" or "optional", Note [sequences])
    weights: dict           # {initializer name: buffer}: raw_data left out of ``proto`` (restore_weights)
    edges: Edges = field(default_factory=Edges)  # on a device: float64/float16/bfloat16 inputs and outputs,
                                                 # computed in float32 (_edges.py)
    phases: dict = field(default_factory=dict)  # {step: seconds}


def read_model(src, weights: bool = True):
    """A ModelProto from a path, bytes or ModelProto (that one itself, not a copy); external data
    may not leave the model's folder. ``weights=False``: the large initializers' data is left out
    (their names, types and dims are there), which is what reading costs least."""
    model, raw = _read(src)
    if weights:
        restore_weights(model, raw)
    return model


def restore_weights(model, raw: dict) -> None:
    """Puts the weights that reading left in the file (``raw``: {name: buffer}) back into the
    initializers of ``model`` (a copy of each: only what needs the whole proto pays it)."""
    for tensor in model.graph.initializer:
        view = raw.get(tensor.name)
        if view is not None and not tensor.HasField("raw_data"):
            tensor.raw_data = bytes(view)


def _read(src) -> tuple:
    """(ModelProto, {initializer name: its raw_data as a buffer}): a file is memory-mapped, and
    the raw_data of its large initializers stays there, out of the parsed proto (_wire.py); a
    ModelProto gives no buffers."""
    if isinstance(src, protos().ModelProto):
        return src, {}
    if isinstance(src, (bytes, bytearray, memoryview)):
        return _parse_weightless(memoryview(src), "the given bytes")
    if isinstance(src, (str, os.PathLike)):
        path = Path(src)
        if not path.is_file():
            raise FileNotFoundError(f"model file not found: {path}")
        model, raw = _parse_weightless(_map_file(path), str(path))
        _load_external_data(model, path.parent)
        return model, raw
    raise TypeError(f"dnnx.load: expected a path, bytes or onnx.ModelProto, got {type(src).__name__}")


def _map_file(path: Path) -> memoryview:
    """The file's bytes, memory-mapped read-only (the page cache's pages, no copy); an empty file
    (which mmap refuses) is read."""
    with open(path, "rb") as f:
        try:
            return memoryview(mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ))
        except (ValueError, OSError):
            return memoryview(f.read())


def _parse_weightless(data: memoryview, what: str) -> tuple:
    stripped = strip_weights(data, STRIPPED_BYTES)
    if stripped is None:  # not the wire format _wire.py expects: protobuf parses it all
        return _parse(data, what), {}
    model_bytes, spans = stripped
    return _parse(model_bytes, what), {name: data[offset:offset + length] for name, (offset, length) in spans.items()}


def _parse(data, what: str):
    model = protos().ModelProto()
    try:
        model.ParseFromString(data)
    except Exception as e:  # protobuf's DecodeError and friends
        raise InvalidModelError(f"{what} is not an ONNX model (protobuf parse failed: {e})") from None
    if not model.HasField("graph"):
        raise InvalidModelError(f"{what} is not an ONNX model (it has no graph)")
    return model


def _external_tensors(model):
    graph = model.graph
    yield from graph.initializer
    for node in graph.node:
        for attr in node.attribute:
            if attr.HasField("t"):
                yield attr.t


def _load_external_data(model, base: Path) -> None:
    """Reads every tensor's external data into its raw_data (so that save() writes a
    self-contained file), refusing paths outside ``base``."""
    root = base.resolve()
    for tensor in _external_tensors(model):
        if tensor.data_location != EXTERNAL:
            continue
        info = {entry.key: entry.value for entry in tensor.external_data}
        location = info.get("location", "")
        target = (root / location).resolve()
        if root not in target.parents:
            raise InvalidModelError(f"tensor '{tensor.name}': external data path '{location}' "
                                    f"leaves the model's folder {root}")
        if not target.is_file():
            raise InvalidModelError(f"tensor '{tensor.name}': external data file '{location}' not found")
        try:
            offset, length = int(info.get("offset", 0)), info.get("length")
            with open(target, "rb") as f:
                f.seek(offset)
                data = f.read() if length is None else f.read(int(length))
        except (OSError, ValueError) as e:
            raise InvalidModelError(f"tensor '{tensor.name}': cannot read external data: {e}") from None
        if length is not None and len(data) != int(length):
            raise InvalidModelError(f"tensor '{tensor.name}': external data file '{location}' holds "
                                    f"{len(data)} bytes at offset {offset}, not {length}")
        tensor.raw_data = data
        tensor.data_location = 0  # TensorProto.DEFAULT
        del tensor.external_data[:]


def op_key(domain: str, op_type: str) -> str:
    """The registries' name of an op (Note [op domains] in engine/ir/graph.h): the op type for
    ai.onnx ("" or "ai.onnx"), "domain::op_type" otherwise ("com.microsoft::QLinearAdd")."""
    return op_type if domain in ("", "ai.onnx") else f"{domain}::{op_type}"


def domain_opsets(model) -> dict:
    """{domain: version} of the model's opset_import, ai.onnx as "" (what the engine's Graph::opsets
    holds); a domain declared that no node uses is harmless."""
    return {("" if imp.domain == "ai.onnx" else imp.domain): imp.version for imp in model.opset_import}


def onnx_opset(model) -> int:
    """The model's ai.onnx opset; 0 when it imports none (a model of ai.onnx.ml ops alone: onnx's
    checker refuses any ai.onnx node such a model holds, and so does the planner, whose ai.onnx ops
    all start past 0)."""
    for imp in model.opset_import:
        if imp.domain in ("", "ai.onnx"):
            return imp.version
    return 0


def _upgrade(model):
    from onnx import version_converter

    opset = onnx_opset(model)
    model = _legacy_prelu_slopes(model)
    try:
        upgraded = version_converter.convert_version(model, UPGRADE_OPSET)
    except Exception as e:
        raise UnsupportedModelError(f"opset {opset} is older than {MIN_OPSET} and onnx's version "
                                    f"converter could not upgrade it: {e}") from None
    # The converter keeps the IR version. Below 4 every initializer must also be a graph input,
    # and the initializers it makes (Pad's pads as an input from opset 11) are not: the upgraded
    # model is stamped with its opset's IR version.
    upgraded.ir_version = max(upgraded.ir_version, UPGRADE_IR_VERSION)
    return upgraded


def _legacy_prelu_slopes(model) -> None:
    """Before opset 7, PRelu's 1-D slope of C > 1 values is per channel (axis 1) of an input of
    rank 3 or more; from 7 on it broadcasts numpy-style (from the last axis), and onnx's version
    converter does not adapt it. Such a slope initializer (used by PRelu nodes only) is reshaped
    to [C, 1, ..., 1], in a copy of ``model`` (returned; ``model`` itself when nothing changes)."""
    from onnx import shape_inference

    graph = model.graph
    prelus = [n for n in graph.node if n.op_type == "PRelu" and n.domain in ("", "ai.onnx") and len(n.input) == 2]
    if not prelus:
        return model
    inits = {t.name: t for t in graph.initializer}
    inferred = shape_inference.infer_shapes(model).graph
    ranks = {vi.name: len(vi.type.tensor_type.shape.dim) for vi in list(inferred.input) + list(inferred.value_info)
             if vi.type.tensor_type.HasField("shape")}
    consumers = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    reshaped = {}  # slope name -> its per-channel dims
    for node in prelus:
        x, slope = node.input
        tensor, rank = inits.get(slope), ranks.get(x, 0)
        if (tensor is not None and len(tensor.dims) == 1 and tensor.dims[0] > 1 and rank >= 3
                and all(c.op_type == "PRelu" for c in consumers[slope])):
            reshaped[slope] = [tensor.dims[0]] + [1] * (rank - 2)
    if not reshaped:
        return model
    model = _own_copy(model)
    graph = model.graph
    for tensor in graph.initializer:
        if tensor.name in reshaped:
            tensor.dims[:] = reshaped[tensor.name]
    for slope, dims in reshaped.items():
        for vi in graph.input:  # below IR 4 the initializer is declared as an input too
            if vi.name == slope and vi.type.tensor_type.HasField("shape"):
                del vi.type.tensor_type.shape.dim[:]
                for d in dims:
                    vi.type.tensor_type.shape.dim.add().dim_value = d
    return model


def _outputs_untyped(graph) -> bool:
    # a sequence or optional output is typed (Note [sequences]): it has no shape to infer
    return any(o.type.WhichOneof("value") is None or
               (o.type.HasField("tensor_type") and not o.type.tensor_type.HasField("shape")) for o in graph.output)


class _Clock:
    def __init__(self):
        self.phases, self._last = {}, time.perf_counter()

    def lap(self, phase: str) -> None:
        now = time.perf_counter()
        self.phases[phase] = self.phases.get(phase, 0.0) + now - self._last
        self._last = now


def import_model(src, batch_size=None, dims=None, float_edges=False) -> Imported:
    """The IR of ``src``; ``batch_size`` and ``dims`` as dnnx.load takes them. ``float_edges`` (a
    device): float64, float16 and bfloat16 values become float32, converted at the edges (_edges.py);
    otherwise (the CPU) every type is the engine's own."""
    if dims is not None:
        dims = check_dims(dims)
    if batch_size is not None:
        batch_size = check_size(batch_size, "batch_size")
    clock = _Clock()
    model, raw = _read(src)
    clock.lap("read")
    view = _checked_view(model)
    if 0 < onnx_opset(model) < MIN_OPSET:
        restore_weights(model, raw)  # the version converter works on the whole model
        model, raw = _upgrade(model), {}
        view = _checked_view(model)
    clock.lap("check")
    if batch_size is not None or dims:
        if model is src:
            model = _own_copy(model)
        fixed_one, names = False, data_input_names(model.graph)
        for graph in (model.graph, view.graph):
            if dims:
                bind_dims(graph, dims, names)  # first: a dim named there is no longer symbolic for batch_size
            if batch_size is not None:
                fixed_one = set_batch_size(graph, batch_size, names)
        if batch_size is not None and fixed_one:
            rebatch_reshapes(model, view, batch_size)
    clock.lap("shapes")
    opset = onnx_opset(model)
    ir = _build_ir(model, opset, raw, float_edges)
    clock.lap("convert")
    outputs = []
    for o in view.graph.output:
        kind, elem = value_kind(o.type, f"graph output '{o.name}'")
        outputs.append((o.name, _dims_of(o), elem, kind))
    edge_inputs = ir.pop("edge_inputs")
    edges = Edges(inputs=edge_inputs, outputs={name: EDGE_TYPES[t] for name, _, t, kind in outputs
                                               if t in EDGE_TYPES and kind == "tensor"}) if float_edges else Edges()
    return Imported(proto=model, ir=ir, opset=opset, outputs=outputs, weights=raw, phases=clock.phases, edges=edges)


def _checked_view(model):
    """The model's weight-free view, checked. Outputs declared without a shape (the checker wants
    a type, Model.outputs a shape) are inferred there: the one shape inference a load may run
    besides batch_size's (_rebatch.py)."""
    view = _view.weight_free_view(model)
    if _outputs_untyped(view.graph):
        view = _view.inferred(view)
    _view.check(view)
    return view


def _own_copy(model):
    copy = protos().ModelProto()
    copy.CopyFrom(model)  # the caller's proto stays as it was
    return copy


def _dims_of(vi) -> list:
    return [d.dim_value if d.HasField("dim_value") else (d.dim_param or "?") for d in vi.type.tensor_type.shape.dim]


def _graph_inputs(graph, constants: dict, float_edges: bool) -> tuple:
    """([(name, dims, engine dtype)], {name: declared dtype} of the float64/float16/bfloat16 inputs
    that the engine takes as float32 under ``float_edges``: _edges.py converts them at the edge)."""
    # ONNX lets an initializer double as a graph input (an overridable default): dnnx treats it
    # as a constant, like most runtimes do.
    inputs, edges = [], {}
    for vi in graph.input:
        if vi.name in constants:
            continue
        kind, elem_type = value_kind(vi.type, f"graph input '{vi.name}'")
        if kind != "tensor":  # Note [sequences]: the element type, no dims; input_kinds says which
            elem = ELEM_NAMES.get(elem_type)
            on_edge = float_edges and elem_type in EDGE_TYPES  # no edge conversion of a sequence's tensors
            if elem is None or on_edge:
                raise UnsupportedModelError(f"graph input '{vi.name}': a {kind} of "
                                            f"{elem_type_name(protos(), elem_type)} is not supported"
                                            + (" on a device (load the model with device='cpu')" if on_edge else ""))
            inputs.append((vi.name, [], elem, kind))
            continue
        if float_edges and elem_type in EDGE_TYPES:
            edges[vi.name], elem_type = EDGE_TYPES[elem_type], FLOAT
        elem = ELEM_NAMES.get(elem_type)
        if elem is None:
            raise UnsupportedModelError(f"graph input '{vi.name}'{_read_by(graph, vi.name)}: element type "
                                        f"{elem_type_name(protos(), elem_type)} is not supported")
        inputs.append((vi.name, _dims_of(vi), elem, "tensor"))
    return inputs, edges


def _read_by(graph, name: str) -> str:
    """" (read by node 'n' (Op))" for the first node reading ``name``, so that a refused input type
    names the op that wanted it; "" when no node reads it."""
    for node in graph.node:
        if name in node.input:
            return f" (read by node '{node.name}' ({node.op_type}))" if node.name else f" (read by a {node.op_type} node)"
    return ""


def _float32_cast(op_type: str, attrs: dict, where: str) -> dict:
    """Under float_edges, a Cast to DOUBLE, FLOAT16 or BFLOAT16 is a Cast to FLOAT (_edges.py), and a
    tensor attribute of those types is float32. A BitCast to one of them has no float32 twin (its
    bits are the point): refused, naming the node (Note [bitcast])."""
    attrs = {k: (kind, compute_array(v)) if kind == "tensor" else (kind, v) for k, (kind, v) in attrs.items()}
    kind, to = attrs.get("to", (None, None))
    if op_type == "Cast" and kind == "int" and to in EDGE_TYPES:
        return dict(attrs, to=("int", FLOAT))
    if op_type == "BitCast" and kind == "int" and to in EDGE_TYPES:
        raise UnsupportedModelError(f"{where}: BitCast to {EDGE_TYPES[to]} cannot run on a device, where "
                                    f"{EDGE_TYPES[to]} values are float32 (load the model with device='cpu')")
    return attrs


def _engine_ops() -> frozenset:
    from ._native import core

    return frozenset(core.supported_ops())


def _build_ir(model, opset: int, raw: dict, float_edges: bool = False) -> dict:
    """raw: {initializer name: its raw_data as a buffer} (read there rather than from the proto)."""
    graph = model.graph
    constants = {t.name: tensor_array(t, f"initializer '{t.name}'", raw.get(t.name)) for t in graph.initializer}
    inputs, edge_inputs = _graph_inputs(graph, constants, float_edges)
    for node in graph.node:  # Note [bitcast]: the bits of a float64/float16 input are gone once it is float32
        if node.op_type == "BitCast" and node.input and node.input[0] in edge_inputs:
            raise UnsupportedModelError(
                f"node '{node.name or node.output[0]}' (BitCast): its input '{node.input[0]}' is "
                f"{edge_inputs[node.input[0]]}, which a device model computes as float32, so its bits cannot be "
                f"reinterpreted there (load the model with device='cpu')")
    opsets = domain_opsets(model)
    nodes = _convert_nodes(model, graph, constants, opset, float_edges, _engine_ops())  # names an op it lacks first
    for o in graph.output:  # Note [sequences]: a sequence or optional output is a list, None or a value
        value_kind(o.type, f"graph output '{o.name}'")
    used = {i for n in nodes for i in n[2]} | {o.name for o in graph.output}
    constants = {k: (compute_array(v) if float_edges else v) for k, v in constants.items() if k in used}
    kinds = [kind for *_, kind in inputs]
    return {"opset": opset, "opsets": opsets, "nodes": nodes, "constants": constants,
            "inputs": [(name, dims, elem) for name, dims, elem, _ in inputs],
            "input_kinds": kinds if any(k != "tensor" for k in kinds) else None,
            "outputs": [o.name for o in graph.output], "edge_inputs": edge_inputs}


def _convert_nodes(model, graph, constants: dict, opset: int, float_edges: bool, known: frozenset,
                   scope: str = "") -> list:
    """The IR nodes of ``graph`` (the model's or a body: Note [subgraphs], _subgraphs.py); Constant
    nodes and folded unknown ops go into ``constants``. ``scope`` prefixes a body's node names in
    messages ("node 'loop' (Loop) body: ")."""
    from ._subgraphs import body_attribute, capture_outer_names

    nodes, seen_names = [], set()
    for index, node in enumerate(graph.node):
        name = node.name if node.name and node.name not in seen_names else f"{node.op_type}_{index}"
        seen_names.add(name)
        domain = "" if node.domain == "ai.onnx" else node.domain
        where = f"{scope}node '{name}' ({op_key(domain, node.op_type)})"
        if domain:  # Note [op domains]: only the ops the engine knows of another domain pass
            if op_key(domain, node.op_type) not in known:
                raise UnsupportedModelError(_foreign_op_message(model, node, where, known))
            attrs = {a.name: attribute(a, where) for a in node.attribute}
            if float_edges:  # tensor attributes in the compute type (ai.onnx.ml's TreeEnsemble splits)
                attrs = _float32_cast(node.op_type, attrs, where)
            nodes.append((node.op_type, name, list(node.input), list(node.output), attrs, domain))
            continue
        if node.op_type == "Constant":
            if node.output and node.output[0]:
                constants[node.output[0]] = constant_node_value(node, where)
            continue
        real_inputs = [i for i in node.input if i]
        if node.op_type not in known:
            if node.op_type in NON_FOLDABLE or not all(i in constants for i in real_inputs):
                raise UnsupportedModelError(_unknown_op_message(node, opset, where, known))
            results = _fold(node, [constants[i] for i in real_inputs], opset, where, known)
            for out, value in zip([o for o in node.output if o], results):
                constants[out] = engine_array(value)
            continue
        attrs = {}
        for a in node.attribute:
            body = body_attribute(a, where, lambda body, sub_scope: _body_ir(model, body, opset, float_edges, known,
                                                                            sub_scope))
            attrs[a.name] = body if body is not None else attribute(a, where)
        if float_edges:
            attrs = _float32_cast(node.op_type, attrs, where)
        node_inputs = capture_outer_names(list(node.input), attrs)
        nodes.append((node.op_type, name, node_inputs, list(node.output), attrs, ""))
    return nodes


def _body_ir(model, body, opset: int, float_edges: bool, known: frozenset, scope: str) -> dict:
    """A body graph's IR dict (Note [subgraphs]); its outer-scope names are added by the caller. Its
    nodes import the model's opsets (Note [op domains])."""
    from ._subgraphs import declared

    constants = {t.name: tensor_array(t, f"{scope}initializer '{t.name}'") for t in body.initializer}
    nodes = _convert_nodes(model, body, constants, opset, float_edges, known, scope)
    constants = {k: (compute_array(v) if float_edges else v) for k, v in constants.items()}
    return {"opset": opset, "opsets": domain_opsets(model), "nodes": nodes, "constants": constants,
            "inputs": declared(body.input, constants, f"{scope}input "), "outputs": [o.name for o in body.output],
            "output_types": declared(body.output, {}, f"{scope}output ")}


def _unknown_op_message(node, opset: int, where: str, known: frozenset) -> str:
    """Names the node, its op, domain and opset, and what dnnx supports (docs/operators.md)."""
    hint = ("; a quantized model's op: load the float model it was quantized from"
            if node.op_type in QUANTIZATION_OPS else "")
    return (f"{where}: op {node.op_type} (domain ai.onnx, opset {opset}) is not supported by dnnx{hint} "
            f"(supported ops: {', '.join(sorted(known))}; docs/operators.md)")


# ai.onnx.ml's ops over map and sequence values, which dnnx has no type for: what each makes or reads.
MAP_OPS = {"ZipMap": "makes a sequence of maps", "DictVectorizer": "reads a map", "CastMap": "reads a map"}


def _foreign_op_message(model, node, where: str, known: frozenset) -> str:
    """Names the node, its op, domain (with the model's version of it) and what dnnx runs of that
    domain: its ops the engine knows (com.microsoft's quantized ops, ai.onnx.ml's traditional-ML
    ones), none of model-local functions."""
    domain = node.domain
    version = next((imp.version for imp in model.opset_import if imp.domain == domain), "?")
    if any(f.name == node.op_type and f.domain == domain for f in model.functions):
        return (f"{where}: calls the model-local function {domain}::{node.op_type}, which dnnx does not "
                f"inline; dnnx runs the standard ai.onnx domain's ops and some of com.microsoft's and ai.onnx.ml's")
    if domain == "ai.onnx.ml" and node.op_type in MAP_OPS:
        return (f"{where}: op {node.op_type} (domain {domain}) {MAP_OPS[node.op_type]}, and dnnx runs tensors only "
                f"(no map or sequence values); export the model without it (skl2onnx: options={{id(model): "
                f"{{'zipmap': False}}}} keeps a classifier's probabilities a tensor)")
    ours = sorted(k.split("::", 1)[1] for k in known if k.startswith(domain + "::"))
    runs = (f"of domain '{domain}' dnnx runs {', '.join(ours)}" if ours else
            f"dnnx runs no op of domain '{domain}' (it runs the standard ai.onnx domain's ops and some of "
            f"com.microsoft's and ai.onnx.ml's)")
    return (f"{where}: op {node.op_type} (domain {domain}, opset {version}) is not supported by dnnx; "
            f"{runs} (docs/operators.md)")


def _fold(node, values: list, opset: int, where: str, known: frozenset) -> list:
    """Evaluates one all-constant node of an op the engine does not know with onnx's reference
    evaluator (this is the one place a load imports onnx's package). Where the evaluator cannot
    (no implementation of the op at this opset, or a failure), the op is one dnnx does not
    support: an UnsupportedModelError naming it, the evaluator's error as its __cause__."""
    from onnx import TensorProto, helper
    from onnx.reference import ReferenceEvaluator

    names = [i for i in node.input if i]
    inputs = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype), None)
              for n, v in zip(names, values)]
    outputs = [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None) for o in node.output if o]
    graph = helper.make_graph([node], "fold", inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    try:
        results = ReferenceEvaluator(model).run(None, dict(zip(names, values)))
    except Exception as e:
        reason = (str(e).strip().splitlines() or [type(e).__name__])[0][:200]
        raise UnsupportedModelError(f"{_unknown_op_message(node, opset, where, known)}; its inputs are all "
                                    f"constants, but onnx's reference evaluator could not fold it at load "
                                    f"either ({reason})") from e
    for out, r in zip([o for o in node.output if o], results):
        if not isinstance(r, np.ndarray) and not np.isscalar(r) or np.asarray(r).dtype == object:
            raise UnsupportedModelError(f"{where}: output '{out}' is a sequence or optional value; only tensor "
                                        f"values are supported")
    return [np.asarray(r) for r in results]
