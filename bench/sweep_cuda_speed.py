"""The CUDA speed sweep (issue #38): every float model in ../shared/external (zoo/, zoo2/ but its
quantized q_* files, models/; bench/_external_models.float_models) on the GPU at fp32, tf32, fp16
and bf16, at batch 1 and 64 (a model without a symbolic batch: its declared shape, "fixed"),
dnnx beside onnxruntime-gpu, each engine in child processes of its own; one markdown table of
medians and dnnx/ort ratios, a summary per precision at the largest batch, and a per-layer
profile (Model.profile) of the worst rows there.

    ORT_GPU_PATH=/tmp/carried python bench/sweep_cuda_speed.py --budget 480 --out speed.md
    python bench/sweep_cuda_speed.py --models 'zoo/resnet18*' 'zoo/mobilenet*' --precisions fp32,fp16
    python bench/sweep_cuda_speed.py --device cpu --models 'models/mnist-8/*' --batches 1   # a dry run
    (scripts/gpu-check.sh: GPU_CHECK_BENCHES=speed; --models also takes .onnx paths)
    python bench/sweep_cuda_speed.py --merge part1.json part2.json --out speed.md   # one table of two calls

A device call lasts at most 10 minutes, and the population takes about 17 (about 30 s a model):
run it in two calls with --models (the second with the models the first left "not run"), each with
--json, and --merge the two into one table.

Order: the issue's six CNNs (MobileNetV2, EfficientNet-B0, MobileNetV3-Small, ResNet-18,
DenseNet-121, ConvNeXt-T), the rest of zoo/, zoo2/, models/. Per model, a dnnx child
(bench/_speed_dnnx_worker.py) then an onnxruntime child (bench/_ort_sweep_worker.py), never at the
same time: the timings share one GPU, and only one libcudnn can live in a process.

What is timed: dnnx.load(model, device="cuda", precision=p, batch_size=b) (default algo_search),
inputs copied to the GPU once, output="device"; onnxruntime-gpu with CUDA graphs, exhaustive
cuDNN search, use_tf32 for tf32 only, IO binding of every input and output on the GPU, its
float16 converter with prefer_nhwc=1 for fp16, and that same fp16 model for bf16 rows (it has no
bfloat16 converter). Per case: warm-up calls, then calls for about --seconds-per-case (at least 5,
at most 200), the median (bench/_timing.time_for). The sanity column is max |dnnx - ort| /
max |ort| over the first output (not a failure).

Limits (Note [speed sweep children]): --budget seconds in all (cases not started by then are
"not run (budget)"), --timeout per child; a child that crashes or hangs gives rows that say so,
and the sweep goes on. The exit status is 0 whenever the sweep ran (2: no model matched).
Test hook: --inject KIND:ENGINE:PRECISION[,...] (KIND crash, hang, raise or sticky) makes those cases fail.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _external_models as ext  # noqa: E402
from _speed_child import BUDGET_NOTE, case_key  # noqa: E402
from _speed_report import markdown, ratio  # noqa: E402

# The six CNNs, in the order: their rows come first, so that a short budget has them.
FIRST = ("zoo/mobilenet_v2.onnx", "zoo/efficientnet_b0.onnx", "zoo/mobilenet_v3_small.onnx", "zoo/resnet18.onnx",
         "zoo/densenet121.onnx", "zoo/convnext_tiny.onnx")
FOLDER_ORDER = {"zoo": 1, "zoo2": 2, "models": 3}
WORKERS = {"dnnx": HERE / "_speed_dnnx_worker.py", "ort": HERE / "_ort_sweep_worker.py"}
# Note [speed sweep children]
# Each engine runs a model's cases in a child of its own and writes each finished case at once
# (bench/_speed_child.py), so that a child that dies loses only the case in flight: a crash (a
# signal, a non-zero exit) gives that case's row the reason, and a new child runs the cases after
# it, up to MAX_ATTEMPTS children per model and engine. A child past --timeout is killed: its
# case in flight says "timeout", and its later cases are not tried again (a hang tends to repeat,
# and each would cost a whole timeout). No case starts after the case deadline: --budget less a
# reserve for the profiles; the children's timeouts are cut to end by the budget.
MAX_ATTEMPTS = 4
PROFILE_RESERVE_S = 45.0
PROFILE_REPEAT = 20


def sweep_order(names):
    def rank(name):
        if name in FIRST:
            return (0, FIRST.index(name), name)
        return (FOLDER_ORDER.get(name.split("/")[0], 4), 0, name)

    return sorted(names, key=rank)


def select_models(patterns):
    """(names in sweep order, the patterns that matched nothing). An existing .onnx path is taken
    as it is (a model of one's own); anything else is a glob over float_models()."""
    files, globs = [], []
    for p in patterns:
        if p.endswith(".onnx") and Path(p).is_file():
            files.append(str(Path(p).resolve()))
        else:
            globs.append(p)
    names = ext.float_models(globs) if globs or not patterns else []
    unmatched = [g for g in globs if not ext.float_models([g])]
    return sweep_order(names) + files, unmatched


def cases_for(name, batches, precisions):
    """[(batch or None, precision)]: every batch where the model has a symbolic batch dim, else its
    declared shape once (a file that cannot be read: once, and its children say why)."""
    import onnx

    try:
        symbolic = ext.batch_dim(ext.declared_inputs(onnx.load(str(ext.EXTERNAL / name), load_external_data=False)))
    except Exception:  # noqa: BLE001
        symbolic = None
    return [(b if symbolic else None, p) for b in (batches if symbolic else [None]) for p in precisions]


class Clock:
    def __init__(self, budget: float, reserve: float):
        self.start = time.time()
        self.end = self.start + budget
        self.case_deadline = self.end - reserve

    def left(self) -> float:
        return self.end - time.time()


def read_events(path: Path):
    if not path.exists():
        return []
    events = []
    for line in path.read_text().splitlines():
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:  # a line cut by a kill
            pass
    return events


def exit_reason(rc: int, log: Path) -> str:
    what = f"killed by {signal.Signals(-rc).name}" if rc < 0 and -rc in signal.Signals._value2member_map_ \
        else f"exit {rc}"
    tail = [line for line in log.read_text(errors="replace").splitlines() if line.strip()][-1:] if log.exists() else []
    return f"child {what}" + (f": {tail[0].strip()[:140]}" if tail else "")


def run_engine(engine, name, cases, args, clock, work: Path, profile=0):
    """({case key: record}, meta) of one model on one engine (Note [speed sweep children])."""
    results, meta, died = {}, {}, None
    remaining = [case_key(b, p) for b, p in cases]
    for attempt in range(1, MAX_ATTEMPTS + 1):
        if not remaining:
            break
        left = clock.left() + (15 if profile else 0)  # a profile may end a little past the budget
        if left < 1 or (not profile and time.time() > clock.case_deadline):
            break
        timeout = min(args.timeout, max(5.0, left))
        stem = work / f"{'profile-' if profile else ''}{engine}-{attempt}"
        cmd = [sys.executable, str(WORKERS[engine]), "--model", name, "--cases", ",".join(remaining),
               "--device", args.device, "--seconds", str(args.seconds_per_case), "--results", f"{stem}.jsonl",
               "--outputs", str(work)]
        if not profile:
            cmd += ["--deadline", str(clock.case_deadline)]
        else:
            cmd += ["--profile", str(profile), "--seconds", "0.05"]  # (the last --seconds counts)
        if args.inject:
            cmd += ["--inject", args.inject]
        died, hung = None, False
        with open(f"{stem}.log", "w") as log:
            try:
                rc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, timeout=timeout).returncode
                died = exit_reason(rc, Path(f"{stem}.log")) if rc else None
            except subprocess.TimeoutExpired:
                died, hung = f"timeout after {timeout:.0f} s (child killed)", True
        in_flight = None
        for event in read_events(Path(f"{stem}.jsonl")):
            if "meta" in event:
                meta.update(event["meta"])
            elif "start" in event:
                in_flight = event["start"]
            elif "case" in event:
                results[event["case"]] = event
                in_flight = None if in_flight == event["case"] else in_flight
        if died and in_flight:
            results[in_flight] = {"error": died}
        remaining = [k for k in remaining if k not in results]
        if hung or not died:
            break  # a hang is not retried; a child that ended well has reported every case
    for key in remaining:
        if not profile and time.time() > clock.case_deadline:
            results[key] = {"error": BUDGET_NOTE}
        else:
            results[key] = {"error": f"not run (after: {died})" if died else "not run (its child reported nothing)"}
    return results, meta


