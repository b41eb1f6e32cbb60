"""Models exported with a fixed batch of 1 often bake that batch into their Reshape targets
(mnist-8: Reshape to [1, 256]). When ``batch_size=N`` overrides such an input, a Reshape whose
constant target starts with that 1 while its data now starts with N gets the target [N, ...]:
the batch survives the Reshape instead of failing at load (or, with a -1 elsewhere, silently
folding the batch into another dim)."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import numpy_helper

from ._shapes import static_shapes

EXPORTED_BATCH = 1


def _constant_values(graph: onnx.GraphProto) -> dict:
    """{name: array} of the initializers and Constant nodes' tensor values."""
    values = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    for node in graph.node:
        if node.op_type == "Constant" and len(node.attribute) == 1 and node.attribute[0].name == "value":
            values[node.output[0]] = numpy_helper.to_array(node.attribute[0].t)
    return values


def rebatch_reshapes(model: onnx.ModelProto, batch_size: int) -> list:
    """Rewrites, in graph order, every Reshape that carries the exported batch of 1 past the
    new batch; returns the names of the nodes it changed. Shapes are re-inferred after each
    rewrite, since one Reshape's output feeds the next one's data."""
    if batch_size == EXPORTED_BATCH:
        return []
    graph = model.graph
    changed = []
    for index, node in enumerate(graph.node):
        if node.op_type != "Reshape" or len(node.input) < 2:
            continue
        target = _constant_values(graph).get(node.input[1])
        if target is None or target.ndim != 1 or target.size == 0 or target[0] != EXPORTED_BATCH:
            continue
        data_dims = static_shapes(model).get(node.input[0])
        if not data_dims or data_dims[0] != batch_size:
            continue
        new_target = np.array(target, dtype=np.int64)
        new_target[0] = batch_size
        name = f"{node.input[1]}__batch{batch_size}"
        graph.initializer.append(numpy_helper.from_array(new_target, name))
        node.input[1] = name
        changed.append(node.name or f"{node.op_type}_{index}")
    return changed
