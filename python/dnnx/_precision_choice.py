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

from . import _precision_cut
from ._native import core

# Replays per engine: 5 first; where the two totals lie within CLOSE of each other, 25 more each
# (medians of 25 GPU-timed replays spread by a few percent), so that a near tie is decided on
# steadier numbers and a model that half storage clearly speeds up costs only the 5.
FIRST_REPEAT, CLOSE_REPEAT, CLOSE = 5, 25, 0.25


def _components(items, pairs) -> list:
    """The connected groups of `items` (hashable) joined by `pairs`, as lists in first-seen order."""
    parent = {item: item for item in items}

    def root(item):
        while parent[item] != item:
            parent[item] = parent[parent[item]]
            item = parent[item]
        return item

    for x, y in pairs:
        parent[root(x)] = root(y)
    groups: dict = {}
    for item in parent:
        groups.setdefault(root(item), []).append(item)
    return list(groups.values())


def segment_choice(half_layers: list, fp32_layers: list, precision: str, shapes, sizes: dict | None = None) -> dict:
    """{node name: why it keeps fp32} from two profiles' rows (Engine.profile: name, op, inputs,
    outputs, half, times_ms) of the same graph, the half plan's and the fp32 twin's; `sizes`:
    {value name: elements} of the half plan's values, for Note [precision cut] (without them a
    segment's layers stay together)."""
    fp32_ms = {row["name"]: median(row["times_ms"]) for row in fp32_layers}
    members = []  # (row, added, its values): the half plan's rows that belong to a segment
    for row in half_layers:
        added = row["name"] not in fp32_ms  # a Cast or Transpose of the half rewrite
        values = [v for v in row["inputs"] + row["outputs"] if v]
        if (row["half"] or added) and values:
            members.append((row, added, values))
    values = [v for _, _, vs in members for v in vs]
    segment_of = {}
    for i, group in enumerate(_components(values, [(vs[0], v) for _, _, vs in members for v in vs[1:]])):
        for v in group:
            segment_of[v] = i
    segments: dict = {}
    for row, added, vs in members:
        segments.setdefault(segment_of[vs[0]], []).append((row, added))
    groups = {key: _conversion_groups(rows) for key, rows in segments.items()}
    rate = _conversion_rate(groups.values(), sizes or {})
    kept = {}
    where = ", ".join("x".join(str(d) for d in s) for s in shapes)
    for key, rows in segments.items():
        kept.update(_segment_kept(rows, groups[key], fp32_ms, sizes or {}, rate, precision, where))
    return kept


def _conversion_groups(rows) -> list:
    """The half plan's conversion rows of one segment, grouped where they chain (a Cast feeding a
    Transpose): [(ms, [rows])]."""
    added = [row for row, is_added in rows if is_added]
    writer = {v: i for i, row in enumerate(added) for v in row["outputs"] if v}
    pairs = [(i, writer[v]) for i, row in enumerate(added) for v in row["inputs"] if v in writer]
    groups = [[added[i] for i in sorted(group)] for group in _components(range(len(added)), pairs)]
    return [(sum(median(r["times_ms"]) for r in group), group) for group in groups]


def _conversion_rate(segment_groups, sizes: dict):
    """(ms per element, floor ms) of the measured conversions (Note [precision cut]);
    segment_groups: each segment's _conversion_groups."""
    times, elements = [], []
    for groups in segment_groups:
        for ms, group in groups:
            counts = [sizes.get(v) for r in group for v in r["inputs"][:1] if v]
            times.append(ms)
            elements.append(max(counts) if counts and all(counts) else None)
    return _precision_cut.conversion_rate(times, elements)