def compare(work: Path, dnnx: dict, ort: dict):
    """(max |dnnx - ort| / max |ort| over the first output, or None; a note)."""
    if not dnnx.get("output") or not ort.get("output"):
        return None, ""
    a = np.load(work / dnnx["output"]).astype(np.float64)
    b = np.load(work / ort["output"]).astype(np.float64)
    if a.shape != b.shape:
        return None, f"first outputs differ in size ({a.size} vs {b.size})"
    scale = float(np.max(np.abs(b), initial=0.0))
    err = float(np.max(np.abs(a - b), initial=0.0))
    if not np.isfinite(err):
        return None, "non-finite outputs"
    return (err / scale if scale > 0 else (0.0 if err == 0 else float("inf"))), ""


def machine(device: str) -> str:
    if device == "cuda":
        try:
            out = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                                 capture_output=True, text=True, timeout=30).stdout.strip().splitlines()
            if not out:
                return "nvidia-smi printed nothing"
            name, _, driver = out[0].rpartition(", ")
            return f"{name}, driver {driver}"
        except (OSError, subprocess.SubprocessError) as e:
            return f"nvidia-smi failed: {e}"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return f"{line.split(':', 1)[1].strip()}, {os.cpu_count()} cores"
    except OSError:
        pass
    return f"{os.cpu_count()} cores"


