"""The QDQ graph of dnnx's own int8 (docs/precision.md, "int8"), as onnxruntime's quantize_static
writes it in its QDQ format: around each quantized Conv, Gemm or MatMul,

    x (float) -> QuantizeLinear(scale, zp: uint8) -> DequantizeLinear -> Conv's input      (per tensor)
    W int8 initializer (zp 0)                     -> DequantizeLinear(axis) -> Conv's W     (per channel)
    B int32 initializer, scale = x scale * W scale (zp 0) -> DequantizeLinear -> Conv's B

and at each residual join (Note [int8 residual join]: ResNet's block end, quantize_static's form)

    Conv [-> BatchNormalization] -> QuantizeLinear -> DequantizeLinear ─┐
    shortcut ----------------------> QuantizeLinear -> DequantizeLinear ─┴─ Add [-> Relu] -> QuantizeLinear -> DequantizeLinear

Weights are symmetric int8 with one scale per output channel: axis 0 of a Conv's W [M, C/g, k..],
the N axis of a Gemm's B ([K, N], or [N, K] with transB) and the last axis of a MatMul's constant
B [.., K, N]. Activations are asymmetric uint8, one (scale, zero point) per tensor, shared by every
quantized layer that reads the tensor. A layer the accuracy guard keeps in float reads the float
tensors as before (but the output of an int8 join, which every reader reads dequantized). Per-axis
scales need opset 13: older models are upgraded with onnx's version converter.

Note [int8 residual join]: quantizing only the inputs of Conv/Gemm/MatMul leaves a ResNet block's
end float: its last Conv gets a float output (Note [int8 float output] in
engine/runtime/passes/fuse_qdq_int8.cc), then a float Add, Relu and the next block's
QuantizeLinear run on their own (on an H100 at batch 256, 24 of ResNet-50's 55 ms; issue #37).
An Add of two float tensors of one shape where at least one is written by a quantized Conv
(directly, or through the inference BatchNormalization that alone reads it) and read by the Add
alone, optionally followed by a Relu that alone reads the Add, is a join (find_joins). An int8
join gets a QuantizeLinear -> DequantizeLinear on each Add input and on its output (the Relu's
where one follows), every node that reads the output reading it dequantized, so that the
QuantizeLinear is the output's only reader; each tensor's pair is the one every reader shares
(the shortcut's is typically its next Conv's already, and so is the output's). fuse_qdq_int8 then
makes Conv [BN] -> Q -> DQ -> Add(DQ(z_q)) [-> Relu] -> Q one Int8Conv with a residual epilogue
(Note [qdq int8]); the other input of a projection block, its own Conv -> Q, a requantizing one.
The accuracy guard measures each join as it measures a layer (Note [int8 guard] in _quantize.py):
its twin adds the quantized fp32 inputs [and applies the Relu] (the output's quantization is the
next layers' input quantization, measured there); a join whose error exceeds the tolerance, or
whose Convs all stay float, stays float as before (its Conv keeps a float output). A join whose
output is a graph output is left float: the output keeps its name and float type."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from ._quant_ranges import int8_weight_params, quantize_int8

QDQ_OPSET = 13
QDQ_IR_VERSION = 7
QUANTIZED_OPS = ("Conv", "Gemm", "MatMul")
PROBE_SUFFIX = "__dnnx_int8_probe"


@dataclass
class Target:
    """One quantizable layer: `activations` (float tensors quantized per tensor), `weight` (a
    constant (initializer name, channel axis) quantized per channel) and `bias` (a 1-D constant
    quantized to int32 with scale activation scale x weight scale)."""

    index: int
    name: str
    op: str
    activations: List[Tuple[int, str]] = field(default_factory=list)  # (input slot, tensor)
    weight: Optional[Tuple[int, str, int]] = None                     # (input slot, initializer, axis)
    bias: Optional[Tuple[int, str]] = None                            # (input slot, initializer)


@dataclass
class Join:
    """A residual join (Note [int8 residual join]): Add node `index` (`name`) of the float tensors
    `inputs` (one shape); `convs`: the names of the Conv targets that write them (directly or
    through a BatchNormalization); `relu`: the index of the Relu that alone reads the Add, or None;
    `output`: the join's output, the Relu's where there is one."""

    index: int
    name: str
    inputs: Tuple[str, str]
    output: str
    convs: Tuple[str, ...]
    relu: Optional[int] = None

    @property
    def last(self) -> int:
        """The index of the join's last node (its twin goes after it in the probe)."""
        return self.index if self.relu is None else self.relu


