"""Cold start to steady state on CUDA (issue #34): each row a new process with an empty plan cache
(its own XDG_CACHE_HOME), from the worker's first line (before `import dnnx`): load + first run,
then runs back to back for --seconds, each timed (numpy outputs, so every run ends on the host).

    python bench/bench_background_search.py [--precisions fp32 tf32] [--policies auto background]
                                             [--batch 256] [--seconds 15] [--out FILE]

Reported per row: load + first run; the heuristic phase's median (the first second of runs after
the first); the final median (the last 20 runs); the time from process start until the rolling
median of 5 runs is within 5% of the final median (steady); the slowest run after the first; and
for "background" the search's status at the end. The model: bench/resnet50.py's ResNet-50
(seeded weights). The worker is this file with --worker.
"""
from __future__ import annotations

import time

START = time.perf_counter()

import argparse  # noqa: E402
import datetime  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import shlex  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

HERE = Path(__file__).resolve().parent


def worker(path: str, precision: str, policy: str, batch: int, seconds: float) -> dict:
    import numpy as np

    import dnnx

    m = dnnx.load(path, device="cuda", precision=precision, algo_search=policy, batch_size=batch)
    x = np.random.default_rng(0).standard_normal((batch, 3, 224, 224)).astype(np.float32)
    m.run(x)
    first = time.perf_counter() - START
    runs = []  # (seconds since start, ms)
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        t = time.perf_counter()
        m.run(x)
        runs.append((t - START, (time.perf_counter() - t) * 1e3))
    return {"first_run_s": first, "runs": runs, "status": m.search_status()}


def summary(result: dict) -> dict:
    runs = result["runs"]
    ms = [r[1] for r in runs]
    final = statistics.median(ms[-20:])
    heuristic = statistics.median([m for t, m in runs if t < runs[0][0] + 1.0])
    steady = None
    for i in range(len(ms) - 4):
        if statistics.median(ms[i:i + 5]) <= final * 1.05:
            steady = runs[i + 4][0]
            break
    return {"first": result["first_run_s"], "heuristic_ms": heuristic, "final_ms": final, "steady_s": steady,
            "max_ms": max(ms), "runs": len(ms), "status": result["status"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--precisions", nargs="+", default=["fp32", "tf32"])
    parser.add_argument("--policies", nargs="+", default=["auto", "background"])
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--out", help="append the markdown section to this file")
    parser.add_argument("--worker", nargs=5, metavar=("MODEL", "PRECISION", "POLICY", "BATCH", "SECONDS"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        path, precision, policy, batch, seconds = args.worker
        print(json.dumps(worker(path, precision, policy, int(batch), float(seconds))))
        return 0
    import onnx

    sys.path.insert(0, str(HERE))
    from resnet50 import build_resnet50

    command = shlex.join(["python3", *sys.argv])
    lines = ["", "# Cold start to steady state on CUDA: ResNet-50, empty plan cache, new process per row", "",
             f"- date: {datetime.datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z')}",
             f"- command: `{command}`",
             f"- batch {args.batch}; runs back to back for {args.seconds:g} s after the first; numpy in and out",
             "", "| precision | algo_search | load + first run s | first second median ms | final median ms | "
                 "steady after s | slowest run ms | runs | search |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "resnet50.onnx"
        onnx.save(build_resnet50(seed=0), path)
        for precision in args.precisions:
            for policy in args.policies:
                cache = tempfile.mkdtemp(dir=tmp)
                out = subprocess.run([sys.executable, __file__, "--worker", str(path), precision, policy,
                                      str(args.batch), str(args.seconds)], capture_output=True, text=True,
                                     env=dict(os.environ, XDG_CACHE_HOME=cache))
                if out.returncode != 0:
                    row = f"| {precision} | {policy} | failed: {out.stderr.strip().splitlines()[-1:]} |"
                else:
                    s = summary(json.loads(out.stdout.strip().splitlines()[-1]))
                    st = s["status"]
                    search = (f"{st['state']}, {st.get('shapes_searched', 0)} shape(s), {st.get('swaps', 0)} swap(s), "
                              f"speedup {st.get('speedup', 1.0)}" if st["state"] != "off" else "-")
                    steady = f"{s['steady_s']:.2f}" if s["steady_s"] is not None else "-"
                    row = (f"| {precision} | {policy} | {s['first']:.2f} | {s['heuristic_ms']:.2f} | "
                           f"{s['final_ms']:.2f} | {steady} | {s['max_ms']:.2f} | {s['runs']} | {search} |")
                print(row, flush=True)
                lines.append(row)
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "a") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