def git_commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True, text=True,
                              check=True, timeout=30).stdout.strip() or "?"
    except (OSError, subprocess.SubprocessError):
        return "? (no git checkout)"


def header(args, command, metas, unmatched, summary_batch, started: float) -> list:
    dnnx_meta = next((m for m in metas["dnnx"] if m), {})
    ort_meta = next((m for m in metas["ort"] if m), {})
    peer = "onnxruntime-gpu (CUDA provider)" if args.device == "cuda" else "onnxruntime (CPU provider)"
    lines = [
        f"# Speed sweep: dnnx vs {peer}, --device {args.device}",
        "",
        f"- date: {datetime.datetime.fromtimestamp(started, datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')} "
        f"(the start; {time.time() - started:.0f} s in all, --budget {args.budget:g})",
        f"- machine: {machine(args.device)}",
        f"- command: `{command}`",
        f"- versions: dnnx {dnnx_meta.get('dnnx', '?')} (commit {git_commit()}; {dnnx_meta.get('cuda_status', '?')}); "
        f"onnxruntime {ort_meta.get('onnxruntime', '?')}",
        f"- method: per case a fresh dnnx.load (default algo_search) and a fresh onnxruntime session; "
        f"warm-up calls, then about {args.seconds_per_case} s of calls (5 to 200), median ms; "
        + ("inputs and outputs on the GPU on both sides (dnnx: to_device + output=\"device\"; onnxruntime: IO "
           "binding, CUDA graph, EXHAUSTIVE search, use_tf32 for tf32 only)" if args.device == "cuda"
           else "numpy in and out on both sides")
        + "; each engine in its own process, one after the other (bench/sweep_cuda_speed.py)",
        *(["- **bf16 rows: onnxruntime-gpu has no bfloat16 converter: the onnxruntime column is its fp16 time "
           "(float16 converter, prefer_nhwc=1) and the diff compares dnnx bf16 with onnxruntime fp16**"]
          if "bf16" in args.precisions else []),
        "- max rel diff: max |dnnx - ort| / max |ort| over the first output (a sanity check, not a test)",
        f"- the summary is at batch {summary_batch} (fixed-shape models are not in it); the profiles are "
        f"dnnx's per-layer times (Model.profile, {PROFILE_REPEAT} runs) of the {args.profile_worst} worst rows there",
    ]
    if args.device == "cpu":
        lines.append("- --device cpu: a dry run of the flow (dnnx on the CPU, onnxruntime's CPU provider, numpy "
                     "in and out); not a speed claim")
    lines += [f"- no model matches `{g}`" for g in unmatched]
    return lines


