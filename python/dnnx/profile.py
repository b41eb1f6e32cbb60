"""Per-layer times of a model (``Model.profile``): rows (name, op, algorithm, median ms) that print
as a table.

On CUDA the times are GPU times from CUDA events recorded before every layer and after the
last. With CUDA graphs on (the default) the events are nodes of a graph of their own, replayed
``repeat`` times, so a layer's time is its kernels' alone; with ``cuda_graph=False`` the layers
are queued one by one, and a layer shorter than its launch also counts the gap while the GPU
waits for the host. On the CPU they are wall-clock times of the host kernels.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np


class ProfileRow(NamedTuple):
    name: str
    op: str
    algorithm: str
    median_ms: float


class ProfileTable(list):
    """ProfileRows in plan order; ``total_ms`` is their sum, ``graph`` whether they were measured
    on a replayed CUDA graph, ``repeat`` how many runs each median is over."""

    def __init__(self, rows, *, device: str, graph: bool, repeat: int):
        super().__init__(rows)
        self.device = device
        self.graph = graph
        self.repeat = repeat

    @property
    def total_ms(self) -> float:
        return float(sum(row.median_ms for row in self))

    def __str__(self) -> str:
        header = ("layer", "op", "algorithm", "median ms", "share")
        total = self.total_ms
        rows = [header]
        for r in self:
            share = f"{100.0 * r.median_ms / total:.1f}%" if total > 0 else "-"
            rows.append((r.name, r.op, r.algorithm, f"{r.median_ms:.4f}", share))
        rows.append(("total", "", "", f"{total:.4f}", ""))
        widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
        lines = ["  ".join(c.rjust(w) if i >= 3 else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))).rstrip()
                 for row in rows]
        lines.insert(1, "  ".join("-" * w for w in widths))
        lines.insert(-1, lines[1])
        how = ("GPU time from CUDA events in a replayed graph" if self.graph
               else "GPU time from CUDA events, layers queued one by one" if self.device.startswith("cuda")
               else "host wall-clock time")
        return "\n".join(lines + [f"({how}; median of {self.repeat} runs on {self.device})"])


def profile_table(result: dict, device: str, repeat: int) -> ProfileTable:
    """The table for ``_core.Engine.profile``'s result (times per layer, per run)."""
    rows = [ProfileRow(layer["name"], layer["op"], layer["algorithm"], float(np.median(layer["times_ms"])))
            for layer in result["layers"]]
    return ProfileTable(rows, device=device, graph=bool(result["graph"]), repeat=repeat)
