"""Every value of a model made visible, for precision="fp16" (docs/precision.md, Note [fp16 range]
in engine/runtime/passes/half_range.cc):

- ``measure``: ``dnnx.load(..., precision="fp16", calibration=x)`` runs ``x`` once through the
  model in float32 on the CPU with every float value as an output, and hands the engine each
  value's mean, mean square and largest |value|; those replace the load-time estimate (from the
  weights) when it decides which layers stay float32 because their values leave fp16's range.
- ``first_nonfinite_layer``: after an fp16 run returned inf or NaN, one more run of the same
  inputs with every value as an output (on the same device and precision) names the first layer
  whose output is not finite (``NonFiniteWarning``)."""
import warnings
from typing import Dict, Optional, Tuple

import numpy as np
import onnx
from onnx import TensorProto, helper

from .errors import NonFiniteWarning


def every_value_as_output(proto: onnx.ModelProto) -> Tuple[onnx.ModelProto, list]:
    """A copy of `proto` whose graph outputs also list every float32 value a node makes (typed by
    onnx's shape inference; an untyped value is left out), and those values in node order as
    (node name, value name)."""
    inferred = onnx.shape_inference.infer_shapes(proto)
    typed = {vi.name: vi for vi in inferred.graph.value_info}
    out = onnx.ModelProto()
    out.CopyFrom(proto)
    present = {o.name for o in out.graph.output}
    values = []
    for i, node in enumerate(out.graph.node):
        for name in node.output:
            vi = typed.get(name)
            if name in present:
                values.append((node.name or f"#{i} ({node.op_type})", name))
                continue
            if not name or vi is None or vi.type.tensor_type.elem_type != TensorProto.FLOAT:
                continue
            out.graph.output.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))
            present.add(name)
            values.append((node.name or f"#{i} ({node.op_type})", name))
    return out, values


def _feeds(model, inputs) -> dict:
    """`inputs` as Model.run takes them (one array, a list or tuple in input order, or a dict)."""
    if isinstance(inputs, dict):
        return dict(inputs)
    arrays = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    if len(arrays) != len(model.inputs):
        raise ValueError(f"calibration: expected {len(model.inputs)} input(s) "
                         f"({', '.join(spec.name for spec in model.inputs)}), got {len(arrays)}")
    return {spec.name: a for spec, a in zip(model.inputs, arrays)}


def _stats(array) -> Optional[Tuple[float, float, float]]:
    a = np.asarray(array)
    if a.dtype.kind != "f" or a.size == 0:
        return None
    a = a.astype(np.float64)
    finite = a[np.isfinite(a)]
    peak = float(np.abs(finite).max()) if finite.size else 0.0
    if finite.size < a.size:
        peak = float("inf")  # float32 itself overflowed: nothing of this keeps in fp16
    return float(finite.mean()) if finite.size else 0.0, float((finite * finite).mean()) if finite.size else 0.0, peak


def measure(proto: onnx.ModelProto, calibration) -> Dict[str, Tuple[float, float, float]]:
    """{value name: (mean, mean square, max |value|)} of every float value (graph inputs included)
    when `calibration` runs through `proto` in float32 on the CPU, without rewrites (the values
    keep their ONNX names)."""
    from .model import load

    visible, _ = every_value_as_output(proto)
    cpu = load(visible, optimize=False, plan_cache=False)
    feeds = _feeds(cpu, calibration)
    got = cpu.run_dict(feeds)
    stats = {}
    for name, array in list(feeds.items()) + list(got.items()):
        s = _stats(array)
        if s is not None:
            stats[name] = s
    return stats


def first_nonfinite_layer(proto: onnx.ModelProto, load_options: dict, arrays: list) -> Optional[str]:
    """The first node (in graph order) whose output is not finite when `arrays` (host arrays in
    input order) run through `proto` loaded with `load_options`, every value an output; None when
    none is (or when the run itself fails: the caller then names the output alone)."""
    from .model import load

    visible, values = every_value_as_output(proto)
    options = {k: v for k, v in load_options.items() if k not in ("cuda_graph", "plan_cache", "max_plans")}
    model = load(visible, cuda_graph=False, plan_cache=False, max_plans=1, **options)
    # This model's own outputs are not finite either: it must neither search again (which recursed,
    # one nested model per level) nor warn; the caller warns once.
    model._nonfinite_layer = ""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonFiniteWarning)
        got = model.run_dict(*arrays)
    for node, name in values:
        out = got.get(name)
        if isinstance(out, np.ndarray) and out.dtype.kind == "f" and not np.isfinite(out).all():
            return f"{node} (output '{name}')"
    return None