def merge(paths, out) -> int:
    """One markdown table from the --json files of several runs: each run's header under "Run K",
    their rows in order (a case that a later run measured replaces an earlier run's row that was
    not run for the budget), the summary over all of them at the largest summary batch, every run's
profiles."""
    parts = [json.loads(Path(p).read_text()) for p in paths]
    rows, where = [], {}
    for part in parts:
        for row in part["rows"]:
            key = (row["model"], row["batch"], row["precision"])
            if key in where and "ms" in row["dnnx"] and "ms" not in rows[where[key]]["dnnx"]:
                rows[where[key]] = row
            elif key not in where:
                where[key] = len(rows)
                rows.append(row)
    precisions = list(dict.fromkeys(p for part in parts for p in part["precisions"]))
    head = [f"# Speed sweep: {len(parts)} runs merged ({', '.join(Path(p).name for p in paths)})"]
    for k, part in enumerate(parts, 1):
        head += ["", f"Run {k}:", *[line for line in part["header"] if not line.startswith("# ")]]
    batches = [part["summary_batch"] for part in parts if part["summary_batch"] is not None]
    text = markdown(rows, head, precisions, max(batches, default=None), [p for part in parts for p in part["profiles"]])
    print(text, flush=True)
    if out:
        Path(out).write_text(text)
        print(f"wrote {out}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="*", default=[], help="globs on the names under ../shared/external, "
                        "or .onnx paths")
    parser.add_argument("--batches", default="1,64", help="comma-separated batch sizes (symbolic-batch models)")
    parser.add_argument("--precisions", default="fp32,tf32,fp16,bf16")
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"), help="cpu: a dry run of the flow")
    parser.add_argument("--seconds-per-case", type=float, default=0.3, help="timed seconds per case")
    parser.add_argument("--budget", type=float, default=500, help="seconds in all; cases after it are not run")
    parser.add_argument("--timeout", type=float, default=120, help="seconds per child process (one model)")
    parser.add_argument("--profile-worst", type=int, default=3, help="profile the N worst rows (0: none)")
    parser.add_argument("--out", help="also write the markdown to this file (replacing it)")
    parser.add_argument("--json", help="also write the rows, profiles and header to this file (for --merge)")
    parser.add_argument("--merge", nargs="+", metavar="JSON", help="no sweep: one table from the --json files "
                        "of several runs (their rows in order; each run's header, then the summary of all)")
    parser.add_argument("--inject", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.merge:
        return merge(args.merge, args.out)
    batches = [int(b) for b in args.batches.split(",") if b]
    precisions = [p for p in args.precisions.split(",") if p]
    unknown = sorted(set(precisions) - {"fp32", "tf32", "fp16", "bf16"})
    if unknown or not batches or not precisions:
        parser.error(f"--precisions takes fp32, tf32, fp16, bf16 (got {args.precisions!r}); --batches at least one")
    env = [f"{k}={os.environ[k]}" for k in ("ORT_GPU_PATH", "DNNX_DEV_BUILD", "PYTHONPATH") if os.environ.get(k)]
    command = shlex.join([*env, "python", *sys.argv])
    clock = Clock(args.budget, min(PROFILE_RESERVE_S, 0.15 * args.budget) if args.profile_worst > 0 else 0.0)
    names, unmatched = select_models(args.models)
    for g in unmatched:
        print(f"no model matches {g!r} under {ext.EXTERNAL}", flush=True)
    summary_batch = max(batches) if batches else None
    rows, metas, profiles = [], {"dnnx": [], "ort": []}, []
    with tempfile.TemporaryDirectory(prefix="speed-sweep-") as tmp:
        for index, name in enumerate(names):
            work = Path(tmp) / f"m{index}"
            work.mkdir()
            cases = cases_for(name, batches, precisions)
            found = {}
            for engine in ("dnnx", "ort"):  # one after the other: the GPU is shared
                found[engine], meta = run_engine(engine, name, cases, args, clock, work)
                metas[engine].append(meta)
            for batch, precision in cases:
                key = case_key(batch, precision)
                row = {"model": name, "batch": "fixed" if batch is None else batch, "precision": precision,
                       "dnnx": found["dnnx"][key], "ort": found["ort"][key], "work": work}
                try:
                    row["diff"], row["diff_note"] = compare(work, row["dnnx"], row["ort"])
                except Exception as e:  # noqa: BLE001 - the sanity column says why
                    row["diff"], row["diff_note"] = None, f"compare: {type(e).__name__}: {e}"
                rows.append(row)
                r = ratio(row)
                print(f"{name} b={row['batch']} {precision}: dnnx {row['dnnx'].get('ms', row['dnnx'].get('error'))}"
                      f" / ort {row['ort'].get('ms', row['ort'].get('error'))}"
                      + (f" = {r:.2f}x" if r is not None else ""), flush=True)
        worst = sorted((r for r in rows if r["batch"] == summary_batch and ratio(r) is not None),
                       key=lambda r: -ratio(r))[:max(0, args.profile_worst)]
        for row in worst:
            p = {"model": row["model"], "batch": row["batch"], "precision": row["precision"], "ratio": ratio(row)}
            if clock.left() < 5:
                p["error"] = "profile not run (budget)"
            else:
                found, _ = run_engine("dnnx", row["model"], [(row["batch"], row["precision"])], args, clock,
                                      row["work"], profile=PROFILE_REPEAT)
                record = found[case_key(row["batch"], row["precision"])]
                p.update({k: record[k] for k in ("profile", "profile_total_ms") if k in record})
                if "profile" not in p:
                    p["error"] = record.get("error", "no profile")
            profiles.append(p)
    head = header(args, command, metas, unmatched, summary_batch, clock.start)
    text = markdown(rows, head, precisions, summary_batch, profiles)
    print(text, flush=True)
    if args.out:
        Path(args.out).write_text(text)
        print(f"wrote {args.out}")
    if args.json:
        part = {"header": head, "precisions": precisions, "summary_batch": summary_batch, "profiles": profiles,
                "rows": [{k: v for k, v in r.items() if k != "work"} for r in rows]}
        Path(args.json).write_text(json.dumps(part, indent=1))
        print(f"wrote {args.json}")
    if not names:
        print(f"no models match under {ext.EXTERNAL}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
