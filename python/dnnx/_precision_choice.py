"""Note [measured precision]: precision="fp16" or "bf16" permits half storage; it must never make
a model slower than fp32. Half storage pays where tensor ops do the work (wide convolutions and
GEMMs); on small layers the fp32 plan is faster: its direct convolution and dense-rows kernels
take no half data, and half storage adds conversions (the entry and exit Casts, the channels-last
Transposes). LeNet at batch 1 on an H200 took 58.7 µs in fp16 against 29.1 µs in fp32. So at load
the engine's half plan and an fp32 twin of the same graph (the same rewrite passes, no channels
last, no half storage) are both timed, layer by layer, on zeros of the load's input shapes
(symbolic dims 1, or ``batch_size``), replaying each as a CUDA graph (Engine.profile, medians over the replays).

A *segment* is a connected group of half layers: the layers that read or write half values, and
the conversion layers the half rewrite added (those the fp32 twin has no layer for), joined
through the values they share. A segment's half cost is the sum of its layers' median times, its
conversions included; its fp32 cost is the sum of the same nodes' times in the fp32 twin. Where
fp32 is faster, the segment's nodes keep float32 and ONNX's layout (the engine's keep_fp32 pass
option), and ``plan()`` says why on each of them: "fp32 (kept in fp32: measured faster ...)".
The choice is made for the load's shapes: a much larger batch at run time uses the same graph.
``dnnx.load(..., measure_precision=False)`` turns it off (every layer with a half kernel then
stores half)."""
from __future__ import annotations

from statistics import median

import numpy as np

from ._native import core

# Replays per engine: 5 first; where the two totals lie within CLOSE of each other, 25 more each
# (medians of 25 GPU-timed replays spread by a few percent), so that a near tie is decided on
# steadier numbers and a model that half storage clearly speeds up costs only the 5.
FIRST_REPEAT, CLOSE_REPEAT, CLOSE = 5, 25, 0.25


def segment_choice(half_layers: list, fp32_layers: list, precision: str, shapes) -> dict:
    """{node name: why it keeps fp32} from two profiles' rows (Engine.profile: name, op, inputs,
    outputs, half, times_ms) of the same graph, the half plan's and the fp32 twin's."""
    fp32_ms = {row["name"]: median(row["times_ms"]) for row in fp32_layers}
    parent: dict = {}

    def root(value):
        parent.setdefault(value, value)
        while parent[value] != value:
            parent[value] = parent[parent[value]]
            value = parent[value]
        return value

    members = []  # (row, added, a value of it): the half plan's rows that belong to a segment
    for row in half_layers:
        added = row["name"] not in fp32_ms  # a Cast or Transpose of the half rewrite
        if not (row["half"] or added):
            continue
        values = [v for v in row["inputs"] + row["outputs"] if v]
        if not values:
            continue
        for v in values[1:]:
            parent[root(v)] = root(values[0])
        members.append((row, added, values[0]))
    segments: dict = {}
    for row, added, value in members:
        seg = segments.setdefault(root(value), {"half": 0.0, "fp32": 0.0, "nodes": [], "conversions": 0})
        seg["half"] += median(row["times_ms"])
        if added:
            seg["conversions"] += 1
        else:
            seg["fp32"] += fp32_ms[row["name"]]
            seg["nodes"].append(row["name"])
    kept = {}
    where = ", ".join("x".join(str(d) for d in s) for s in shapes)
    for seg in segments.values():
        if not seg["nodes"] or seg["fp32"] >= seg["half"]:
            continue
        reason = (f"measured faster in fp32 at input shape {where}: its segment of {len(seg['nodes'])} layer(s) "
                  f"took {seg['fp32'] * 1e3:.1f} µs in fp32 against {seg['half'] * 1e3:.1f} µs in {precision} "
                  f"with {seg['conversions']} conversion(s) (Note [measured precision])")
        for name in seg["nodes"]:
            kept[name] = reason
    return kept


def zero_inputs(ir: dict, shapes: list) -> list:
    return [np.zeros(shape, dtype=dtype) for (_, _, dtype), shape in zip(ir["inputs"], shapes)]


def choose(engine, ir: dict, kind: str, fp32_options: dict, passes: dict, precision: str) -> dict:
    """{node name: reason} for the nodes of `engine` (a half-storage CUDA engine) that run faster
    in fp32 (segment_choice), timing it against an fp32 twin built from `fp32_options`. A model
    whose shapes come from input values (value_inputs) has no shapes to time at load: {}."""
    if engine.value_inputs():
        return {}
    shapes = engine.default_shapes()
    inputs = zero_inputs(ir, shapes)
    twin = core.Engine(ir, kind, fp32_options, passes=passes)
    half, fp32 = engine.profile(inputs, FIRST_REPEAT)["layers"], twin.profile(inputs, FIRST_REPEAT)["layers"]
    totals = [sum(median(r["times_ms"]) for r in rows) for rows in (half, fp32)]
    if abs(totals[0] - totals[1]) <= CLOSE * max(totals):
        half, fp32 = engine.profile(inputs, CLOSE_REPEAT)["layers"], twin.profile(inputs, CLOSE_REPEAT)["layers"]
    del twin  # its device memory goes back before the engine is built again
    return segment_choice(half, fp32, precision, shapes)
