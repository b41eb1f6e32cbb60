"""Cold start: import + load + first run, each repetition in a new process, dnnx beside onnxruntime
(issue #14). The model file is read once first (page cache warm); on CUDA every engine also runs
once untimed first (dnnx's plan cache warm, the driver's caches too). CPU: 1 thread for both
engines, batch 1. CUDA: dnnx tf32, onnxruntime's CUDAExecutionProvider (use_tf32) where it is
installed, batch 256, and the floor: a bare process that loads cudart, cuBLAS and cuDNN, creates the
context and one handle of each. Repetitions alternate between the engines.

    python bench/bench_load.py [--models resnet50 lenet] [--device cpu|cuda] [--reps 7] [--out FILE]

--cold (CUDA, issue #34): every process starts with an empty plan cache (its own XDG_CACHE_HOME)
and nothing runs untimed first. Rows: onnxruntime-gpu with its exhaustive cuDNN search at fp32
and tf32 (use_tf32 0/1), and dnnx at each of --precisions under each of --policies (the default
"auto", "heuristic", "background"). The input is the same .npy for every process (its reading
left out). --reps load-only repetitions per row, then one pass per row that also runs the model
back to back for --seconds, its input and output in GPU memory (--io device, the default) or numpy
arrays (--io numpy: each request brings its data from the host): the time from process start
until the steady speed (the rolling median of 5 runs within 5% of the last 20 runs' median), and
the slowest run after the first (for "background": against the heuristic plan's runs).

    python bench/bench_load.py --cold --device cuda [--models resnet50] [--batch 256] [--reps 2]
                               [--seconds 12] [--precisions fp32 tf32] [--policies auto heuristic background]
                               [--engines onnxruntime dnnx] [--io device|numpy]

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


def one_run(engine: str, path: Path, device: str, batch: int, extra=(), env=None) -> dict:
    """One new process; its JSON line, plus "wall": the whole process's wall time. ``extra``: more
    worker arguments; ``env``: more environment variables."""
    env = dict(os.environ, **(env or {}))
    if device == "cpu":
        env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    start = time.perf_counter()
    out = subprocess.run([sys.executable, str(WORKER), engine, str(path), device, str(batch), *extra],
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


# --- --cold: empty plan cache, to the steady speed (issue #34) ---------------------------------------

def cold_cases(precisions: list, policies: list, engines: list) -> list:
    """(label, engine, precision, policy) per row: onnxruntime first, then dnnx."""
    cases = [(f"onnxruntime-gpu {p} (EXHAUSTIVE)", "onnxruntime", p, None) for p in precisions
             if p in ("fp32", "tf32") and "onnxruntime" in engines]
    return cases + [(f"dnnx {p} {policy}", "dnnx", p, policy) for p in precisions for policy in policies
                    if "dnnx" in engines]


def cold_run(engine: str, path: Path, device: str, batch: int, precision: str, policy, data: Path,
             seconds: float, folder: Path, io: str = "device") -> dict:
    """One new process with an empty plan cache (a new XDG_CACHE_HOME under ``folder``)."""
    extra = ["--precision", precision, "--data", str(data), "--seconds", str(seconds), "--io", io]
    if policy is not None:
        extra += ["--algo-search", policy]
    cache = tempfile.mkdtemp(dir=folder)
    return one_run(engine, path, device, batch, extra, env={"XDG_CACHE_HOME": cache})


def steady(runs: list) -> dict:
    """The runs' summary: the last 20 runs' median, the first second's median, the time (since the
    process started) at which the rolling median of 5 runs first came within 5% of the final
    median, and the slowest run."""
    ms = [m for _, m in runs]
    final = statistics.median(ms[-20:])
    first = statistics.median([m for t, m in runs if t < runs[0][0] + 1.0])
    reached = next((runs[i + 4][0] for i in range(len(ms) - 4) if statistics.median(ms[i:i + 5]) <= final * 1.05),
                   None)
    return {"final_ms": final, "first_second_ms": first, "steady_s": reached, "max_ms": max(ms), "runs": len(ms)}


def cold_rows(name: str, path: Path, args, folder: Path) -> list:
    import numpy as np

    import onnx

    first = onnx.load(str(path), load_external_data=False).graph.input[0]
    dims = [d.dim_value if d.dim_value > 0 else args.batch for d in first.type.tensor_type.shape.dim]
    dims[0] = args.batch
    data = folder / "input.npy"
    np.save(data, np.random.default_rng(0).standard_normal(dims).astype(np.float32))
    data.read_bytes()
    path.read_bytes()
    lines = []
    for label, engine, precision, policy in cold_cases(args.precisions, args.policies, args.engines):
        loads = [cold_run(engine, path, args.device, args.batch, precision, policy, data, 0, folder)
                 for _ in range(args.reps)]
        last = cold_run(engine, path, args.device, args.batch, precision, policy, data, args.seconds, folder, args.io)
        results = loads + [last]
        errors = [r["error"] for r in results if "error" in r]
        if errors:
            lines.append(f"| {name} | {label} | failed: {errors[0]} | | | | | | |")
            print(lines[-1], flush=True)
            continue
        totals = [r["total"] for r in results]
        phases = {k: statistics.median(r["phases"][k] for r in results) for k in results[0]["phases"]}
        detail = ", ".join(f"{k} {_ms(v)}" for k, v in phases.items())
        if "load_profile" in last:
            keys = last["load_profile"].keys()
            detail += "; load: " + ", ".join(
                f"{k} {_ms(statistics.median(r['load_profile'].get(k, 0.0) for r in results))}" for k in keys)
        s = steady(last["runs"]) if last.get("runs") else None
        search = last.get("search", {})
        if search.get("state", "off") != "off":
            detail += (f"; search: {search['state']}, {search.get('shapes_searched', 0)} shape(s), "
                       f"{search.get('swaps', 0)} swap(s), speedup {search.get('speedup', 1.0)}")
        cells = ([f"{s['first_second_ms']:.2f}", f"{s['final_ms']:.2f}",
                  f"{s['steady_s']:.2f}" if s["steady_s"] is not None else "-", f"{s['max_ms']:.2f}", str(s["runs"])]
                 if s else ["-"] * 5)
        lines.append(f"| {name} | {label} | {statistics.median(totals):.2f} "
                     f"({min(totals):.2f}-{max(totals):.2f}) | " + " | ".join(cells) + f" | {detail} |")
        print(lines[-1], flush=True)
    return lines


def cold_markdown(table: list, args, command: str, load: tuple) -> str:
    lines = [
        "",
        f"# Cold start on CUDA: empty plan cache, import + load + first run, then to the steady speed",
        "",
        f"- date: {datetime.datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z')}",
        f"- machine: {machine()}; GPU: {gpu_name()}",
        f"- load average (1 min): {load[0]:.2f} at the start, {load[1]:.2f} at the end",
        f"- versions: {versions()}",
        f"- command: `{command}`",
        f"- method: each row a new process with an empty plan cache (its own XDG_CACHE_HOME), nothing run "
        f"untimed first; batch {args.batch}, the same seeded input (.npy, its reading left out); load + first "
        f"run over {args.reps + 1} processes (median, min-max), from the worker's first line (imports included) "
        f"to the first run's numpy output; the last process then runs back to back for {args.seconds:g} s " +
        ("with input and output in GPU memory (dnnx DeviceArrays; onnxruntime IO binding, no CUDA graph)"
         if args.io == "device" else "with numpy input and output (each run copies its input from the host)"),
        "- steady after: seconds from process start until the rolling median of 5 runs is within 5% of the "
        "last 20 runs' median; slowest: the slowest run after the first",
        "",
        "| model | engine | load + first run s | first second median ms | final median ms | steady after s | "
        "slowest run ms | runs | phases (median ms) |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    return "\n".join(lines + table) + "\n"


def gpu_name() -> str:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30)
        return out.stdout.strip().splitlines()[0]
    except (OSError, IndexError, subprocess.SubprocessError):
        return "unknown (no nvidia-smi)"


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
    parser.add_argument("--cold", action="store_true", help="CUDA: empty plan cache, to the steady speed")
    parser.add_argument("--batch", type=int, default=BATCH["cuda"], help="--cold: the batch")
    parser.add_argument("--seconds", type=float, default=12.0, help="--cold: back-to-back runs of the last pass")
    parser.add_argument("--precisions", nargs="+", default=["fp32", "tf32"], help="--cold")
    parser.add_argument("--policies", nargs="+", default=["auto", "heuristic", "background"],
                        help="--cold: dnnx's algo_search values")
    parser.add_argument("--engines", nargs="+", default=["onnxruntime", "dnnx"], help="--cold: the engines' rows")
    parser.add_argument("--io", choices=["device", "numpy"], default="device",
                        help="--cold: the back-to-back runs' input and output: GPU memory, or numpy (host data)")
    args = parser.parse_args()
    if args.cold and args.device == "cpu":
        parser.error("--cold measures CUDA: pass --device cuda")
    if args.cold and "--reps" not in sys.argv:
        args.reps = 2
    if args.cold and "--models" not in sys.argv:
        args.models = ["resnet50"]
    env = [f"{k}={os.environ[k]}" for k in ("DNNX_DEV_BUILD", "PYTHONPATH") if os.environ.get(k)]
    command = shlex.join([*env, "python3", *sys.argv])
    start_load = os.getloadavg()[0]
    table = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models:
            path = model_path(name, Path(tmp))
            size = f"{path.stat().st_size / 1e6:.0f} MB"
            label = f"{Path(name).name} ({size})"
            if args.cold:
                table += cold_rows(label, path, args, Path(tmp))
                continue
            results = measure(path, args.device, args.reps)
            table += rows(label, results)
            print("\n".join(rows(label, results)), flush=True)
    load = (start_load, os.getloadavg()[0])
    text = cold_markdown(table, args, command, load) if args.cold else markdown(table, args.device, args.reps,
                                                                                command, load)
    print(text)
    if args.out:
        with open(args.out, "a") as f:
            f.write(text)
        print(f"appended to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
