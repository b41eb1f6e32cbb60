"""Where LeNet's batch-1 call goes on CUDA: the wall time per call (input already on the GPU,
output="device", CUDA graph on; median of --iters calls after 200 warm-up calls) of the default
load and of variants that each switch one piece off, measured twice in alternation so that the
spread shows; then, with --ncu, the GPU time of every kernel of eager runs (Nsight Compute,
caches left warm: --cache-control none, clocks left alone: --clock-control none).

    python bench/probes/probe_lenet_batch1.py [--iters K] [--ncu] [--batch N]
"""
from __future__ import annotations

import argparse
import csv
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

sys.path.insert(1, str(Path(__file__).resolve().parent.parent))  # bench/, for _timing
from _timing import median_us, time_calls  # noqa: E402

# name -> (dnnx.load options, environment for the load)
VARIANTS = {
    "default": ({}, {}),
    "dense rows kernel off (cuBLASLt Gemms, Gemm+Softmax as a pair)": ({}, {"DNNX_TEST_FAIL_ALGO": "dense rows kernel"}),
    "fuse_gemm_softmax off": ({"passes": {"fuse_gemm_softmax": False}}, {}),
    "fuse_conv_pool off": ({"passes": {"fuse_conv_pool": False}}, {}),
    "cuda_graph off (eager)": ({"cuda_graph": False}, {}),
}


def load(variant: str, batch: int):
    import dnnx
    from dnnx.examples import build

    options, env = VARIANTS[variant]
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)  # the CUDA backend reads its test hooks when a model opens
    try:
        return dnnx.load(build("lenet", seed=0), device="cuda", batch_size=batch, **options)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def median_call_us(fn, iters: int, warmup: int = 200) -> float:
    return median_us(time_calls(fn, warmup, iters))


def wall_times(batch: int, iters: int) -> None:
    x = np.random.default_rng(batch).standard_normal((batch, 1, 28, 28)).astype(np.float32)
    models = {name: load(name, batch) for name in VARIANTS}
    reference = None
    rows = {name: [] for name in VARIANTS}
    for _ in range(2):
        for name, m in models.items():
            xd = m.to_device(x)
            y = m.run(xd, output="device").numpy()
            reference = y if reference is None else reference
            np.testing.assert_allclose(y, reference, rtol=1e-4, atol=1e-6, err_msg=name)
            rows[name].append(median_call_us(lambda: m.run(xd, output="device"), iters))
    print(f"LeNet batch {batch}, device in/out: median us per call (two rounds)")
    for name, (first, second) in rows.items():
        print(f"  {first:7.1f} {second:7.1f}  {name}")
    plan = models["default"].plan(batch_size=batch)
    print("  default plan: " + "; ".join(f"{r['name']} {r['op']}: {r['algorithm']}" for r in plan))


def kernels_child(variant: str, batch: int) -> None:
    """What ncu profiles: three eager runs of the variant (cuda_graph=False, so every kernel is its own launch)."""
    options, env = VARIANTS[variant]
    os.environ.update(env)
    import dnnx
    from dnnx.examples import build

    m = dnnx.load(build("lenet", seed=0), device="cuda", batch_size=batch, cuda_graph=False,
                  **{k: v for k, v in options.items() if k != "cuda_graph"})
    x = m.to_device(np.random.default_rng(batch).standard_normal((batch, 1, 28, 28)).astype(np.float32))
    for _ in range(3):
        m.run(x, output="device")


def ncu_table(variant: str, batch: int) -> None:
    ncu = shutil.which("ncu") or "/usr/local/cuda/bin/ncu"
    if not os.path.exists(ncu):
        print("ncu: not found")
        return
    cmd = [ncu, "--clock-control", "none", "--cache-control", "none", "--metrics", "gpu__time_duration.sum",
           "--csv", "--print-units", "base", sys.executable, __file__, "--kernels-child", variant, "--batch", str(batch)]
    out = subprocess.run(cmd, capture_output=True, text=True)
    text = out.stdout[out.stdout.find('"ID"'):] if '"ID"' in out.stdout else ""
    if not text:
        print(f"ncu failed ({out.returncode}): {out.stderr[-800:]} {out.stdout[-800:]}")
        return
    rows = list(csv.DictReader(io.StringIO(text)))
    # gpu__time_duration in ns; ncu may print thousands separators ("6,592")
    kernels = [(r["Kernel Name"], float(r["Metric Value"].replace(",", "")) / 1e3) for r in rows
               if r.get("Metric Name") == "gpu__time_duration.sum"]
    per_run = len(kernels) // 3
    print(f"ncu, LeNet batch {batch}, {variant}: {len(kernels)} kernels in 3 eager runs; the last run (us):")
    for name, us in kernels[-per_run:]:
        print(f"  {us:7.2f}  {name[:110]}")
    print(f"  {sum(us for _, us in kernels[-per_run:]):7.2f}  total")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iters", type=int, default=2000)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--ncu", action="store_true")
    parser.add_argument("--kernels-child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.kernels_child:
        kernels_child(args.kernels_child, args.batch)
        return 0
    wall_times(args.batch, args.iters)
    if args.ncu:
        for variant in ("default", "dense rows kernel off (cuBLASLt Gemms, Gemm+Softmax as a pair)", "fuse_conv_pool off"):
            ncu_table(variant, args.batch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
