"""Cold start: import + load + first run, each repetition in a new process, dnnx beside onnxruntime
(issue #14). The model file is read once first (page cache warm); on CUDA every engine also runs
once untimed first (dnnx's plan cache warm, the driver's caches too). CPU: 1 thread for both
engines, batch 1. CUDA: dnnx tf32, onnxruntime's CUDAExecutionProvider (use_tf32) where it is
installed, batch 256, and the floor: a bare process that loads cudart, cuBLAS and cuDNN, creates the
context and one handle of each. Repetitions alternate between the engines.

    python bench/bench_load.py [--models resnet50 lenet] [--device cpu|cuda] [--reps 7] [--out FILE]

resnet50: bench/resnet50.py's model (102 MB, seeded weights), built into a temporary folder;
lenet: dnnx.examples' LeNet; any other name is taken as a path to an .onnx file. Each process
is bench/_load_worker.py; its clock starts before its first import.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORKER = HERE / "_load_worker.py"
BATCH = {"cpu": 1, "cuda": 256}


def model_path(name: str, folder: Path) -> Path:
    if name == "resnet50":
        import onnx

        sys.path.insert(0, str(HERE))
        from resnet50 import build_resnet50

        path = folder / "resnet50.onnx"
        onnx.save(build_resnet50(seed=0), path)
        return path
    if name == "lenet":
        import onnx

        from dnnx.examples import build

        path = folder / "lenet.onnx"
        onnx.save(build("lenet"), path)
        return path
    return Path(name)


def one_run(engine: str, path: Path, device: str, batch: int) -> dict:
    """One new process; its JSON line, plus "wall": the whole process's wall time."""
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1") if device == "cpu" else None
    start = time.perf_counter()
    out = subprocess.run([sys.executable, str(WORKER), engine, str(path), device, str(batch)],
                         capture_output=True, text=True, env=env)
    wall = time.perf_counter() - start
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["exit status %d" % out.returncode])[-1]}
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result["wall"] = wall
    return result


def engines_for(device: str) -> list:
    return ["dnnx", "onnxruntime"] + (["floor"] if device != "cpu" else [])


def measure(path: Path, device: str, reps: int) -> dict:
    """{engine: [result per repetition]} (a failed engine: one result with "error")."""
    path.read_bytes()  # the page cache holds the file from here on
    batch = BATCH["cuda" if device != "cpu" else "cpu"]
    engines = engines_for(device)
    if device != "cpu":
        for engine in engines:  # untimed: fills dnnx's plan cache and the driver's caches
            one_run(engine, path, device, batch)
    results = {engine: [] for engine in engines}
    for _ in range(reps):
        for engine in engines:
            if results[engine] and "error" in results[engine][0]:
                continue
            results[engine].append(one_run(engine, path, device, batch))
    return results


def _ms(seconds: float) -> str:
    return f"{1e3 * seconds:.0f}"


def rows(name: str, results: dict) -> list:
    lines = []
    for engine, runs in results.items():
        if runs and "error" in runs[0]:
            lines.append(f"| {name} | {engine} | — | — | — | — | {runs[0]['error']} |")
            continue
        totals = [r["total"] for r in runs]
        phases = {k: statistics.median(r["phases"][k] for r in runs) for k in runs[0]["phases"]}
        detail = ", ".join(f"{k} {_ms(v)}" for k, v in phases.items())
        profile = runs[0].get("load_profile") or {}
        if profile:
            keys = profile.keys()
            medians = {k: statistics.median(r["load_profile"].get(k, 0.0) for r in runs) for k in keys}
            detail += "; load: " + ", ".join(f"{k} {_ms(v)}" for k, v in medians.items())
        lines.append(f"| {name} | {engine} | {_ms(min(totals))} | {_ms(statistics.median(totals))} | "
                     f"{_ms(max(totals))} | {_ms(statistics.median(r['wall'] for r in runs))} | {detail} |")
    return lines


def machine() -> str:
    sys.path.insert(0, str(HERE))
    from bench_cpu import cpu_name

    return f"{cpu_name()}, {len(os.sched_getaffinity(0))} cores available, {platform.system()} {platform.release()}"


def versions() -> str:
    import numpy
    import onnx

    import dnnx

    try:
        import onnxruntime

        ort = f"onnxruntime {onnxruntime.__version__}"
    except ImportError:
        ort = "onnxruntime not installed"
    return f"dnnx {dnnx.__version__}, {ort}, onnx {onnx.__version__}, numpy {numpy.__version__}, " \
           f"Python {platform.python_version()}"


def markdown(table: list, device: str, reps: int, command: str, load: tuple) -> str:
    batch = BATCH["cuda" if device != "cpu" else "cpu"]
    setting = ("1 thread each (dnnx.threads.set_num_threads(1); onnxruntime intra-op 1, inter-op 1)"
               if device == "cpu" else
               "dnnx precision tf32 (plan cache warm); onnxruntime CUDAExecutionProvider use_tf32; "
               "each engine run once untimed first")
    lines = [
        "",
        f"# Load time: import + load + first run in a new process ({device})",
        "",
        f"- date: {datetime.datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z')}",
        f"- machine: {machine()}",
        f"- load average (1 min): {load[0]:.2f} at the start, {load[1]:.2f} at the end",
        f"- versions: {versions()}",
        f"- command: `{command}`",
        f"- method: {reps} repetitions, each a new process per engine (bench/_load_worker.py), engines "
        f"alternating; the model file read once first (page cache warm); batch {batch}; {setting}",
        "- total: from the worker's first line (before any import) to the first run's outputs; "
        "process: the whole process's wall time, interpreter start included; phases are medians",
        "",
        "| model | engine | total min ms | total median ms | total max ms | process median ms | phases (median ms) |",
        "| --- | --- | ---: | ---: | ---: | ---: | --- |",
    ]
    return "\n".join(lines + table) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=["resnet50", "lenet"])
    parser.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N")
    parser.add_argument("--reps", type=int, default=7, help="new processes per engine and model")
    parser.add_argument("--out", help="append the markdown section to this file")
    args = parser.parse_args()
    env = [f"{k}={os.environ[k]}" for k in ("DNNX_DEV_BUILD", "PYTHONPATH") if os.environ.get(k)]
    command = shlex.join([*env, "python3", *sys.argv])
    start_load = os.getloadavg()[0]
    table = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models:
            path = model_path(name, Path(tmp))
            size = f"{path.stat().st_size / 1e6:.0f} MB"
            label = f"{Path(name).name} ({size})"
            results = measure(path, args.device, args.reps)
            table += rows(label, results)
            print("\n".join(rows(label, results)), flush=True)
    text = markdown(table, args.device, args.reps, command, (start_load, os.getloadavg()[0]))
    print(text)
    if args.out:
        with open(args.out, "a") as f:
            f.write(text)
        print(f"appended to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
