"""What the CUDA speed sweep's child processes share (bench/sweep_cuda_speed.py starts them:
bench/_speed_dnnx_worker.py and bench/_ort_sweep_worker.py, one model each): their command line,
the cases they are handed, and how they report.

A child writes one JSON line per event to its --results file, flushed at once, so that the
parent still reads every finished case of a child that crashed or was killed (Note [speed
sweep children] in sweep_cuda_speed.py):
    {"meta": {...}}                         versions, once
    {"start": key}                          before a case: the one in flight when a child dies
    {"case": key, "ms": ..., ...}           a timed case (times in ms; the first output saved as
                                            <outputs>/<engine>_<key>.npy)
    {"case": key, "error": "..."}           a case that could not run, and why
A case's key is "<batch>|<precision>", the batch "fixed" for a model run at its declared shape.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
from pathlib import Path
from typing import List, Optional, Tuple

import numpy as np

from _ort_worker import short_error  # noqa: F401 - one line for a table cell (re-exported)

MAX_SAVED = 1 << 22  # elements of the first output kept for the comparison (a segmentation map is large)
BUDGET_NOTE = "not run (budget)"


def case_key(batch: Optional[int], precision: str) -> str:
    return f"{'fixed' if batch is None else batch}|{precision}"


def parse_cases(text: str) -> List[Tuple[Optional[int], str]]:
    """"1|fp32,64|fp16,fixed|bf16" -> [(1, "fp32"), (64, "fp16"), (None, "bf16")]."""
    cases = []
    for item in filter(None, text.split(",")):
        batch, precision = item.split("|")
        cases.append((None if batch == "fixed" else int(batch), precision))
    return cases


def arguments(description: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--model", required=True, help="a name under ../shared/external, or an .onnx path")
    parser.add_argument("--cases", required=True, help="comma-separated batch|precision keys")
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    parser.add_argument("--deadline", type=float, default=float("inf"), help="epoch seconds: no case starts after")
    parser.add_argument("--seconds", type=float, default=0.3, help="timed seconds per case")
    parser.add_argument("--results", required=True, help="the JSON-lines file to append to")
    parser.add_argument("--outputs", required=True, help="the folder for the saved first outputs")
    parser.add_argument("--profile", type=int, default=0, help="dnnx only: per-layer profile over N runs")
    parser.add_argument("--inject", default="", help="test hook: KIND:ENGINE:PRECISION[,...] (see inject)")
    return parser.parse_args()


class Reporter:
    """Appends the events above to the results file, one flushed line each."""

    def __init__(self, path: str, engine: str, outputs: str):
        self.file = open(path, "a", buffering=1)
        self.engine, self.outputs = engine, Path(outputs)

    def write(self, record: dict) -> None:
        self.file.write(json.dumps(record) + "\n")
        self.file.flush()
        os.fsync(self.file.fileno())

    def save_output(self, key: str, value) -> Optional[str]:
        """The first output (a numpy array, or None), cut to MAX_SAVED elements; the file name."""
        if value is None:
            return None
        array = np.asarray(value)
        if array.dtype == object or array.size == 0:
            return None
        name = f"{self.engine}_{key.replace('|', '_')}.npy"
        np.save(self.outputs / name, np.ascontiguousarray(array.reshape(-1)[:MAX_SAVED]))
        return name


def inject(spec: str, engine: str, precision: str) -> None:
    """The test hook --inject KIND:ENGINE:PRECISION[,...]: at the start of the matching case, `crash`
    aborts the process (as a segfault in a CUDA library would), `hang` sleeps past any timeout,
    `raise` raises (a case that fails), `sticky` raises as a lost CUDA context does."""
    for one in filter(None, spec.split(",")):
        kind, who, which = one.split(":")
        if who != engine or which != precision:
            continue
        if kind == "crash":
            os.abort()
        if kind == "hang":
            time.sleep(1e6)
        if kind == "raise":
            raise RuntimeError(f"injected failure ({one})")
        if kind == "sticky":
            raise RuntimeError("injected: a sticky CUDA error")


# A CUDA error that leaves the process's context unusable: every later case of this child would
# fail the same way, so the child ends after reporting it and the parent starts a fresh one.
STICKY = ("sticky CUDA error", "illegal memory access", "illegal address", "unspecified launch failure",
          "cudaErrorIllegalAddress", "CUDA_ERROR_ILLEGAL")
STICKY_EXIT = 3


def end_if_sticky(message: str) -> None:
    if any(s.lower() in message.lower() for s in STICKY):
        print(f"a sticky CUDA error ({message[:200]}): this child ends, a fresh one runs the next cases",
              file=sys.stderr, flush=True)
        os._exit(STICKY_EXIT)


def first_output(outputs) -> Optional[np.ndarray]:
    """The first of a run's outputs as a numpy array (a dnnx DeviceArray copied back); None for a
    sequence or optional output."""
    first = outputs[0] if isinstance(outputs, (list, tuple)) else next(iter(outputs.values()))
    if hasattr(first, "numpy"):
        return first.numpy()
    return first if isinstance(first, np.ndarray) else None


def run_cases(report: Reporter, cases, deadline: float, run_one) -> None:
    """Each (batch, precision) in order: a "start" event, then run_one(batch, precision)'s record
    (its timings) or the error that stopped it; a sticky CUDA error ends the child. Past the
    deadline a case is reported as not run."""
    for batch, precision in cases:
        key = case_key(batch, precision)
        if time.time() > deadline:
            report.write({"case": key, "error": BUDGET_NOTE})
            continue
        report.write({"start": key})
        try:
            report.write({"case": key, **run_one(batch, precision)})
        except Exception as e:  # noqa: BLE001 - one case's failure is its row
            report.write({"case": key, "error": short_error(e)})
            end_if_sticky(str(e))
        gc.collect()


def report_unreadable(report: Reporter, cases, error: BaseException) -> None:
    """Every case's row when the model cannot be read."""
    for batch, precision in cases:
        report.write({"case": case_key(batch, precision), "error": f"read: {short_error(error)}"})
