"""The QDQ graph of dnnx's own int8 (docs/precision.md, "int8"), as onnxruntime's quantize_static
writes it in its QDQ format: around each quantized Conv, Gemm or MatMul,

    x (float) -> QuantizeLinear(scale, zp: uint8) -> DequantizeLinear -> Conv's input      (per tensor)
    W int8 initializer (zp 0)                     -> DequantizeLinear(axis) -> Conv's W     (per channel)
    B int32 initializer, scale = x scale * W scale (zp 0) -> DequantizeLinear -> Conv's B

Weights are symmetric int8 with one scale per output channel: axis 0 of a Conv's W [M, C/g, k..],
the N axis of a Gemm's B ([K, N], or [N, K] with transB) and the last axis of a MatMul's constant
B [.., K, N]. Activations are asymmetric uint8, one (scale, zero point) per tensor, shared by every
quantized layer that reads the tensor. A layer the accuracy guard keeps in float reads the float
tensors as before. Per-axis scales need opset 13: older models are upgraded with onnx's version
converter."""
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


def _rebuild(proto, targets: List[Target], act_params, per_channel: bool, probe: bool,
             corrections: Optional[Dict[str, np.ndarray]] = None) -> onnx.ModelProto:
    out = onnx.ModelProto()
    out.CopyFrom(proto)
    builder = _Builder(proto, act_params, per_channel)
    by_index = {t.index: t for t in targets}
    nodes = []
    for i, node in enumerate(proto.graph.node):
        t = by_index.get(i)
        if t is None:
            nodes.append(node)
            continue
        ins = builder.inputs(t, node, (corrections or {}).get(t.name))
        nodes.extend(builder.take_nodes())
        if probe:  # the float layer as it is, and a quantized twin beside it
            twin = onnx.NodeProto()
            twin.CopyFrom(node)
            twin.name = node.name + PROBE_SUFFIX
            del twin.input[:]
            twin.input.extend(ins)
            del twin.output[:]
            twin.output.extend([node.output[0] + PROBE_SUFFIX])
            nodes += [node, twin]
        else:
            changed = onnx.NodeProto()
            changed.CopyFrom(node)
            del changed.input[:]
            changed.input.extend(ins)
            nodes.append(changed)
    del out.graph.node[:]
    out.graph.node.extend(nodes)
    out.graph.initializer.extend(builder.initializers)
    if probe:
        del out.graph.output[:]
        for t in targets:
            name = proto.graph.node[t.index].output[0]
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


def qdq_model(proto, targets: List[Target], act_params, per_channel: bool, corrections=None) -> onnx.ModelProto:
    """`proto` with the layers `targets` quantized (QDQ pairs on their inputs; `corrections`
    {layer name: float [M]} subtracted from their biases), the float weights they no longer read
    removed."""
    return _rebuild(proto, targets, act_params, per_channel, probe=False, corrections=corrections)


def probe_model(proto, targets: List[Target], act_params, per_channel: bool, corrections=None) -> onnx.ModelProto:
    """The guard's probe: `proto` with, beside each target, a quantized twin reading the same float
    inputs through QDQ; its outputs are each target's float output and its twin's, in pairs
    (output name, output name + PROBE_SUFFIX). Each twin sees fp32 inputs: its error is the
    layer's own, not the sum of the layers before it."""
    return _rebuild(proto, targets, act_params, per_channel, probe=True, corrections=corrections)


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
