"""Note [int8 fine-tuning]: fine-tuning a quantized model trains a float tail on the int8 head's
features (issue #37). A QDQ graph (dnnx.quantize's, onnxruntime's quantize_static's) gives its
layers weights through DequantizeLinear of int8 constants, so no layer has a float weight to train
("last:N" found none). Before the Tuner starts, the layers to train are made float:

- each one's weight DequantizeLinear(W_q, scale, zero point) (and its bias's, an int32 one in the
  sums' scale) becomes a float32 initializer of the same values, (W_q - zero point) * scale per
  tensor or per axis, under the DequantizeLinear's output name (what the layer read);
- every activation pair QuantizeLinear -> DequantizeLinear inside the tail (its input written by
  a node at or after the first trained layer, its readers all there too) is bypassed (its
  readers read the QuantizeLinear's input), so the tail computes in float32 and gradients flow
  through it. The pair between the head and the tail stays: the tail trains on the features the
  int8 model computes, quantization included. Bypassing the tail's own pairs is the one change
  to the outputs before any step (a few tenths of a percent on LeNet).

The head stays as it was: int8 layers with int32 accumulation. ``save()`` writes this graph, the
quantized head and the float tail with the tuned weights; quantizing the tuned tail again is
``dnnx.quantize``'s work on that file. Blocked weight quantization (block_size) is refused by name.
"""
from __future__ import annotations

import numpy as np

PARAM_OPS = ("Conv", "ConvTranspose", "Gemm", "MatMul")


def _producers(graph) -> dict:
    return {out: node for node in graph.node for out in node.output if out}


def _weight_dequantize(node, producers, constants, index=1):
    """The DequantizeLinear giving `node` its weight (input 1; 2: its bias) from constants, or None."""
    if node.op_type not in PARAM_OPS or len(node.input) <= index or not node.input[index]:
        return None
    dq = producers.get(node.input[index])
    if dq is None or dq.op_type != "DequantizeLinear" or dq.domain not in ("", "ai.onnx"):
        return None
    return dq if all(name in constants for name in dq.input if name) else None


def tail_layers(proto, trainable) -> list:
    """The nodes of `proto` that ``trainable`` names and whose weights are dequantized int8
    constants: "last:N" counts the parameterised layers (Conv, ConvTranspose, Gemm, MatMul with a
    constant or dequantized constant weight) from the end; "all" takes every one; a list of
    names takes the layers whose weight is read from those initializers (the int8 ones or the
    float ones this rewrite names)."""
    graph = proto.graph
    constants = {t.name for t in graph.initializer}
    producers = _producers(graph)
    layers = [n for n in graph.node if n.op_type in PARAM_OPS and len(n.input) > 1 and
              (n.input[1] in constants or _weight_dequantize(n, producers, constants) is not None)]
    if isinstance(trainable, str) and trainable.startswith("last:"):
        try:
            count = int(trainable[5:])
        except ValueError:
            return []  # the Trainer names the bad argument
        chosen = layers[-count:] if count > 0 else []
    elif trainable == "all":
        chosen = layers
    elif isinstance(trainable, (list, tuple)):
        names = set(trainable)
        quantized = {n.input[1]: producers[n.input[1]].input[0] for n in layers if n.input[1] in producers}
        chosen = [n for n in layers if n.input[1] in names or quantized.get(n.input[1]) in names]
    else:
        return []
    return [n for n in chosen if _weight_dequantize(n, producers, constants) is not None]


def _dequantized(dq, arrays) -> np.ndarray:
    """DequantizeLinear's output for constant inputs (per tensor or per axis), float32."""
    q = arrays[dq.input[0]].astype(np.float64)
    scale = arrays[dq.input[1]].astype(np.float64)
    zp = arrays[dq.input[2]].astype(np.float64) if len(dq.input) > 2 and dq.input[2] else np.zeros_like(scale)
    attrs = {a.name: a for a in dq.attribute}
    if "block_size" in attrs and attrs["block_size"].i:
        raise ValueError(f"finetune: node '{dq.name}' (DequantizeLinear) quantizes its weight in blocks "
                         f"(block_size {attrs['block_size'].i}); fine-tuning makes per-tensor and per-axis "
                         f"weights float only")
    if scale.ndim == 1 and scale.size > 1:  # per axis
        axis = attrs["axis"].i if "axis" in attrs else 1
        shape = [1] * q.ndim
        shape[axis % q.ndim] = scale.size
        scale, zp = scale.reshape(shape), zp.reshape(shape)
    return ((q - zp) * scale).astype(np.float32)


def float_tail(proto, trainable):
    """A copy of `proto` whose `trainable` layers are float, with every activation QDQ pair inside
    the tail bypassed; None where no layer `trainable` names reads a dequantized weight."""
    from onnx import numpy_helper

    layers = tail_layers(proto, trainable)
    if not layers:
        return None
    out = type(proto)()
    out.CopyFrom(proto)
    graph = out.graph
    constants = {t.name for t in graph.initializer}
    arrays = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    producers = _producers(graph)
    names = [n.name for n in layers]
    order = {id(n): i for i, n in enumerate(graph.node)}
    by_name = {n.name: n for n in graph.node}
    first = min(order[id(by_name[name])] for name in names)
    tail = {id(n) for i, n in enumerate(graph.node) if i >= first}
    dead = set()
    for name in names:
        node = by_name[name]
        for index in (1, 2):  # the weight, and an int32 bias dequantized to the sums' scale
            dq = _weight_dequantize(node, producers, constants, index)
            if dq is None or id(dq) in dead:
                continue
            graph.initializer.append(numpy_helper.from_array(_dequantized(dq, arrays), dq.output[0]))
            dead.add(id(dq))
    readers: dict = {}
    for n in graph.node:
        for v in n.input:
            readers.setdefault(v, []).append(n)
    for dq in list(graph.node):
        if dq.op_type != "DequantizeLinear" or id(dq) in dead:
            continue
        q = producers.get(dq.input[0])
        users = readers.get(dq.output[0], [])
        if q is None or q.op_type != "QuantizeLinear" or not users or any(id(u) not in tail for u in users):
            continue
        source = producers.get(q.input[0])
        if source is None or id(source) not in tail:  # the head's features stay quantized as they were
            continue
        if any(dq.output[0] == o.name for o in graph.output):
            continue
        for user in users:
            for i, v in enumerate(user.input):
                if v == dq.output[0]:
                    user.input[i] = q.input[0]
        dead.add(id(dq))
    # QuantizeLinears (and weight DequantizeLinears) no longer read by anything go too
    used = {v for n in graph.node if id(n) not in dead for v in n.input} | {o.name for o in graph.output}
    for n in graph.node:
        if n.op_type == "QuantizeLinear" and not any(o in used for o in n.output):
            dead.add(id(n))
    kept = [n for n in graph.node if id(n) not in dead]
    del graph.node[:]
    graph.node.extend(kept)
    used = {v for n in graph.node for v in n.input}
    unused = [t for t in graph.initializer if t.name not in used]
    for t in unused:
        graph.initializer.remove(t)
    return out
