"""dnnx's own int8: ``dnnx.quantize`` and ``dnnx.load(..., precision="int8", calibration=x)``
(docs/precision.md, "int8"). Runs of dnnx itself, in fp32 on the CPU, over the calibration data:

1. calibrate: the float inputs of every Conv, Gemm and MatMul, the inputs and outputs of the
   residual joins (Note [int8 residual join] in _quant_graph.py) and the model's outputs are made
   graph outputs of a copy of the model; their values give each activation's range (minmax,
   percentile or entropy: _quant_ranges.py) and so its uint8 scale and zero point;
2. guard (Note [int8 guard]): a probe model holds, beside each of those layers, a quantized twin
   reading the same fp32 inputs through QDQ; the relative RMS error of each twin's output against
   its float layer's output is the layer's own error. The first probe run also gives each layer's
   bias correction (Note [bias correction]); a second one, with the corrected biases, measures
   the errors the guard decides on: a layer whose error exceeds ``int8_tolerance`` stays float
   (no QDQ pair around it); each join is measured by a twin too, and stays float where its error
   exceeds the tolerance or its Convs stay float;
3. the QDQ model (_quant_graph.py) of the layers and joins kept int8 is built, and run once more: its
   outputs' error against fp32 is reported (``QuantReport.output_error``).

The file is written atomically (a temporary file renamed over ``out_path``).

Note [int8 guard]: each layer's error is measured with fp32 inputs, not behind the layers quantized
before it: it is what that layer's quantization costs, so a decision does not depend on the
decisions upstream and one bad layer does not push every later layer over the tolerance. The
end-to-end effect is reported separately (``output_error``). A residual join is measured on the
same terms: its twin reads its fp32 inputs quantized, and its output's quantization (the next
layers' input's) counts where those layers are measured.

Note [bias correction]: rounding a channel's weights shifts that channel's output by a constant on
average wherever its inputs have a nonzero mean (after a ReLU they all do): (W_q - W) E[x]. The
first probe run measures each layer's mean output error per channel (axis 1); it is subtracted
from the layer's bias (a zero bias is added to a Conv or Gemm that has none; MatMul has no bias
input and is not corrected), the way empirical bias correction does (Nagel et al., "Data-Free
Quantization Through Weight Equalization and Bias Correction", 2019). Without it, per-channel int8
weights alone cost He-initialised 3x3 convolutions about 0.75 % and the 1 % guard kept 49 of the
56 layers of the zoo's ResNet-50-D int8 (4 calibration images); with it the median layer error
went from 0.88 % to 0.51 %, 55 of 56 layers stayed int8, and the output's error on 8 other
images went from 1.4 % to 0.44 %. The guard's errors are measured on the data that gave the
corrections: with a few thousand values per channel (a convolution's) that flatters little, as
the other images' output error shows; a Gemm calibrated on a few rows gains more in-sample."""
from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Dict, List

import numpy as np

from . import _progress
from ._quant_ranges import METHODS, uint8_params, value_range
from ._quant_report import JOIN_OP, LayerDecision, QuantReport

DEFAULT_TOLERANCE = 0.01   # 1 % relative RMS error per layer (docs/precision.md)
CALIBRATION_BATCH = 32     # rows per run when the batch dim is symbolic (bounds the values held per run)
SAMPLES_PER_RUN = 1 << 20  # values per tensor per run kept for percentile and entropy (a strided subsample)


def check_options(calibration, calibration_method, per_channel, int8_tolerance) -> float:
    """ValueErrors naming the argument; returns the tolerance as a float."""
    if calibration is None:
        raise ValueError("calibration: int8 needs calibration data (inputs as Model.run takes them: an array, "
                         "a list in input order, or a dict by input name; a few hundred typical rows)")
    if calibration_method not in METHODS:
        raise ValueError(f"calibration_method: expected one of {', '.join(repr(m) for m in METHODS)}, "
                         f"got {calibration_method!r}")
    if not isinstance(per_channel, (bool, np.bool_)):
        raise ValueError(f"per_channel: expected True or False, got {per_channel!r}")
    if isinstance(int8_tolerance, bool) or not isinstance(int8_tolerance, (int, float, np.floating, np.integer)):
        raise ValueError(f"int8_tolerance: expected a number >= 0 (a relative RMS error, 0.01 = 1%), "
                         f"got {int8_tolerance!r}")
    tolerance = float(int8_tolerance)
    if not (math.isfinite(tolerance) and tolerance >= 0.0):
        raise ValueError(f"int8_tolerance: expected a finite number >= 0 (0.01 = 1%), got {int8_tolerance!r}")
    return tolerance


