"""Graph-input dims fixed at load: ``batch_size`` (the leading dim of every input whose first dim
is 1 or symbolic) and ``dims`` (named, symbolic dims bound to values, e.g. {"T": 128}). Both edit
the graph inputs of a ModelProto's graph in place; the importer applies them to the model and to
its weight-free view alike."""
from __future__ import annotations


def data_input_names(graph) -> set:
    """The graph inputs that are data, not initializers (the names to pass as ``names`` below:
    a weight-free view lists its weights as inputs too)."""
    initializers = {t.name for t in graph.initializer}
    return {vi.name for vi in graph.input if vi.name not in initializers}


def _data_inputs(graph, names: set) -> list:
    return [vi for vi in graph.input if vi.name in names and vi.type.HasField("tensor_type")]


def set_batch_size(graph, batch_size: int, names: set) -> bool:
    """Sets the leading dim of every graph input whose first dim is 1 or symbolic; returns
    whether a fixed 1 was among them (the exporter's batch, which Reshapes may carry)."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
    fixed_one = False
    for vi in _data_inputs(graph, names):
        if not vi.type.tensor_type.shape.dim:
            continue
        first = vi.type.tensor_type.shape.dim[0]
        if not first.HasField("dim_value") or first.dim_value == 1:
            fixed_one = fixed_one or first.HasField("dim_value")
            first.Clear()
            first.dim_value = batch_size
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
    """``dims`` as {name: positive int}; ValueError for anything else."""
    if not isinstance(dims, dict):
        raise ValueError(f"dims must be a dict of dim name -> positive int, got {type(dims).__name__}")
    for name, value in dims.items():
        if not isinstance(name, str):
            raise ValueError(f"dims: a dim name must be a str, got {name!r}")
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"dims: '{name}' must be a positive int, got {value!r}")
    return dims


def bind_dims(graph, dims: dict, names: set) -> None:
    """Replaces every graph-input dim named in ``dims`` by its value; a name no input has is a
    ValueError naming the dims the model has."""
    known = named_dims(graph, names)
    unknown = sorted(set(dims) - set(known))
    if unknown:
        have = ", ".join(repr(n) for n in known) if known else "none"
        raise ValueError(f"dims: the model's inputs have no dim named {', '.join(map(repr, unknown))} "
                         f"(their named dims: {have})")
    for vi in _data_inputs(graph, names) + list(graph.output):  # outputs too: Model.outputs shows the values
        for d in vi.type.tensor_type.shape.dim:
            if d.HasField("dim_param") and d.dim_param in dims:
                value = dims[d.dim_param]
                d.Clear()
                d.dim_value = value
