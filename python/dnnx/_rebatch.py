"""Models exported with a fixed batch of 1 often bake that batch into their Reshape targets
(mnist-8: Reshape to [1, 256]). When ``batch_size=N`` overrides such an input, a Reshape whose
constant target starts with that 1 while its data now starts with N gets the target [N, ...]:
the batch survives the Reshape instead of failing at load (or, with a -1 elsewhere, silently
folding the batch into another dim).

The data shapes come from onnx's shape inference over the weight-free view (_view.py), run once
for all Reshapes; again only while a rewrite made a later candidate's data shape knowable (one
Reshape's output feeding the next one's data), so usually once or twice, never over the weights."""
from __future__ import annotations

import numpy as np

from . import _view
from ._onnx import protos
from ._tensors import INT64, tensor_array

EXPORTED_BATCH = 1


def _small_constants(view) -> dict:
    """{name: tensor} of the view's constant values: its (small) initializers and Constant nodes."""
    values = {t.name: t for t in view.graph.initializer}
    for node in view.graph.node:
        if node.op_type == "Constant" and len(node.attribute) == 1 and node.attribute[0].name == "value":
            values[node.output[0]] = node.attribute[0].t
    return values


def _candidates(view) -> dict:
    """{Reshape output: (target name, target value)} of the Reshapes whose constant target starts with 1."""
    constants = _small_constants(view)
    found = {}
    for node in view.graph.node:
        if node.op_type != "Reshape" or len(node.input) < 2 or node.input[1] not in constants:
            continue
        target = tensor_array(constants[node.input[1]], f"Reshape target '{node.input[1]}'")
        if target.ndim == 1 and target.size and target[0] == EXPORTED_BATCH:
            found[node.output[0]] = (node.input[1], target)
    return found


def _data_shapes(view) -> dict:
    """known_dims of the view after shape inference, its stored value infos and output shapes
    dropped first (they may still hold the exporter's batch)."""
    probe = protos().ModelProto()
    probe.CopyFrom(view)  # the view is small: no weights in it
    del probe.graph.value_info[:]
    for out in probe.graph.output:
        if out.type.HasField("tensor_type"):
            out.type.tensor_type.ClearField("shape")
    return _view.known_dims(_view.inferred(probe))


def _new_target(graph, name: str, target: np.ndarray, batch_size: int) -> str:
    value = np.array(target, dtype=np.int64)
    value[0] = batch_size
    new_name = f"{name}__batch{batch_size}"
    if all(t.name != new_name for t in graph.initializer):
        tensor = graph.initializer.add()
        tensor.name, tensor.data_type = new_name, INT64
        tensor.dims.extend(value.shape)
        tensor.raw_data = value.astype("<i8").tobytes()
    return new_name


def rebatch_reshapes(model, view, batch_size: int) -> list:
    """Rewrites, in ``model`` and its ``view`` alike, every Reshape that carries the exported batch
    of 1 past the new batch; returns the outputs of the Reshapes it changed."""
    if batch_size == EXPORTED_BATCH:
        return []
    pending, changed = _candidates(view), []
    while pending:
        shapes = _data_shapes(view)
        done = []
        for graph in (view.graph, model.graph):
            for node in graph.node:
                entry = pending.get(node.output[0]) if node.op_type == "Reshape" else None
                data = shapes.get(node.input[0]) if entry else None
                if data and data[0] == batch_size:
                    node.input[1] = _new_target(graph, entry[0], entry[1], batch_size)
                    done.append(node.output[0])
        if not done:
            break
        for out in set(done):
            pending.pop(out)
        changed += sorted(set(done))
    return changed