def _opset(proto) -> int:
    return next((o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")), 1)


def prepared(proto: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of `proto` at opset >= 13 whose nodes all have names (unnamed ones become
    "<op>_<index>": the guard's report and the plan name layers)."""
    out = onnx.ModelProto()
    out.CopyFrom(proto)
    if _opset(out) < QDQ_OPSET:
        try:
            out = onnx.version_converter.convert_version(out, QDQ_OPSET)
        except Exception as e:
            raise ValueError(f"src: int8 needs opset {QDQ_OPSET} (per-channel DequantizeLinear); onnx's version "
                             f"converter could not upgrade this opset-{_opset(proto)} model: {e}") from e
        # opset 13 is IR 7's. Before IR 4 every initializer was also a graph input; from IR 4 on it
        # need not be (the new ones are not, and onnxruntime folds only those that are not)
        if out.ir_version < 4:
            weights = {t.name for t in out.graph.initializer}
            inputs = [i for i in out.graph.input if i.name not in weights]
            del out.graph.input[:]
            out.graph.input.extend(inputs)
        out.ir_version = max(out.ir_version, QDQ_IR_VERSION)
    names = {n.name for n in out.graph.node if n.name}
    for i, node in enumerate(out.graph.node):
        if not node.name:
            name = f"{node.op_type}_{i}"
            while name in names:
                name += "_"
            node.name = name
            names.add(name)
    return out


def _attr(node, name, default):
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def find_targets(proto: onnx.ModelProto) -> List[Target]:
    """The Conv, Gemm and MatMul nodes of the main graph whose data inputs are float32 tensors
    (onnx's shape inference types them) and, for Conv, whose W is an initializer."""
    inits = {t.name: t for t in proto.graph.initializer}
    inferred = onnx.shape_inference.infer_shapes(proto)
    types = {vi.name: vi.type.tensor_type.elem_type
             for vi in list(inferred.graph.value_info) + list(inferred.graph.input) + list(inferred.graph.output)}
    types.update({name: t.data_type for name, t in inits.items()})

    # torch's exporter routes shared parameters through Identity nodes: follow them to the initializer
    identity_of = {n.output[0]: n.input[0] for n in proto.graph.node
                   if n.op_type == "Identity" and n.domain in ("", "ai.onnx") and n.input and n.output}

    def resolved(name):
        seen = set()
        while name not in inits and name in identity_of and name not in seen:
            seen.add(name)
            name = identity_of[name]
        return name

    def is_float(name):
        return bool(name) and types.get(name) == TensorProto.FLOAT

    def constant(name, ndim=None):
        t = inits.get(name)
        return t is not None and t.data_type == TensorProto.FLOAT and (ndim is None or len(t.dims) == ndim)

    found = []
    for i, node in enumerate(proto.graph.node):
        if node.op_type not in QUANTIZED_OPS or node.domain not in ("", "ai.onnx"):
            continue
        ins = [resolved(n) for n in node.input]
        if not all(is_float(n) for n in ins[:2]) or ins[0] in inits:
            continue
        t = Target(i, node.name, node.op_type, activations=[(0, ins[0])])
        if node.op_type == "Conv":
            if not constant(ins[1]):
                continue
            t.weight = (1, ins[1], 0)
            if len(ins) > 2 and constant(ins[2], 1):
                t.bias = (2, ins[2])
        elif node.op_type == "Gemm":
            if constant(ins[1], 2):
                t.weight = (1, ins[1], 0 if _attr(node, "transB", 0) else 1)
                n_out = inits[ins[1]].dims[t.weight[2]]
                if (len(ins) > 2 and constant(ins[2], 1) and inits[ins[2]].dims[0] == n_out
                        and _attr(node, "alpha", 1.0) == 1.0 and _attr(node, "beta", 1.0) == 1.0):
                    t.bias = (2, ins[2])
            else:
                t.activations.append((1, ins[1]))
        else:  # MatMul
            if constant(ins[1]) and len(inits[ins[1]].dims) >= 2:
                t.weight = (1, ins[1], len(inits[ins[1]].dims) - 1)
            elif ins[1] in inits:
                continue
            else:
                t.activations.append((1, ins[1]))
        found.append(t)
    return found


def _is_onnx(node, op: str) -> bool:
    return node.op_type == op and node.domain in ("", "ai.onnx")


def _float_shapes(proto) -> Dict[str, tuple]:
    """{value: its dims (ints and symbolic names)} of the float32 values onnx's shape inference
    gives a full shape (a dim it cannot name leaves the value out)."""
    inferred = onnx.shape_inference.infer_shapes(proto)
    out = {}
    for vi in list(inferred.graph.value_info) + list(inferred.graph.input) + list(inferred.graph.output):
        t = vi.type.tensor_type
        if t.elem_type != TensorProto.FLOAT or not t.HasField("shape"):
            continue
        dims = [d.dim_value if d.HasField("dim_value") else d.dim_param if d.HasField("dim_param") else None
                for d in t.shape.dim]
        if None not in dims:
            out[vi.name] = tuple(dims)
    return out


class _Readers:
    """Who reads each value of the main graph: the fuse pass fuses a chain only where each value
    in it has one reader (Note [qdq int8]), so a join is one only where the same holds here."""

    def __init__(self, proto):
        graph = proto.graph
        self.graph = graph
        self.inits = {t.name for t in graph.initializer}
        self.producer = {out: i for i, node in enumerate(graph.node) for out in node.output if out}
        self.readers: Dict[str, List[int]] = {}
        for i, node in enumerate(graph.node):
            for name in dict.fromkeys(n for n in node.input if n):
                self.readers.setdefault(name, []).append(i)
        self.graph_outputs = {o.name for o in graph.output}

    def sole(self, value: str) -> Optional[int]:
        """The index of the one node that reads `value` (not a graph output), else None."""
        found = self.readers.get(value, [])
        return found[0] if len(found) == 1 and value not in self.graph_outputs else None

    def conv_writing(self, value: str, convs: Dict[int, Target]) -> Optional[Target]:
        """The Conv target whose output is `value`, or whose output an inference
        BatchNormalization with constant statistics alone reads and writes `value` as (Note
        [int8 batchnorm]: the pass takes it into the layer); else None."""
        i = self.producer.get(value)
        if i is None:
            return None
        node = self.graph.node[i]
        if (_is_onnx(node, "BatchNormalization") and len(node.input) == 5 and len(node.output) == 1
                and not _attr(node, "training_mode", 0) and all(n in self.inits for n in node.input[1:])):
            if self.sole(node.input[0]) != i:
                return None
            i = self.producer.get(node.input[0])
        return convs.get(i)


def find_joins(proto: onnx.ModelProto, targets: List[Target]) -> List[Join]:
    """The residual joins of the main graph (Note [int8 residual join]): each Add of two float
    tensors of one shape, at least one written by a Conv of `targets` and read by the Add alone,
    whose output (the Relu's, where a Relu alone reads the Add) is not a graph output."""
    convs = {t.index: t for t in targets if t.op == "Conv"}
    shapes = _float_shapes(proto)
    graph = _Readers(proto)
    found = []
    for i, node in enumerate(proto.graph.node):
        if not _is_onnx(node, "Add") or len(node.input) != 2 or len(node.output) != 1:
            continue
        a, b = node.input
        if shapes.get(a) is None or shapes.get(a) != shapes.get(b):
            continue
        writers = [graph.conv_writing(v, convs) for v in (a, b) if graph.sole(v) == i]
        names = tuple(dict.fromkeys(t.name for t in writers if t is not None))
        if not names:
            continue
        relu, out = None, node.output[0]
        r = graph.sole(out)
        if r is not None and _is_onnx(proto.graph.node[r], "Relu"):
            relu, out = r, proto.graph.node[r].output[0]
        if out in graph.graph_outputs or out not in graph.readers:
            continue  # the output must be read through its QuantizeLinear alone
        found.append(Join(i, node.name, (a, b), out, names, relu))
    return found


class _Builder:
    """Q/DQ nodes and quantized initializers, each made once and shared by the layers that read it."""

    def __init__(self, proto, act_params: Dict[str, Tuple[np.float32, np.uint8]], per_channel: bool):
        self.inits = {t.name: t for t in proto.graph.initializer}
        self.act_params, self.per_channel = act_params, per_channel
        self.nodes: List[onnx.NodeProto] = []
        self.initializers: List[onnx.TensorProto] = []
        self.made: Dict[str, str] = {}
        self.weight_scales: Dict[str, np.ndarray] = {}
        self.biases = 0  # biases made so far: each one's names carry its number

    def activation(self, tensor: str) -> str:
        """The DequantizeLinear output that stands for `tensor` (QuantizeLinear -> DequantizeLinear)."""
        key = f"act:{tensor}"
        if key not in self.made:
            scale, zp = self.act_params[tensor]
            s, z = f"{tensor}_scale", f"{tensor}_zero_point"
            self.initializers += [numpy_helper.from_array(np.array(scale, np.float32), s),
                                  numpy_helper.from_array(np.array(zp, np.uint8), z)]
            q, dq = f"{tensor}_QuantizeLinear_Output", f"{tensor}_DequantizeLinear_Output"
            self.nodes += [helper.make_node("QuantizeLinear", [tensor, s, z], [q], name=f"{tensor}_QuantizeLinear"),
                           helper.make_node("DequantizeLinear", [q, s, z], [dq], name=f"{tensor}_DequantizeLinear")]
            self.made[key] = dq
        return self.made[key]

    def weight(self, name: str, axis: int) -> str:
        """The DequantizeLinear output of the int8 `name` (per channel along `axis`, or per tensor)."""
        key = f"w:{name}"
        if key not in self.made:
            w = numpy_helper.to_array(self.inits[name]).astype(np.float32)
            if self.per_channel:
                scales = int8_weight_params(w, axis)
                q = quantize_int8(w, scales, axis)
            else:
                scales = int8_weight_params(w.reshape(1, -1), 0)
                q = quantize_int8(w.reshape(1, -1), scales, 0).reshape(w.shape)
            self.weight_scales[name] = scales
            qname, s, z = f"{name}_quantized", f"{name}_scale", f"{name}_zero_point"
            scale_array = scales if self.per_channel else np.array(scales[0], np.float32)
            zero = np.zeros(scale_array.shape, np.int8)
            self.initializers += [numpy_helper.from_array(q, qname), numpy_helper.from_array(scale_array, s),
                                  numpy_helper.from_array(zero, z)]
            dq = f"{name}_DequantizeLinear_Output"
            attrs = {"axis": axis} if self.per_channel else {}
            self.nodes.append(helper.make_node("DequantizeLinear", [qname, s, z], [dq],
                                               name=f"{name}_DequantizeLinear", **attrs))
            self.made[key] = dq
        return self.made[key]

    def bias(self, target: Target, values: np.ndarray) -> str:
        """The DequantizeLinear output of the bias `values` (float [M]) of `target` as int32 with
        scale = activation scale x weight scale (per output channel: onnxruntime's bias
        quantization). Each layer has its own: a corrected bias is the layer's alone."""
        activation, weight = target.activations[0][1], target.weight[1]
        name = target.bias[1] if target.bias is not None else f"{target.name}_bias"
        b = values.astype(np.float64)
        scale = np.float64(self.act_params[activation][0]) * self.weight_scales[weight].astype(np.float64)
        scale = np.broadcast_to(scale, b.shape).astype(np.float32)
        q = np.clip(np.round(b / scale.astype(np.float64)), -2 ** 31, 2 ** 31 - 1).astype(np.int32)
        self.biases += 1
        suffix = f"_{self.biases}"
        qname, s, z = f"{name}_quantized{suffix}", f"{name}_scale{suffix}", f"{name}_zero_point{suffix}"
        self.initializers += [numpy_helper.from_array(q, qname), numpy_helper.from_array(scale, s),
                              numpy_helper.from_array(np.zeros(b.shape, np.int32), z)]
        dq = f"{name}_DequantizeLinear_Output{suffix}"
        self.nodes.append(helper.make_node("DequantizeLinear", [qname, s, z], [dq],
                                           name=f"{name}_DequantizeLinear{suffix}", axis=0))
        return dq

    def inputs(self, target: Target, node, correction: Optional[np.ndarray] = None) -> List[str]:
        """`node`'s inputs with the quantized ones replaced by their DequantizeLinear outputs;
        `correction` (float [M]) is subtracted from the bias (Note [bias correction]), a bias of
        zeros added where the layer has none."""
        ins = list(node.input)
        for slot, tensor in target.activations:
            ins[slot] = self.activation(tensor)
        if target.weight is None:
            return ins
        slot, name, axis = target.weight
        ins[slot] = self.weight(name, axis)
        if target.bias is not None:
            values = numpy_helper.to_array(self.inits[target.bias[1]]).astype(np.float32)
        elif correction is not None:
            values = np.zeros(correction.shape, np.float32)
        else:
            return ins
        if correction is not None:
            values = values - correction.astype(np.float32)
        while len(ins) < 3:
            ins.append("")
        ins[2] = self.bias(target, values)
        return ins

    def take_nodes(self) -> List[onnx.NodeProto]:
        nodes, self.nodes = self.nodes, []
        return nodes


def _with_inputs(node, ins: List[str], name: Optional[str] = None, outputs: Optional[List[str]] = None):
    """A copy of `node` reading `ins` (and, for a probe twin, named `name`, writing `outputs`)."""
    changed = onnx.NodeProto()
    changed.CopyFrom(node)
    del changed.input[:]
    changed.input.extend(ins)
    if name is not None:
        changed.name = name
    if outputs is not None:
        del changed.output[:]
        changed.output.extend(outputs)
    return changed


def _join_reads(proto, joins: List[Join]) -> Dict[int, Dict[int, str]]:
    """{node index: {input slot: float tensor it reads quantized}} of the int8 joins `joins`: the
    Add's two inputs, and every reader of the join's output (Note [int8 residual join])."""
    reads: Dict[int, Dict[int, str]] = {}
    outputs = {j.output for j in joins}
    for j in joins:
        reads.setdefault(j.index, {}).update({0: j.inputs[0], 1: j.inputs[1]})
    for i, node in enumerate(proto.graph.node):
        for slot, name in enumerate(node.input):
            if name in outputs:
                reads.setdefault(i, {})[slot] = name
    return reads


def _join_twin(proto, builder: "_Builder", join: Join) -> List[onnx.NodeProto]:
    """The probe's quantized twin of `join`: Add of its quantized fp32 inputs [-> Relu], written as
    join.output + PROBE_SUFFIX. Its output is not quantized: as a layer's twin measures its
    inputs' quantization and not its output's, that one is the next layers' input quantization,
    measured there (Note [int8 guard])."""
    add = proto.graph.node[join.index]
    measured = join.output + PROBE_SUFFIX
    ins = [builder.activation(t) for t in join.inputs]
    if join.relu is None:
        return builder.take_nodes() + [_with_inputs(add, ins, add.name + PROBE_SUFFIX, [measured])]
    relu = proto.graph.node[join.relu]
    total = measured + "_sum"
    return builder.take_nodes() + [_with_inputs(add, ins, add.name + PROBE_SUFFIX, [total]),
                                   _with_inputs(relu, [total], relu.name + PROBE_SUFFIX, [measured])]


def _rebuild(proto, targets: List[Target], act_params, per_channel: bool, probe: bool,
             corrections: Optional[Dict[str, np.ndarray]] = None, joins: List[Join] = ()) -> onnx.ModelProto:
    out = onnx.ModelProto()
    out.CopyFrom(proto)
    builder = _Builder(proto, act_params, per_channel)
    by_index = {t.index: t for t in targets}
    twins = {j.last: j for j in joins} if probe else {}
    reads = {} if probe else _join_reads(proto, joins)
    nodes = []
    for i, node in enumerate(proto.graph.node):
        t = by_index.get(i)
        if t is None and i not in reads:
            nodes.append(node)
        elif t is None:  # a node of an int8 join, or one reading a join's output
            ins = list(node.input)
            for slot, tensor in reads[i].items():
                ins[slot] = builder.activation(tensor)
            nodes += builder.take_nodes() + [_with_inputs(node, ins)]
        else:
            ins = builder.inputs(t, node, (corrections or {}).get(t.name))
            for slot, tensor in reads.get(i, {}).items():
                if ins[slot] == tensor:  # a float layer reading an int8 join's output
                    ins[slot] = builder.activation(tensor)
            nodes.extend(builder.take_nodes())
            if probe:  # the float layer as it is, and a quantized twin beside it
                nodes += [node, _with_inputs(node, ins, node.name + PROBE_SUFFIX, [node.output[0] + PROBE_SUFFIX])]
            else:
                nodes.append(_with_inputs(node, ins))
        if i in twins:
            nodes += _join_twin(proto, builder, twins[i])
    del out.graph.node[:]
    out.graph.node.extend(nodes)
    out.graph.initializer.extend(builder.initializers)
    if probe:
        del out.graph.output[:]
        measured = [proto.graph.node[t.index].output[0] for t in targets] + [j.output for j in joins]
        for name in measured:
            for value in (name, name + PROBE_SUFFIX):
                out.graph.output.append(helper.make_tensor_value_info(value, TensorProto.FLOAT, None))
    else:
        _drop_unused_initializers(out)
    return out


def _drop_unused_initializers(proto) -> None:
    used = {name for node in proto.graph.node for name in node.input}
    used |= {o.name for o in proto.graph.output}
    for node in proto.graph.node:  # names that subgraphs read from the outer scope
        for a in node.attribute:
            for g in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                used |= {name for n in g.node for name in n.input}
    dropped = {t.name for t in proto.graph.initializer if t.name not in used}
    keep = [t for t in proto.graph.initializer if t.name in used]
    del proto.graph.initializer[:]
    proto.graph.initializer.extend(keep)
    # Before IR 4 an initializer is also a graph input: the input goes with it.
    inputs = [i for i in proto.graph.input if i.name not in dropped]
    del proto.graph.input[:]
    proto.graph.input.extend(inputs)


def qdq_model(proto, targets: List[Target], act_params, per_channel: bool, corrections=None,
              joins: List[Join] = ()) -> onnx.ModelProto:
    """`proto` with the layers `targets` quantized (QDQ pairs on their inputs; `corrections`
    {layer name: float [M]} subtracted from their biases) and the residual joins `joins` (QDQ
    pairs on their inputs and output: Note [int8 residual join]), the float weights they no
    longer read removed."""
    return _rebuild(proto, targets, act_params, per_channel, probe=False, corrections=corrections, joins=joins)


def probe_model(proto, targets: List[Target], act_params, per_channel: bool, corrections=None,
                joins: List[Join] = ()) -> onnx.ModelProto:
    """The guard's probe: `proto` with, beside each target and join, a quantized twin reading the
    same float inputs through QDQ; its outputs are each
    one's float output and its twin's, in pairs (output name, output name + PROBE_SUFFIX). Each
    twin sees fp32 inputs: its error is its own, not the sum of the layers before it."""
    return _rebuild(proto, targets, act_params, per_channel, probe=True, corrections=corrections, joins=joins)


def with_outputs(proto, names: List[str]) -> onnx.ModelProto:
    """A copy of `proto` whose graph outputs are `names` (float32 tensors)."""
    out = onnx.ModelProto()
    out.CopyFrom(proto)
    del out.graph.output[:]
    for name in names:
        out.graph.output.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))
    return out


def correctable(proto, target: Target) -> bool:
    """Whether Note [bias correction] applies: a Conv or Gemm with a constant weight whose bias is a
    constant we quantize, or that has none (one is added; a Gemm's only with alpha = beta = 1).
    MatMul has no bias input."""
    if target.weight is None or target.op not in ("Conv", "Gemm"):
        return False
    if target.bias is not None:
        return True
    node = proto.graph.node[target.index]
    no_bias = len(node.input) < 3 or not node.input[2]
    return no_bias and (target.op == "Conv" or (_attr(node, "alpha", 1.0) == 1.0 and _attr(node, "beta", 1.0) == 1.0))