def _segment_kept(rows, conversions, fp32_ms: dict, sizes: dict, rate, precision: str, where: str) -> dict:
    """The layers of one segment that keep fp32 (Note [precision cut]), with the reason for each;
    conversions: the segment's _conversion_groups."""
    layers = {row["name"]: (median(row["times_ms"]), fp32_ms[row["name"]]) for row, added in rows if not added}
    if not layers:
        return {}
    by_name = {row["name"]: row for row, added in rows if not added}
    readers, writer = {}, {}
    for name, row in by_name.items():
        for v in row["inputs"]:
            if v:
                readers.setdefault(v, []).append(name)
        for v in row["outputs"]:
            if v:
                writer[v] = name
    groups = []
    for ms, group in conversions:
        served = {n for r in group for v in r["outputs"] if v for n in readers.get(v, [])}
        served |= {writer[v] for r in group for v in r["inputs"] if v in writer}
        groups.append((ms, sorted(served), len(group)))
    per_element, floor = rate
    links = []
    for v, a in writer.items():
        for b in readers.get(v, []):
            if b == a:
                continue
            n = sizes.get(v)
            links.append((a, b, max(floor, per_element * n) if n and per_element is not None else _precision_cut.INF))
    fp32 = _precision_cut.cut_segment(layers, [(ms, served) for ms, served, _ in groups], links)
    kept = {}
    inside = [(a, b) for a, b, _ in links if a in fp32 and b in fp32]
    for region in map(set, _components(sorted(fp32), inside)):
        region_fp32 = sum(layers[n][1] for n in region)
        region_half = sum(layers[n][0] for n in region)
        mine = [(ms, count) for ms, served, count in groups if served and set(served) <= region]
        region_half += sum(ms for ms, _ in mine)
        edges = [ms for a, b, ms in links if (a in region) != (b in region)]
        reason = (f"measured faster in fp32 at input shape {where}: its segment of {len(region)} layer(s) "
                  f"took {region_fp32 * 1e3:.1f} µs in fp32 against {region_half * 1e3:.1f} µs in {precision} "
                  f"with {sum(count for _, count in mine)} conversion(s)")
        if edges:
            reason += (f"; the rest of its segment keeps {precision}, with {len(edges)} conversion(s) at the "
                       f"edges estimated at {sum(edges) * 1e3:.1f} µs (Note [precision cut])")
        for name in region:
            kept[name] = reason + " (Note [measured precision])"
    return kept


def value_sizes(engine, shapes, layers: list) -> dict:
    """{value name: elements} of the half plan's values: its plan rows' shapes, position by
    position, beside its profile rows' value names (the same layers in the same order)."""
    sizes = {}
    for plan_row, prof_row in zip(engine.plan(shapes, None), layers):
        if plan_row["name"] != prof_row["name"]:
            return {}
        for names, dims in ((prof_row["inputs"], plan_row["inputs"]), (prof_row["outputs"], plan_row["outputs"])):
            for v, shape in zip(names, dims):
                if v and shape is not None:
                    count = 1
                    for d in shape:
                        count *= int(d)
                    sizes[v] = count
    return sizes


def zero_inputs(ir: dict, shapes: list) -> list:
    return [np.zeros(shape, dtype=dtype) for (_, _, dtype), shape in zip(ir["inputs"], shapes)]


def choose(engine, ir: dict, kind: str, fp32_options: dict, passes: dict, precision: str) -> tuple:
    """(cut, whole, inputs): {node name: reason} for the nodes of `engine` (a half-storage CUDA
    engine) that run faster in fp32, timing it against an fp32 twin built from `fp32_options`:
    layer by layer (Note [precision cut]) and by whole segments (segment_choice without sizes);
    and the zero inputs they were timed on, for the caller to time the two plans where they
    differ. A model whose shapes come from input values (value_inputs) has no shapes to time at
    load: ({}, {}, None)."""
    if engine.value_inputs():
        return {}, {}, None
    shapes = engine.default_shapes()
    inputs = zero_inputs(ir, shapes)
    twin = core.Engine(ir, kind, fp32_options, passes=passes)
    half, fp32 = engine.profile(inputs, FIRST_REPEAT)["layers"], twin.profile(inputs, FIRST_REPEAT)["layers"]
    totals = [total_ms(rows) for rows in (half, fp32)]
    if abs(totals[0] - totals[1]) <= CLOSE * max(totals):
        half, fp32 = engine.profile(inputs, CLOSE_REPEAT)["layers"], twin.profile(inputs, CLOSE_REPEAT)["layers"]
    del twin  # its device memory goes back before the engine is built again
    cut = segment_choice(half, fp32, precision, shapes, value_sizes(engine, shapes, half))
    return cut, segment_choice(half, fp32, precision, shapes), inputs


def total_ms(layers: list) -> float:
    """The sum of a profile's per-layer medians."""
    return sum(median(r["times_ms"]) for r in layers)
