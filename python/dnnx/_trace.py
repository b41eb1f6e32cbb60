"""A per-layer profile as a Chrome trace (``dnnx profile --trace trace.json``), the JSON format that
Perfetto (ui.perfetto.dev) and chrome://tracing open.

One complete event (``"ph": "X"``) per layer on one track, laid end to end in plan order: a layer
starts where the previous one ended, and lasts its median time. Times are in microseconds, as the
format wants (``ts``, ``dur``). The median run is a synthesis (each layer's median comes from its
own runs), so the timeline shows where a typical run's time goes, not one measured run. Metadata
events (``"ph": "M"``) name the process and the track.
"""
from __future__ import annotations

import json

PID, TID = 1, 1


def chrome_trace(table, model: str = "") -> dict:
    """{"traceEvents": [...], ...} for a dnnx.profile.ProfileTable."""
    how = ("GPU time, CUDA graph" if table.graph
           else "GPU time" if str(table.device).startswith("cuda") else "host wall-clock time")
    process = f"dnnx {model} on {table.device}".replace("  ", " ")
    events = [
        {"name": "process_name", "ph": "M", "pid": PID, "tid": TID, "args": {"name": process}},
        {"name": "thread_name", "ph": "M", "pid": PID, "tid": TID,
         "args": {"name": f"layers ({how}, median of {table.repeat} runs)"}},
    ]
    start_us = 0.0
    for row in table:
        dur_us = 1e3 * row.median_ms
        events.append({"name": row.name, "cat": row.op, "ph": "X", "pid": PID, "tid": TID,
                       "ts": round(start_us, 3), "dur": round(dur_us, 3),
                       "args": {"op": row.op, "algorithm": row.algorithm, "median_ms": row.median_ms}})
        start_us += dur_us
    return {"traceEvents": events, "displayTimeUnit": "ms",
            "otherData": {"model": model, "device": str(table.device), "repeat": table.repeat,
                          "total_ms": table.total_ms}}


def write_chrome_trace(table, path, model: str = "") -> None:
    from .cli._files import atomic_write

    data = json.dumps(chrome_trace(table, model), indent=1).encode()
    atomic_write(path, lambda f: f.write(data))


__all__ = ["chrome_trace", "write_chrome_trace"]
