"""Note [precision cut]: which layers of a half segment keep fp32, layer by layer (Note [measured
precision] in _precision_choice.py decides what a segment is and times both plans).

A segment is all-or-nothing under the segment rule: ConvNeXt-T, MobileNetV2 and EfficientNet-B0
are one segment each (every layer joined to the next through a half value), so a few layers that
run slower in half (a depthwise conv cuDNN runs as a grouped GEMM) kept the whole model in fp32
(the session-5 sweep: their fp16 took their fp32 time). The cut chooses per layer instead:

- each layer n costs its half time h(n) if it keeps half and its fp32 twin's time f(n) if not;
- the half plan's own conversions (the entry and exit Casts and Transposes, grouped where they
  chain) cost their measured time if any layer they serve keeps half, nothing otherwise;
- a value passed between two layers that end up in different precisions needs a conversion the
  half plan does not have: its cost is estimated from the value's elements at the per-element
  rate of the measured conversions (their median), at least the cheapest one's time (a launch).
  Where a value's size is unknown, the two layers stay together (the segment rule).

The cheapest labelling is a minimum s-t cut (the costs are a sum of per-layer terms and of
symmetric pair terms, so the cut is exact for this model of the costs): source side half, sink
side fp32, an edge source -> n of f(n), n -> sink of h(n), n <-> m of the conversion estimate, and
a conversion group g with n -> g (unbounded) and g -> sink of its time. Ties keep half. The model
is an estimate (a value converted for two readers is counted twice, a new conversion's time is
extrapolated), so the caller times the plan the cut gives and keeps the segment rule's plan
where that one measures faster (Model._choose_precision)."""
from __future__ import annotations

from collections import defaultdict, deque
from statistics import median

INF = float("inf")
TIE = 1e-9  # added to every fp32 cost: where both precisions cost the same, half stays


class _Flow:
    """Edmonds-Karp max flow on float capacities (segments have at most a few hundred layers)."""

    def __init__(self):
        self.cap = defaultdict(lambda: defaultdict(float))

    def add(self, a, b, c):
        if c > 0:
            self.cap[a][b] += c
            self.cap[b][a] += 0.0

    def source_side(self, s, t) -> set:
        while True:
            parent = {s: None}
            queue = deque([s])
            while queue and t not in parent:
                a = queue.popleft()
                for b, c in self.cap[a].items():
                    if c > 1e-15 and b not in parent:
                        parent[b] = a
                        queue.append(b)
            if t not in parent:
                return set(parent)
            path, b = [], t
            while parent[b] is not None:
                path.append((parent[b], b))
                b = parent[b]
            push = min(self.cap[a][b] for a, b in path)
            for a, b in path:
                self.cap[a][b] -= push
                self.cap[b][a] += push


def cut_segment(layers: dict, groups: list, links: list) -> set:
    """The layers that keep fp32. layers: {name: (half ms, fp32 ms)}; groups: [(ms, [layer names
    it serves])] for the half plan's conversions; links: [(a, b, estimated ms)] for the values
    passed between layers (INF: keep a and b together)."""
    flow = _Flow()
    s, t = ("source",), ("sink",)
    for name, (half_ms, fp32_ms) in layers.items():
        flow.add(s, name, fp32_ms + TIE)
        flow.add(name, t, half_ms)
    for i, (ms, served) in enumerate(groups):
        g = ("conversion", i)
        for name in served:
            flow.add(name, g, INF)
        flow.add(g, t, ms)
    for a, b, ms in links:
        flow.add(a, b, ms)
        flow.add(b, a, ms)
    half = flow.source_side(s, t)
    return {name for name in layers if name not in half}


def conversion_rate(groups: list, elements: list) -> tuple:
    """(ms per element, floor ms) from the measured conversion groups whose elements are known;
    (None, None) where none is."""
    known = [(ms, n) for ms, n in zip(groups, elements) if n]
    if not known:
        return None, None
    return median(ms / n for ms, n in known), min(ms for ms, _ in known)
