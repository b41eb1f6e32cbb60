"""dnnx against onnxruntime on the CPU on a ResNet-50-shaped model (bench/resnet50.py, seeded
random weights), same thread count for both engines, batch 1 and 4 by default; appends a section
to bench/RESULTS.md (issue #5, CPU part). The timing is dnnx.cli.timing (the code behind
`dnnx bench`): same seeded random inputs, the engines taking turns in blocks of calls, each block
after the process's threads have gone idle (Note [settled turns] in dnnx/cli/timing.py: the other
engine's spinning workers never hold a core during a timed block; neither engine's settings
change), threads set with dnnx.threads.set_num_threads before the model is loaded.

    python bench/bench_resnet_cpu.py [--threads T] [--batches 1 4] [--iters K] [--warmup W] [--out FILE]

A ResNet-50 call is ~4 GFLOP per sample, so the defaults (3 warm-up, 15 timed calls) are small:
the machine this was written on has 2 shared cores.
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import shlex
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import onnx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_cpu import cpu_name, versions  # noqa: E402
from resnet50 import build_resnet50  # noqa: E402

from dnnx.cli.timing import available_cores, format_report, measure, ort_session, random_inputs  # noqa: E402


def output_scale(proto, batch: int, threads: int, seed: int = 0) -> float:
    """max |onnxruntime output| on the inputs measure() uses (same seed, same generator)."""
    spec = SimpleNamespace(name="x", shape=["N", 3, 224, 224], dtype=np.float32)
    feeds, _ = random_inputs([spec], batch, seed)
    out = ort_session(proto, threads).run(None, feeds)[0]
    return float(np.max(np.abs(out)))


def markdown(rows: list, threads: int, command: str, load: float, end_load: float) -> str:
    """rows: [(Report, output scale)]."""
    first = rows[0][0]
    lines = [
        "",
        "# ResNet-50 (bench/resnet50.py): dnnx vs onnxruntime on the CPU",
        "",
        f"- date: {datetime.datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z')}",
        f"- machine: {cpu_name()}, {available_cores()} cores available, {platform.system()} {platform.release()}",
        f"- load average (1 min): {load:.2f} when the run began, {end_load:.2f} at its end "
        "(other processes share these cores)",
        f"- threads: {threads} for each engine (dnnx.threads.set_num_threads before load; intra-op "
        f"{threads}, inter-op 1 for onnxruntime)",
        f"- versions: {versions()}",
        f"- command: `{command}`",
        "- model: ResNet-50 v1.5 shape, 53 convs + BatchNormalization, 25.6M parameters, seeded "
        "He-initialised weights, opset 17; input [N,3,224,224] standard normal (seed 0)",
        "- method: dnnx.cli.timing.measure: the engines take turns in blocks of calls, each after "
        "the process's threads have gone idle (Note [settled turns]); "
        f"{first.warmup} warm-up and {first.iters} timed calls each (few: ~4 GFLOP per sample on 2 "
        "shared cores, so the p90s are noisy)",
        "- rel diff: max abs diff / max |onnxruntime output|",
        "",
        "| batch | dnnx median ms | dnnx p90 ms | ort median ms | ort p90 ms | dnnx/ort | dnnx samples/s | "
        "max abs diff | output scale | rel diff |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r, scale in rows:
        ours, theirs = r.timing("dnnx"), r.timing("onnxruntime")
        diff = max(r.max_abs_diff.values())
        lines.append(f"| {r.batch} | {1e3 * ours.median_s:.1f} | {1e3 * ours.p90_s:.1f} | "
                     f"{1e3 * theirs.median_s:.1f} | {1e3 * theirs.p90_s:.1f} | {r.ratio:.2f} | "
                     f"{ours.samples_per_s:.2f} | {diff:.2g} | {scale:.3g} | {diff / scale:.2g} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=available_cores(), help="threads per engine")
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--iters", type=int, default=15, help="timed calls per engine and batch")
    parser.add_argument("--warmup", type=int, default=3, help="untimed calls first")
    parser.add_argument("--out", default=str(Path(__file__).with_name("RESULTS.md")), help="appended to")
    args = parser.parse_args()
    env = [f"{k}={os.environ[k]}" for k in ("DNNX_DEV_BUILD", "PYTHONPATH") if os.environ.get(k)]
    command = shlex.join([*env, "python3", *sys.argv])
    load = os.getloadavg()[0]
    proto = build_resnet50(seed=0)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "resnet50.onnx"
        onnx.save(proto, path)
        for batch in args.batches:
            report = measure(path, batch, threads=args.threads, warmup=args.warmup, iters=args.iters,
                             compare=True)
            scale = output_scale(proto, batch, args.threads)
            print(format_report(report).replace(str(path), "resnet50"), flush=True)
            diff = max(report.max_abs_diff.values())
            print(f"output scale (max |ort|) {scale:.3g}; rel diff {diff / scale:.2g}", flush=True)
            rows.append((report, scale))
    text = markdown(rows, args.threads, command, load, os.getloadavg()[0])
    with open(args.out, "a") as f:
        f.write(text)
    print(f"appended to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