def read_model(src):
    """An onnx.ModelProto from a path, bytes or ModelProto (not changed: the work is on copies)."""
    import onnx

    if isinstance(src, onnx.ModelProto):
        return src
    if isinstance(src, (bytes, bytearray)):
        return onnx.load_from_string(bytes(src))
    if isinstance(src, (str, os.PathLike)):
        if not Path(src).is_file():
            raise FileNotFoundError(f"src: model file not found: {src}")
        return onnx.load(str(src))
    raise ValueError(f"src: expected a path, bytes or onnx.ModelProto, got {type(src).__name__}")


def _batches(model, calibration) -> List[dict]:
    """The calibration inputs as feeds of at most one batch each: split along the leading dim into
    the model's fixed batch size, or into CALIBRATION_BATCH rows where that dim is symbolic."""
    if isinstance(calibration, dict):
        feeds = dict(calibration)
    else:
        arrays = list(calibration) if isinstance(calibration, (list, tuple)) else [calibration]
        if len(arrays) != len(model.inputs):
            raise ValueError(f"calibration: expected {len(model.inputs)} input(s) "
                             f"({', '.join(spec.name for spec in model.inputs)}), got {len(arrays)}")
        feeds = {spec.name: a for spec, a in zip(model.inputs, arrays)}
    names = [spec.name for spec in model.inputs]
    if sorted(feeds) != sorted(names):
        raise ValueError(f"calibration: expected inputs {names}, got {sorted(feeds)}")
    feeds = {name: np.asarray(a) if isinstance(a, (list, tuple)) else a for name, a in feeds.items()}
    first = model.inputs[0]
    rows = np.shape(feeds[first.name])[0] if np.ndim(feeds[first.name]) else 1
    if rows == 0:
        raise ValueError(f"calibration: input '{first.name}' has no rows (an empty batch calibrates nothing)")
    declared = first.shape[0] if first.shape else None
    if isinstance(declared, int) and declared > 0:
        if rows % declared:
            raise ValueError(f"calibration: input '{first.name}' has {rows} rows; this model's batch is fixed at "
                             f"{declared}: give a multiple of {declared}")
        step = declared
    else:
        step = min(rows, CALIBRATION_BATCH)
    batched = [n for n in names if np.ndim(feeds[n]) and np.shape(feeds[n])[0] == rows]
    return [{n: (feeds[n][start:start + step] if n in batched else feeds[n]) for n in names}
            for start in range(0, rows, step)]


def _load_fp32(proto):
    from .model import load

    return load(proto, optimize=False, plan_cache=False)


