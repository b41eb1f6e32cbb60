"""Where one CUDA fine-tuning step's time goes (issue #4: LeNet last:2 at batch 256 <= 150 us; issue
#17: last:2 <= 100 us, every layer trained <= 300 us):
for each case, the wall time of Tuner.step with the batch on the GPU and from numpy, of the
binding's step alone (without the Python wrapper), the GPU time of each part of the step
(Tuner.profile: events between the parts of a replayed graph), and the kernels of one replayed
step under Nsight Compute (--ncu: their names and GPU times, clocks and caches left alone).

    python bench/probes/probe_finetune_step.py [--ncu [--ncu-trainable all]] [--iters K] [--only TEXT]

--only runs the cases whose label holds TEXT (e.g. "every layer"); DNNX_PROBE_DIRECT_CONV_GRAD=0
in the environment puts Conv's gradients back on cuDNN (Note [direct conv gradients]) for an A/B.
"""
from __future__ import annotations

import argparse
import csv
import ctypes
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

sys.path.insert(1, str(Path(__file__).resolve().parent.parent))  # bench/, for _timing
from _timing import median_us, time_calls  # noqa: E402

CASES = (  # (label, batch, load options, trainable)
    ("fp32 heuristic", 256, {}, "last:2"),
    ("fp32 exhaustive", 256, {"algo_search": "exhaustive"}, "last:2"),
    ("tf32 heuristic (information only)", 256, {"precision": "tf32"}, "last:2"),
    ("fp32 heuristic", 64, {}, "last:2"),
    ("fp32 heuristic", 1024, {}, "last:2"),
    ("fp32 heuristic, every layer trained", 256, {}, "all"),
    ("fp32 exhaustive, every layer trained", 256, {"algo_search": "exhaustive"}, "all"),
)


def batch_for(batch: int):
    rng = np.random.default_rng(batch)
    return rng.standard_normal((batch, 1, 28, 28)).astype(np.float32), rng.integers(0, 10, size=batch)


def make_tuner(batch: int, options: dict, trainable: str = "last:2"):
    import dnnx
    from dnnx.examples.lenet import build_lenet

    model = dnnx.load(build_lenet(seed=0), device="cuda", **options)
    tuner = model.finetune(trainable=trainable, lr=0.01 if trainable != "all" else 0.001, momentum=0.9)
    x, y = batch_for(batch)
    return model, tuner, x, y


def probe_case(label: str, batch: int, options: dict, trainable: str, iters: int) -> None:
    model, tuner, x, y = make_tuner(batch, options, trainable)
    x_dev = model.to_device(x)
    device_us = median_us(time_calls(lambda: tuner.step(x_dev, y), 50, iters))
    numpy_us = median_us(time_calls(lambda: tuner.step(x, y), 50, iters))
    inputs, target, lr = tuner._inputs(x_dev), tuner._target(y), tuner.current_lr()
    core_us = median_us(time_calls(lambda: tuner._core.step(inputs, target, lr), 50, iters))
    wrapper_us = median_us(time_calls(lambda: (tuner._inputs(x_dev), tuner._target(y), tuner.current_lr()), 50, iters))
    pinned_like = np.empty_like(x)
    memcpy_us = median_us(time_calls(lambda: np.copyto(pinned_like, x), 50, iters))
    table = tuner.profile(x_dev, y, repeat=50)
    print(f"### {label} ({trainable}), batch {batch}: step {device_us:.1f} us (x on GPU), {numpy_us:.1f} us (numpy x); "
          f"binding's step alone {core_us:.1f} us, Python wrapper's argument handling {wrapper_us:.1f} us; "
          f"GPU time of the step's parts {1000 * table.total_ms:.1f} us; a host memcpy of x {memcpy_us:.1f} us")
    print(table)
    print()


def ncu_target(batch: int, trainable: str) -> None:
    """Run under ncu: warm up, then two replayed steps between cuProfilerStart and cuProfilerStop."""
    model, tuner, x, y = make_tuner(batch, {}, trainable)
    x_dev = model.to_device(x)
    for _ in range(20):
        tuner.step(x_dev, y)
    cuda = ctypes.CDLL("libcuda.so.1")
    started = cuda.cuProfilerStart()
    for _ in range(2):
        tuner.step(x_dev, y)
    cuda.cuProfilerStop()
    print(f"cuProfilerStart returned {started}", file=sys.stderr)


def find_ncu():
    for candidate in (shutil.which("ncu"), "/usr/local/cuda/bin/ncu"):
        if candidate and os.path.exists(candidate):
            return candidate
    return None


def run_ncu(batch: int, trainable: str, out_dir: str) -> None:
    ncu = find_ncu()
    if not ncu:
        print("ncu: not found")
        return
    command = [ncu, "--profile-from-start", "off", "--clock-control", "none", "--cache-control", "none",
               "--metrics", "gpu__time_duration.sum", "--csv", "--print-units", "base",
               sys.executable, os.path.abspath(__file__), "--ncu-target", str(batch), "--ncu-trainable", trainable]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=240)
    except subprocess.TimeoutExpired:
        print("ncu: timed out")
        return
    with open(os.path.join(out_dir, f"ncu_step_{batch}.txt"), "w") as f:
        f.write(done.stdout + "\n--- stderr\n" + done.stderr)
    lines = [line for line in done.stdout.splitlines() if line.startswith('"')]
    rows = [r for r in csv.DictReader(io.StringIO("\n".join(lines)))
            if r.get("Metric Name") == "gpu__time_duration.sum"]
    if not rows:
        print(f"ncu: no kernels (rc {done.returncode}); stderr tail:\n{done.stderr[-1500:]}")
        return
    per_step = len(rows) // 2
    print(f"### ncu, {trainable}, batch {batch}: {len(rows)} kernels in two replayed steps; the second step's {per_step}:")
    total = 0.0
    for r in rows[per_step:]:
        us = float(r["Metric Value"].replace(",", "")) / 1000.0  # ncu writes thousands separators
        total += us
        print(f"{us:8.2f} us  grid {r.get('Grid Size', '?'):>14} block {r.get('Block Size', '?'):>12}  "
              f"{r['Kernel Name'][:110]}")
    print(f"{total:8.2f} us  sum of the kernels' GPU times (no gaps between them)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iters", type=int, default=300)
    parser.add_argument("--ncu", action="store_true", help="also list one step's kernels under Nsight Compute")
    parser.add_argument("--ncu-trainable", default="last:2", help="the tuner's trainable= under ncu")
    parser.add_argument("--only", default="", help="run the cases whose label holds this text")
    parser.add_argument("--ncu-target", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.ncu_target:
        ncu_target(args.ncu_target, args.ncu_trainable)
        return 0
    import dnnx

    print(dnnx.cuda_status())
    for label, batch, options, trainable in CASES:
        if args.only in label:
            probe_case(label, batch, options, trainable, args.iters)
    if args.ncu:
        run_ncu(256, args.ncu_trainable, os.environ.get("OUT", "."))
    return 0


if __name__ == "__main__":
    sys.exit(main())
