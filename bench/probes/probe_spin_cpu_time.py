"""How long onnxruntime's intra-op threads keep spinning after a run, and how much CPU time they
(and dnnx's pool workers) take during the other engine's timed block (issue #17: the 2-thread
rows of bench/bench_cpu.py). Thread CPU time is read from /proc/self/task/<tid>/schedstat (ns on
a CPU); an engine's threads are the tasks that appeared when it started them.

    python bench/probes/probe_spin_cpu_time.py [--model lstm] [--batch 64] [--threads 2] [--method pause|settle]
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx

from dnnx.cli import timing
from dnnx.cli.timing import ORT, ort_session, random_inputs
from dnnx.examples import build
from dnnx.model import load
from dnnx.threads import set_num_threads


def tasks() -> set:
    return {int(t) for t in os.listdir("/proc/self/task")}


def names(tids) -> list:
    out = []
    for tid in sorted(tids):
        with open(f"/proc/self/task/{tid}/comm") as f:
            out.append(f"{tid} {f.read().strip()}")
    return out


def cpu_ns(tids) -> int:
    total = 0
    for tid in tids:
        try:
            with open(f"/proc/self/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        except OSError:
            pass
    return total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="lstm")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--blocks", type=int, default=10)
    ap.add_argument("--method", choices=["pause", "settle"], default="settle",
                    help="before each block: the old fixed 20 ms pause, or timing.settle()")
    a = ap.parse_args()
    path = Path(tempfile.mkdtemp()) / f"{a.model}.onnx"
    onnx.save(build(a.model, seed=0), path)
    before = tasks()
    set_num_threads(a.threads)  # starts dnnx's pool workers
    model = load(path, batch_size=a.batch)
    feeds, _ = random_inputs(model.inputs, a.batch, 0)
    model.run_dict(feeds)
    dnnx_tids = tasks() - before
    before = tasks()
    sess = ort_session(model.proto, a.threads)
    sess.run(None, feeds)
    ort_tids = tasks() - before
    print(f"threads: dnnx workers {names(dnnx_tids)}, onnxruntime workers {names(ort_tids)}")
    runners = {"dnnx": lambda: model.run_dict(feeds), ORT: lambda: sess.run(None, feeds)}
    own = {"dnnx": dnnx_tids, ORT: ort_tids}
    for _ in range(5):
        for run in runners.values():
            run()

    # 1. The spin after a run: the other engine's threads' CPU time over each ms after it returns.
    for name, run in runners.items():
        for _ in range(3):
            run()
        t0, c0 = time.perf_counter(), cpu_ns(own[name])
        marks = []
        while time.perf_counter() - t0 < 0.05:
            time.sleep(0.001)
            marks.append((time.perf_counter() - t0, cpu_ns(own[name]) - c0))
        busy_until = max((t for (t, c), (_, cp) in zip(marks[1:], marks) if c - cp > 2e5), default=0.0)
        print(f"{name}: its workers' CPU time in the 50 ms after a run: {marks[-1][1] / 1e6:.1f} ms; "
              f"last ms with >0.2 ms of it at {busy_until * 1e3:.1f} ms")

    # 2. Blocks as dnnx.cli.timing times them: the other engine's CPU time during each timed block.
    seconds = {n: [] for n in runners}
    stolen = {n: [] for n in runners}
    for _ in range(a.blocks):
        for name, run in runners.items():
            other = ORT if name == "dnnx" else "dnnx"
            time.sleep(0.02) if a.method == "pause" else timing.settle()
            run()
            c0, t0 = cpu_ns(own[other]), time.perf_counter()
            for _ in range(timing.BLOCK):
                start = time.perf_counter()
                run()
                seconds[name].append(time.perf_counter() - start)
            stolen[name].append((cpu_ns(own[other]) - c0) / 1e9 / (time.perf_counter() - t0))
    for name in runners:
        other = ORT if name == "dnnx" else "dnnx"
        print(f"{name} timed: median {1e3 * np.median(seconds[name]):.3f} ms; {other}'s threads busy "
              f"{100 * np.median(stolen[name]):.0f}% (median block, max {100 * max(stolen[name]):.0f}%) of the block's wall time")


if __name__ == "__main__":
    main()