def _subsample(a: np.ndarray) -> np.ndarray:
    flat = np.asarray(a, np.float32).ravel()
    return flat[::max(1, flat.size // SAMPLES_PER_RUN)]


def _calibrate(base, targets, joins, batches, method, show):
    """({activation: (scale, zero point)}, {graph output: fp32 arrays per batch}); the activations
    are the targets' and the joins' inputs and outputs (Note [int8 residual join])."""
    from ._quant_graph import with_outputs

    graph_inputs = {i.name for i in base.graph.input}
    activations = list(dict.fromkeys([t for target in targets for _, t in target.activations] +
                                     [t for j in joins for t in (*j.inputs, j.output)]))
    outputs = [o.name for o in base.graph.output]
    watched = list(dict.fromkeys([a for a in activations if a not in graph_inputs] + outputs))
    model = _load_fp32(with_outputs(base, watched))
    samples: Dict[str, list] = {a: [] for a in activations}
    extremes: Dict[str, list] = {a: [] for a in activations}
    reference: Dict[str, list] = {o: [] for o in outputs}
    with _progress.bar(total=len(batches), desc="int8: calibrating", unit="batch", show=show) as bar:
        for feeds in batches:
            got = dict(model.run_dict(feeds))
            got.update({name: feeds[name] for name in activations if name in graph_inputs})
            for a in activations:
                values = np.asarray(got[a], np.float32)
                finite = values[np.isfinite(values)]
                if finite.size:
                    extremes[a] += [float(finite.min()), float(finite.max())]
                if method != "minmax":
                    samples[a].append(_subsample(values))
            for o in outputs:
                reference[o].append(np.asarray(got[o]))
            bar.update()
    params = {}
    for a in activations:
        if method == "minmax":
            low, high = (min(extremes[a] + [0.0]), max(extremes[a] + [0.0]))
        else:
            low, high = value_range(np.concatenate(samples[a]), method)
        params[a] = uint8_params(low, high)
    return params, reference


def _layer_errors(base, targets, joins, params, per_channel, batches, show, corrections=None):
    """({layer or join name: relative RMS error of its int8 twin's output against its fp32 output},
    {name: the twin's mean error per output channel (axis 1), float [M]})."""
    from ._quant_graph import PROBE_SUFFIX, probe_model

    model = _load_fp32(probe_model(base, targets, params, per_channel, corrections, joins))
    outs = {t.name: base.graph.node[t.index].output[0] for t in targets}
    outs.update({j.name: j.output for j in joins})
    diff = {name: 0.0 for name in outs}
    ref = {name: 0.0 for name in outs}
    channel_sum: Dict[str, np.ndarray] = {}
    channel_count: Dict[str, int] = {}
    with _progress.bar(total=len(batches), desc="int8: measuring each layer", unit="batch", show=show) as bar:
        for feeds in batches:
            got = model.run_dict(feeds)
            for name, out in outs.items():
                f = np.asarray(got[out], np.float64)
                d = np.asarray(got[out + PROBE_SUFFIX], np.float64) - f
                diff[name] += float(np.sum(d * d))
                ref[name] += float(np.sum(f * f))
                if d.ndim >= 2:
                    per_channel_d = np.moveaxis(d, 1, 0).reshape(d.shape[1], -1)
                    channel_sum[name] = channel_sum.get(name, 0.0) + per_channel_d.sum(axis=1)
                    channel_count[name] = channel_count.get(name, 0) + per_channel_d.shape[1]
            bar.update()
    means = {name: (channel_sum[name] / channel_count[name]).astype(np.float32)
             for name in channel_sum if channel_count[name]}
    return {name: _relative(diff[name], ref[name]) for name in outs}, means


def _relative(diff_sq: float, ref_sq: float) -> float:
    if not (math.isfinite(diff_sq) and math.isfinite(ref_sq)):
        return math.inf
    if ref_sq == 0.0:
        return 0.0 if diff_sq == 0.0 else math.inf
    return math.sqrt(diff_sq / ref_sq)


def _output_errors(qdq, batches, reference) -> Dict[str, float]:
    from .model import load

    model = load(qdq, plan_cache=False)
    diff = {o: 0.0 for o in reference}
    ref = {o: 0.0 for o in reference}
    for i, feeds in enumerate(batches):
        got = model.run_dict(feeds)
        for o in reference:
            if o not in got or np.asarray(got[o]).dtype.kind != "f":
                continue
            f = np.asarray(reference[o][i], np.float64)
            diff[o] += float(np.sum((np.asarray(got[o], np.float64) - f) ** 2))
            ref[o] += float(np.sum(f * f))
    return {o: _relative(diff[o], ref[o]) for o in reference if ref[o] or diff[o]}


def _layer_decision(target, error: float, tolerance: float) -> LayerDecision:
    """Note [int8 guard]: int8 where the layer's own error is within the tolerance."""
    if error <= tolerance:
        return LayerDecision(target.name, target.op, error, "int8", f"error within int8_tolerance {100.0 * tolerance:g}%")
    return LayerDecision(target.name, target.op, error, "fp32",
                         f"kept in fp32: error {100.0 * error:.3g}% exceeds int8_tolerance {100.0 * tolerance:g}%")


def _join_decision(join, error: float, tolerance: float, int8_convs) -> LayerDecision:
    """Note [int8 residual join]: int8 where one of the Convs that write its inputs is int8 (the
    fused layer is that Conv's) and the join's own error is within the tolerance; a float join's
    Conv keeps its float output."""
    convs = ", ".join(join.convs)
    if not any(name in int8_convs for name in join.convs):
        return LayerDecision(join.name, JOIN_OP, error, "fp32",
                             f"kept in fp32: a residual join whose Conv ({convs}) is kept in fp32")
    if error > tolerance:
        return LayerDecision(join.name, JOIN_OP, error, "fp32",
                             f"kept in fp32: error {100.0 * error:.3g}% exceeds int8_tolerance {100.0 * tolerance:g}% "
                             f"(a residual join: {convs} keep{'s' if len(join.convs) == 1 else ''} a float output)")
    return LayerDecision(join.name, JOIN_OP, error, "int8",
                         f"error within int8_tolerance {100.0 * tolerance:g}% (a residual join: its inputs and "
                         f"output quantized, fused into {' or '.join(join.convs)}'s Int8Conv)")


def quantize_model(src, calibration, calibration_method="minmax", per_channel=True,
                   int8_tolerance=DEFAULT_TOLERANCE, show_progress=True) -> QuantReport:
    """The QDQ model and the guard's decisions (QuantReport; ``model`` is the onnx.ModelProto, not
    written anywhere)."""
    from ._quant_graph import correctable, find_joins, find_targets, prepared, qdq_model

    tolerance = check_options(calibration, calibration_method, per_channel, int8_tolerance)
    base = prepared(read_model(src))
    targets = find_targets(base)
    if not targets:
        raise ValueError("src: the model has no Conv, Gemm or MatMul layer with float32 inputs and constant "
                         "weights: nothing to quantize to int8")
    joins = find_joins(base, targets)
    batches = _batches(_load_fp32(base), calibration)
    params, reference = _calibrate(base, targets, joins, batches, calibration_method, show_progress)
    errors, mean_errors = _layer_errors(base, targets, joins, params, bool(per_channel), batches, show_progress)
    # Note [bias correction]: each layer's mean output error per channel, taken off its bias, and
    # every layer measured again.
    corrections = {t.name: mean_errors[t.name] for t in targets
                   if correctable(base, t) and t.name in mean_errors and np.all(np.isfinite(mean_errors[t.name]))}
    if corrections:
        errors, _ = _layer_errors(base, targets, joins, params, bool(per_channel), batches, show_progress,
                                  corrections)
    rows = {t.index: _layer_decision(t, errors[t.name], tolerance) for t in targets}
    kept = [t for t in targets if rows[t.index].precision == "int8"]
    int8_convs = {t.name for t in kept}
    rows.update({j.index: _join_decision(j, errors[j.name], tolerance, int8_convs) for j in joins})
    kept_joins = [j for j in joins if rows[j.index].precision == "int8"]
    qdq = qdq_model(base, kept, params, bool(per_channel), corrections, kept_joins)
    rows = [rows[i] for i in sorted(rows)]  # graph order
    settings = {"calibration_method": calibration_method, "per_channel": bool(per_channel),
                "int8_tolerance": tolerance, "bias_corrected": sorted(corrections)}
    report = QuantReport(rows, settings, {}, None, qdq)
    kept_props = [p for p in qdq.metadata_props if p.key not in report.metadata()]
    del qdq.metadata_props[:]
    qdq.metadata_props.extend(kept_props)
    for key, value in report.metadata().items():
        qdq.metadata_props.add(key=key, value=value)
    report.output_error = _output_errors(qdq, batches, reference)
    return report


def quantize(src, out_path, *, calibration, calibration_method: str = "minmax", per_channel: bool = True,
             int8_tolerance: float = DEFAULT_TOLERANCE, show_progress: bool = True) -> QuantReport:
    """Quantizes the float model ``src`` (a path, bytes or onnx.ModelProto) to int8 and writes a QDQ
    ONNX file to ``out_path`` (atomically) that onnxruntime and dnnx both run.

    ``calibration``: typical inputs, as ``Model.run`` takes them (an array, a list in input order,
    or a dict by input name; a model with a fixed batch takes a multiple of it). The activations
    that Conv, Gemm and MatMul read are quantized to uint8 per tensor over the range they took on
    this data under ``calibration_method``: "minmax" (the whole range), "percentile" (the 0.01st to
    99.99th percentiles) or "entropy" (TensorRT's KL-divergence threshold). Weights are int8,
    symmetric, with one scale per output channel (``per_channel=False``: one per tensor); biases
    int32. A residual join (an Add of a quantized Conv's output and a shortcut, [Relu]) gets its
    inputs and output quantized too, so that dnnx runs the block's last Conv, the Add and the
    Relu as one int8 layer (Note [int8 residual join] in _quant_graph.py).

    Accuracy guard: each quantized layer's output is compared with fp32 on the calibration data
    (its inputs in fp32); a layer or join whose relative RMS error exceeds ``int8_tolerance``
    (default 0.01, 1 %) stays float. Returns a ``QuantReport``: per-layer rows (error, precision, why), which
    ``print`` shows as a table; the same rows are in the file's metadata_props
    ("dnnx.int8.layers", JSON)."""
    from .finetune import atomic_write_bytes

    if out_path is None or not isinstance(out_path, (str, os.PathLike)):
        raise ValueError(f"out_path: expected a file path, got {out_path!r}")
    if not Path(out_path).parent.is_dir():
        raise ValueError(f"out_path: folder not found: {Path(out_path).parent}")
    report = quantize_model(src, calibration, calibration_method, per_channel, int8_tolerance, show_progress)
    atomic_write_bytes(out_path, report.model.SerializeToString())
    report.path = Path(out_path)
    return report
