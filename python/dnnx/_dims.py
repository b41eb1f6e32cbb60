"""Graph-input dims fixed at load: ``batch_size`` (the one batch rule, below) and ``dims`` (named,
symbolic dims bound to values, e.g. {"T": 128}). Both edit the graph inputs of a ModelProto's
graph in place; the importer applies them to the model and to its weight-free view alike.

Note [one batch rule]: ``batch_size`` means the same wherever it is given (``dnnx.load``,
``Model.plan``, ``Model.memory``, every CLI ``--batch``); ``batch_positions`` decides, for each
data input, which dim it binds:

- the leading dim, when it is symbolic or 1 (1: the exporter's batch, which _rebatch.py follows
  into the Reshape targets);
- otherwise the input's only symbolic dim (a time-major [T=16, N, F] input binds N);
- an input with a fixed leading dim other than 1 and several symbolic dims is ambiguous: a
  ValueError that says to bind them by name with ``dims=``;
- an input without symbolic dims whose leading dim is not 1 has no batch to bind and keeps its
  shape; when no input takes the batch at all (every one fixed) a batch_size other than their
  leading dim is a ValueError (the model's batch is fixed: nothing would change).

A symbolic dim that takes the batch takes it everywhere its name appears (other inputs, the
outputs). 0 is a valid batch (an empty batch: ONNX allows empty tensors); a negative or
non-integer value is a ValueError naming the argument."""
from __future__ import annotations

import numbers

UNNAMED = "?"  # how a symbolic dim without a name is shown (Model.inputs)


def data_input_names(graph) -> set:
    """The graph inputs that are data, not initializers (the names to pass as ``names`` below:
    a weight-free view lists its weights as inputs too)."""
    initializers = {t.name for t in graph.initializer}
    return {vi.name for vi in graph.input if vi.name not in initializers}


def _data_inputs(graph, names: set) -> list:
    return [vi for vi in graph.input if vi.name in names and vi.type.HasField("tensor_type")]


def _proto_dims(vi) -> list:
    """An input's dims as Model.inputs shows them: ints, and a str for each symbolic dim."""
    return [d.dim_value if d.HasField("dim_value") else (d.dim_param or UNNAMED)
            for d in vi.type.tensor_type.shape.dim]


