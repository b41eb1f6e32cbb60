"""dnnx against onnxruntime on the CPU, with the same thread count, on the example models; prints a
markdown section for bench/RESULTS.md (and writes it to --out). The timing itself is
dnnx.cli.timing, the code behind `dnnx bench`: the engines take turns in blocks of calls, each
block after the process's threads have gone idle (Note [settled turns] there: onnxruntime's
intra-op worker spins 40-80 ms after its runs, and a fixed pause timed dnnx's 2-thread turns on
one free core). Neither engine's own settings change: onnxruntime keeps its default spinning.

    python bench/bench_cpu.py [--threads T] [--iters K] [--warmup W] [--out FILE]
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import onnx

import dnnx
from dnnx.cli._files import atomic_write
from dnnx.cli.timing import BLOCK, available_cores, format_report, measure
from dnnx.examples import build

CASES = [("lenet", 1), ("lenet", 64), ("lenet", 256), ("lstm", 64)]  # (example model, batch)
TARGET = 1.5  # dnnx may take at most this many times onnxruntime's median


def cpu_name() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return platform.processor() or platform.machine()
    for line in out.splitlines():
        if line.startswith("Model name:"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def versions() -> str:
    import numpy
    import onnxruntime

    return f"dnnx {dnnx.__version__}, onnxruntime {onnxruntime.__version__}, onnx {onnx.__version__}, " \
           f"numpy {numpy.__version__}, Python {platform.python_version()}"


def markdown(reports: list, threads: int, command: str, load: float) -> str:
    """reports: [(model name, dnnx.cli.timing.Report)]; load: the 1-minute load average at the start."""
    first = reports[0][1]
    lines = [
        "# dnnx vs onnxruntime on the CPU",
        "",
        f"- date: {datetime.datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z')}",
        f"- machine: {cpu_name()}, {available_cores()} cores available, {platform.system()} {platform.release()}",
        f"- load average (1 min) when the run began: {load:.2f} (other processes share these cores)",
        f"- threads: {threads} for each engine (the CPU thread pool for dnnx, OpenBLAS single-threaded "
        f"under it; intra-op {threads}, inter-op 1 for onnxruntime)",
        f"- versions: {versions()}",
        f"- command: `{command}`",
        "- method: same seeded random inputs for both engines; the engines take turns in blocks of "
        f"{BLOCK} calls, each after the process's threads have gone idle (the other engine's "
        f"spinning workers; Note [settled turns] in dnnx/cli/timing.py) and an untimed call; {first.warmup} warm-up and {first.iters} timed calls each; "
        f"target: dnnx/ort <= {TARGET}",
        "",
        "| model | batch | dnnx median ms | dnnx p90 ms | ort median ms | ort p90 ms | dnnx/ort | "
        "dnnx samples/s | max abs diff | target |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for name, r in reports:
        ours, theirs = r.timing("dnnx"), r.timing("onnxruntime")
        diff = max(r.max_abs_diff.values())
        lines.append(f"| {name} | {r.batch} | {1e3 * ours.median_s:.3f} | {1e3 * ours.p90_s:.3f} | "
                     f"{1e3 * theirs.median_s:.3f} | {1e3 * theirs.p90_s:.3f} | {r.ratio:.2f} | "
                     f"{ours.samples_per_s:,.0f} | {diff:.2g} | {'met' if r.ratio <= TARGET else 'missed'} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=available_cores(), help="threads per engine")
    parser.add_argument("--iters", type=int, default=200, help="timed calls per engine and case")
    parser.add_argument("--warmup", type=int, default=20, help="untimed calls first")
    parser.add_argument("--out", help="also write the markdown section to this file (replacing it)")
    args = parser.parse_args()
    # A developer build (scripts/dev-build.sh) is found through the environment: part of the command.
    env = [f"{k}={os.environ[k]}" for k in ("DNNX_DEV_BUILD", "PYTHONPATH") if os.environ.get(k)]
    command = shlex.join([*env, "python", *sys.argv])
    load = os.getloadavg()[0]
    reports = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, batch in CASES:
            path = Path(tmp) / f"{name}.onnx"
            if not path.exists():
                onnx.save(build(name, seed=0), path)
            report = measure(path, batch, threads=args.threads, warmup=args.warmup, iters=args.iters,
                             compare=True)
            print(format_report(report).replace(str(path), name), flush=True)
            reports.append((name, report))
    text = markdown(reports, args.threads, command, load)
    print(text)
    if args.out:
        atomic_write(args.out, lambda f: f.write(text.encode()))
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
