"""Where the CUDA speed sweep's slow rows (bench/RESULTS_CUDA.md, session 5) spend their time, and
why a half plan is or is not taken: per case, in a child process of its own, the load at batch 64,
the plan rows' math grouped (how many layers run fp16/bf16/tf32/fp32, and the reasons a layer was
kept in fp32), and the per-layer GPU profile grouped by op and algorithm, with the slowest layers.
Cases: "model:precision[:nomeasure][:ws=MiB]" (nomeasure: measure_precision=False, the half plan as
built; ws: workspace_limit in MiB).

    python3 bench/probes/probe_cuda_slow_rows.py [--batch 64] [case ...]
"""
import argparse
import subprocess
import sys

DEFAULT_CASES = [
    "zoo/convnext_tiny.onnx:fp16", "zoo/convnext_tiny.onnx:tf32", "zoo/convnext_tiny.onnx:fp32",
    "zoo/mobilenet_v2.onnx:fp16", "zoo/efficientnet_b0.onnx:fp16", "zoo/efficientnet_b0.onnx:tf32",
    "zoo/efficientnet_b0.onnx:fp32", "zoo/mobilenet_v3_small.onnx:fp16", "zoo/r3d_18.onnx:tf32", "zoo/r3d_18.onnx:tf32:ws=4096",
]

CHILD = r"""
import collections, sys, time, warnings
sys.path.insert(0, "bench")
import dnnx
from _external_models import EXTERNAL, make_inputs, read_model
warnings.simplefilter("ignore")
name, precision, measure, batch = sys.argv[1], sys.argv[2], sys.argv[3] == "1", int(sys.argv[4])
extra = {"workspace_limit": int(sys.argv[5]) << 20} if len(sys.argv) > 5 and sys.argv[5] else {}
model = read_model(name, EXTERNAL)
feeds, _ = make_inputs(name, model, batch)
t0 = time.perf_counter()
m = dnnx.load(model, device="cuda", precision=precision, batch_size=batch, plan_cache=False, **extra,
              **({} if precision in ("fp32", "tf32") else {"measure_precision": measure}))
print(f"  load {time.perf_counter() - t0:.2f} s; phases", {k: round(v, 2) for k, v in m.load_profile().items()})
maths, reasons = collections.Counter(), collections.Counter()
for r in m.plan():
    math = r["math"]
    maths[math.split(" ")[0]] += 1
    if "kept in fp32" in math or "no " in math:
        reasons[(r["op"], math[math.find("("):][:150])] += 1
print("  math per layer:", dict(maths))
for (op, why), n in reasons.most_common(8):
    print(f"    {n:3d} x {op}: {why}")
prof = m.profile({k: m.to_device(v) for k, v in feeds.items()}, repeat=20)
print(f"  profile total {prof.total_ms:.3f} ms ({'graph' if prof.graph else 'queued'})")
groups = collections.defaultdict(lambda: [0, 0.0])
for r in prof:
    g = groups[(r.op, r.algorithm.split(" (")[0][:50])]
    g[0] += 1
    g[1] += r.median_ms
for (op, algo), (n, ms) in sorted(groups.items(), key=lambda kv: -kv[1][1])[:12]:
    print(f"    {ms:8.3f} ms  {n:3d} x {op:28s} {algo}")
print("  slowest layers:")
slowest = sorted(prof, key=lambda r: -r.median_ms)[:8]
for r in slowest:
    print(f"    {r.median_ms:8.3f} ms  {r.op:24s} {r.algorithm[:70]:70s} {r.name[-50:]}")
plan = {r["name"]: r for r in m.plan()}
for r in slowest[:1]:
    row = plan.get(r.name, {})
    print(f"  the slowest layer's inputs {row.get('inputs')}, workspace {row.get('workspace')}, rejected:")
    for algo, why in row.get("rejected", [])[:8]:
        print(f"    {algo}: {why[:110]}")
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cases", nargs="*", default=DEFAULT_CASES)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--timeout", type=int, default=240)
    args = ap.parse_args()
    for case in args.cases:
        name, precision, *rest = case.split(":")
        measure = "0" if "nomeasure" in rest else "1"
        ws = next((r[3:] for r in rest if r.startswith("ws=")), "")
        print(f"{name} {precision} batch {args.batch}{' measure_precision=False' if measure == '0' else ''}", flush=True)
        try:
            r = subprocess.run([sys.executable, "-c", CHILD, name, precision, measure, str(args.batch), ws],
                               capture_output=True, text=True, timeout=args.timeout)
        except subprocess.TimeoutExpired:
            print("  TIMEOUT", flush=True)
            continue
        print(r.stdout.rstrip() or "  (no output)", flush=True)
        if r.returncode:
            print("  rc", r.returncode, r.stderr[-800:], flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