def check_size(value, argument: str) -> int:
    """``value`` as a dim size: an int >= 0 (0: an empty tensor); a ValueError naming ``argument``
    for anything else (a bool, a float such as 2.5, a negative int)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise ValueError(f"{argument} must be an int >= 0 (0: an empty batch), got {value!r}")
    return int(value)


def _shape_text(dims) -> str:
    return "[" + ", ".join(str(d) for d in dims) + "]"


def batch_positions(inputs: list, batch_size) -> list:
    """Note [one batch rule]: ``inputs`` is [(name, dims)] (dims as ints, and strs for symbolic
    dims); returns, per input, the index of the dim ``batch_size`` binds, or None (a scalar, or a
    fixed shape that keeps its size)."""
    batch_size = check_size(batch_size, "batch_size")
    positions, fixed = [], []
    for name, dims in inputs:
        symbolic = [i for i, d in enumerate(dims) if isinstance(d, str)]
        if not dims:
            positions.append(None)
        elif isinstance(dims[0], str) or dims[0] == 1:
            positions.append(0)
        elif len(symbolic) == 1:
            positions.append(symbolic[0])
        elif symbolic:
            raise ValueError(f"batch_size: input '{name}' {_shape_text(dims)} has a fixed leading dim and "
                             f"{len(symbolic)} symbolic dims, so its batch dim is ambiguous: bind them by name "
                             f"with dims= (e.g. dims={{{dims[symbolic[0]]!r}: {batch_size}}})")
        else:
            positions.append(None)
            fixed.append((name, dims))
    taken = any(p is not None for p in positions)
    if not taken and fixed and any(dims[0] != batch_size for _, dims in fixed):
        shapes = ", ".join(f"'{name}' {_shape_text(dims)}" for name, dims in fixed)
        raise ValueError(f"batch_size={batch_size}: no input dim takes a batch (a batch binds a leading dim that "
                         f"is symbolic or 1, else an input's only symbolic dim); the inputs have fixed shapes: "
                         f"{shapes}. Bind named dims with dims=, or export the model with a symbolic batch dim")
    return positions


def batch_bindings(inputs: list, batch_size) -> tuple:
    """(positions, names): ``batch_positions``, and the symbolic dim names among the bound dims
    (each takes the batch wherever it appears)."""
    positions = batch_positions(inputs, batch_size)
    names = {dims[p] for (_, dims), p in zip(inputs, positions)
             if p is not None and isinstance(dims[p], str) and dims[p] != UNNAMED}
    return positions, names


def batched_shapes(inputs: list, shapes: list, batch_size) -> list:
    """``shapes`` (one concrete shape per input, symbolic dims already given a size) with
    ``batch_size`` bound under the rule: what Model.plan/memory(batch_size=) plan."""
    positions, names = batch_bindings(inputs, batch_size)
    out = []
    for (_, dims), shape, p in zip(inputs, shapes, positions):
        shape = list(shape)
        for i, d in enumerate(dims):
            if i == p or (isinstance(d, str) and d in names):
                shape[i] = int(batch_size)
        out.append(shape)
    return out


def set_batch_size(graph, batch_size, names: set) -> bool:
    """Binds ``batch_size`` in the graph inputs under the rule (and in the outputs, where a bound
    dim's name appears); returns whether a fixed 1 was among the dims it replaced (the exporter's
    batch, which Reshapes may carry)."""
    inputs = _data_inputs(graph, names)
    positions, bound_names = batch_bindings([(vi.name, _proto_dims(vi)) for vi in inputs], batch_size)
    fixed_one = False
    for vi, p in zip(inputs, positions):
        if p is None:
            continue
        dim = vi.type.tensor_type.shape.dim[p]
        fixed_one = fixed_one or (dim.HasField("dim_value") and dim.dim_value == 1)
        dim.Clear()
        dim.dim_value = int(batch_size)
    if bound_names:
        _bind_named(inputs + list(graph.output), {name: int(batch_size) for name in bound_names})
    return fixed_one


def named_dims(graph, names: set) -> list:
    """The symbolic dim names of the graph inputs, in order of first appearance."""
    found = []
    for vi in _data_inputs(graph, names):
        for d in vi.type.tensor_type.shape.dim:
            if d.HasField("dim_param") and d.dim_param and d.dim_param not in found:
                found.append(d.dim_param)
    return found


def check_dims(dims) -> dict:
    """``dims`` as {name: int >= 0}; ValueError for anything else."""
    if not isinstance(dims, dict):
        raise ValueError(f"dims must be a dict of dim name -> int >= 0, got {type(dims).__name__}")
    for name, value in dims.items():
        if not isinstance(name, str):
            raise ValueError(f"dims: a dim name must be a str, got {name!r}")
        check_size(value, f"dims: '{name}'")
    return {name: int(value) for name, value in dims.items()}


def _bind_named(value_infos, dims: dict) -> None:
    for vi in value_infos:
        if not vi.type.HasField("tensor_type"):
            continue
        for d in vi.type.tensor_type.shape.dim:
            if d.HasField("dim_param") and d.dim_param in dims:
                value = dims[d.dim_param]
                d.Clear()
                d.dim_value = value


def bind_dims(graph, dims: dict, names: set) -> None:
    """Replaces every graph-input dim named in ``dims`` by its value; a name no input has is a
    ValueError naming the dims the model has."""
    known = named_dims(graph, names)
    unknown = sorted(set(dims) - set(known))
    if unknown:
        have = ", ".join(repr(n) for n in known) if known else "none"
        raise ValueError(f"dims: the model's inputs have no dim named {', '.join(map(repr, unknown))} "
                         f"(their named dims: {have})")
    # outputs too: Model.outputs shows the values
    _bind_named(_data_inputs(graph, names) + list(graph.output), dims)
