"""The CPU speed sweep (issue #38): every float model in ../shared/external (zoo/, zoo2/ but its
quantized q_* files, models/) on the CPU at batch 1, dnnx beside onnxruntime in the same process
at the same thread count, each model in a child process of its own; a markdown table of medians
and dnnx/ort ratios, and a per-layer profile (Model.profile) of the worst rows.

    python bench/sweep_cpu_speed.py                       # everything, 1 and 2 threads, 10 rounds
    python bench/sweep_cpu_speed.py --models 'zoo/mobilenet*' 'zoo/resnet18*' --threads 1 --rounds 10
    python bench/sweep_cpu_speed.py --out sweep.md --profile-worst 3

Timing (Note [speed sweep rounds]): per thread count, dnnx and onnxruntime (intra-op threads =
dnnx's, inter-op 1, sequential execution, default graph optimizations) take turns for --rounds
rounds; a turn is settle() (dnnx/cli/timing.py, Note [settled turns]: the other engine's
spinning threads have gone idle), one untimed call, then --calls timed calls (default: enough
for ~50 ms, at most 10). Each engine's median is over all its timed calls. The models and inputs
are the crash sweep's (bench/_external_models.py: weights materialized from their seed, inputs
by provenance), at batch 1 where the batch is symbolic, the declared shape otherwise.

The exit status is 0 whenever the sweep ran: a model dnnx or onnxruntime cannot run is a row
that says so (bench/sweep.py is the test of that).
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _external_models as ext  # noqa: E402
from bench_cpu import cpu_name  # noqa: E402

# Note [speed sweep rounds]
# Rounds of short turns, not one long block per engine: load from the other processes on a
# shared machine drifts over seconds, and taking turns puts both engines under the same drift.
# A turn of ~50 ms keeps a round of a 1 ms model from being all settle() time, and one call of a
# 100 ms model is already a turn.
TURN_S = 0.05
MAX_CALLS = 10
float_models = ext.float_models  # zoo2's q_* files and the node-test folders left out


# ---------------------------------------------------------------------------------------------
# The child: one model, every thread count; one JSON line on stdout.

def child(name: str, threads: list, rounds: int, calls: int, profile: int) -> dict:
    import numpy as np
    import onnxruntime as ort

    import dnnx
    from dnnx.cli.timing import settle

    model = ext.read_model(name)
    batch = 1 if ext.batch_dim(ext.declared_inputs(model)) else None
    feeds, notes = ext.make_inputs(name, model, batch)
    rows = []
    for t in threads:
        row = {"threads": t, "notes": notes}
        rows.append(row)
        try:
            dnnx.threads.set_num_threads(t)  # before load: the CPU kernels are split at plan time
            ours = dnnx.load(model, batch_size=batch) if batch is not None else dnnx.load(model)
            run_ours = lambda: ours.run_dict(feeds)  # noqa: E731
            run_ours()
        except Exception as e:  # noqa: BLE001 - a row that says why
            row["error"] = f"dnnx: {type(e).__name__}: {str(e).splitlines()[0][:160]}"
            continue
        try:
            options = ort.SessionOptions()
            options.intra_op_num_threads = t
            options.inter_op_num_threads = 1
            options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
            session = ort.InferenceSession(ours.proto.SerializeToString(), options,
                                           providers=["CPUExecutionProvider"])
            run_theirs = lambda: session.run(None, feeds)  # noqa: E731
            run_theirs()
        except Exception as e:  # noqa: BLE001
            row["error"] = f"onnxruntime: {type(e).__name__}: {str(e).splitlines()[0][:160]}"
            continue
        runners = {"dnnx": run_ours, "ort": run_theirs}
        per_turn = calls
        if per_turn <= 0:
            start = time.perf_counter()
            run_ours()
            per_turn = max(1, min(MAX_CALLS, int(TURN_S / max(time.perf_counter() - start, 1e-6))))
        seconds = {k: [] for k in runners}
        for _ in range(rounds):
            for k, run in runners.items():
                settle()
                run()
                for _ in range(per_turn):
                    start = time.perf_counter()
                    run()
                    seconds[k].append(time.perf_counter() - start)
        a, b = ours.run_dict(feeds), session.run(None, feeds)
        diff = max((float(np.max(np.abs(np.asarray(x, np.float64) - np.asarray(y, np.float64)), initial=0.0))
                    for x, y in zip(a.values(), b) if np.asarray(x).dtype.kind == "f"), default=0.0)
        row.update(dnnx_ms=1e3 * float(np.median(seconds["dnnx"])), ort_ms=1e3 * float(np.median(seconds["ort"])),
                   calls=per_turn * rounds, max_abs_diff=diff)
        row["ratio"] = row["dnnx_ms"] / row["ort_ms"]
        if profile:
            table = ours.profile(feeds, repeat=profile)
            top = sorted(table, key=lambda r: -r.median_ms)[:12]
            row["profile_total_ms"] = table.total_ms
            row["profile"] = [[r.name, r.op, r.algorithm, r.median_ms] for r in top]
        del ours, session
    return {"model": name, "batch": batch, "rows": rows}


# ---------------------------------------------------------------------------------------------
# The parent

def run_child(name, args, profile=0) -> dict:
    cmd = [sys.executable, __file__, "--child", name, "--threads", ",".join(map(str, args.threads)),
           "--rounds", str(args.rounds), "--calls", str(args.calls), "--profile-repeat", str(profile)]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return {"model": name, "rows": [{"threads": t, "error": f"timeout after {args.timeout} s"} for t in args.threads]}
    for line in reversed(done.stdout.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    why = (done.stderr.strip().splitlines() or ["no output"])[-1][:200]
    return {"model": name, "rows": [{"threads": t, "error": f"child exit {done.returncode}: {why}"} for t in args.threads]}


def git_commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"


def markdown(results, args, command, load) -> str:
    import numpy as np
    import onnxruntime

    import dnnx

    lines = [
        f"- date: {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}, commit {git_commit()}",
        f"- machine: {cpu_name()}, {os.cpu_count()} cores; load average (1 min) at the start {load:.2f} "
        "(other processes share these cores)",
        f"- versions: dnnx {dnnx.__version__}, onnxruntime {onnxruntime.__version__}",
        f"- command: `{command}`",
        f"- method: batch 1 (the declared shape for a fixed model); per thread count {args.rounds} interleaved "
        "rounds, each engine's turn after settle() and one untimed call; medians over every timed call "
        "(Note [speed sweep rounds] in bench/sweep_cpu_speed.py); onnxruntime with intra-op threads = dnnx's, "
        "inter-op 1, sequential execution",
        "",
    ]
    header = "| model | " + " | ".join(f"{t} thr dnnx / ort ms | ratio" for t in args.threads) + " | max abs diff |"
    lines += [header, "| --- |" + " ---: | ---: |" * len(args.threads) + " ---: |"]
    ratios = {t: [] for t in args.threads}
    for res in results:
        cells, diff = [], 0.0
        by_t = {r["threads"]: r for r in res["rows"]}
        for t in args.threads:
            r = by_t.get(t, {})
            if "ratio" in r:
                cells += [f"{r['dnnx_ms']:.3f} / {r['ort_ms']:.3f}", f"{r['ratio']:.2f}"]
                ratios[t].append(r["ratio"])
                diff = max(diff, r["max_abs_diff"])
            else:
                why = r.get("error", "not run").split(" (supported ops")[0][:120]  # the op list is long
                cells += [why.replace("|", "/"), "-"]
        lines.append(f"| {res['model']} | " + " | ".join(cells) + f" | {diff:.2g} |")
    lines.append("")
    for t in args.threads:
        if ratios[t]:
            rs = ratios[t]
            lines.append(f"- {t} thread(s): median ratio {np.median(rs):.2f}, worst {max(rs):.2f}, "
                         f"{sum(r <= 1.0 for r in rs)} of {len(rs)} rows at or under 1.0")
    profiled = [res for res in results if any("profile" in r for r in res["rows"])]
    for res in profiled:
        for r in res["rows"]:
            if "profile" not in r:
                continue
            lines += ["", f"Profile of {res['model']} at {r['threads']} thread(s) (ratio {r['ratio']:.2f}; "
                      f"layers' sum {r['profile_total_ms']:.2f} ms; the 12 slowest layers):", "",
                      "| layer | op | algorithm | median ms |", "| --- | --- | --- | ---: |"]
            lines += [f"| {n} | {op} | {algo} | {ms:.3f} |" for n, op, algo, ms in r["profile"]]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="*", default=[], help="globs on the names under ../shared/external")
    parser.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    parser.add_argument("--rounds", type=int, default=10, help="interleaved rounds per engine and thread count")
    parser.add_argument("--calls", type=int, default=0, help="timed calls per turn (0: ~50 ms worth, at most 10)")
    parser.add_argument("--profile-worst", type=int, default=3, help="profile the N worst rows (0: none)")
    parser.add_argument("--profile-repeat", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--timeout", type=int, default=900, help="seconds per model")
    parser.add_argument("--out", help="also write the markdown to this file (replacing it)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.threads = [int(t) for t in args.threads.split(",")]
    if args.child:
        print(json.dumps(child(args.child, args.threads, args.rounds, args.calls, args.profile_repeat)), flush=True)
        return 0
    env = [f"{k}={os.environ[k]}" for k in ("DNNX_DEV_BUILD", "PYTHONPATH") if os.environ.get(k)]
    command = shlex.join([*env, "python", *sys.argv])
    load = os.getloadavg()[0]
    names = float_models(args.models)
    if not names:
        print(f"no models match under {ext.EXTERNAL}", file=sys.stderr)
        return 2
    results = []
    for name in names:
        res = run_child(name, args)
        results.append(res)
        for r in res["rows"]:
            what = (f"{r['dnnx_ms']:.3f} / {r['ort_ms']:.3f} ms = {r['ratio']:.2f}x" if "ratio" in r
                    else r.get("error"))
            print(f"{name} [{r['threads']} thr]: {what}", flush=True)
    worst = sorted(((r["ratio"], res["model"], r["threads"]) for res in results for r in res["rows"] if "ratio" in r),
                   reverse=True)[:args.profile_worst]
    for _, name, t in worst:
        sub = argparse.Namespace(**{**vars(args), "threads": [t], "rounds": 1, "calls": 1})
        prof = run_child(name, sub, profile=20)
        for res in results:
            if res["model"] == name:
                for r in res["rows"]:
                    p = next((q for q in prof["rows"] if q["threads"] == t and "profile" in q), None)
                    if r["threads"] == t and p:
                        r["profile"], r["profile_total_ms"] = p["profile"], p["profile_total_ms"]
    text = markdown(results, args, command, load)
    print(text)
    if args.out:
        Path(args.out).write_text(text)
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
