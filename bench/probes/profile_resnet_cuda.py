"""Where ResNet-50's time goes on CUDA at batch 256: per-op-type GPU time from m.profile (CUDA events in a
replayed graph), fp32 / tf32 / fp16 / bf16, default plans; prints two lines per precision, then
its slowest layers (name, op, GPU ms, algorithm).

    python bench/probes/profile_resnet_cuda.py
"""
import sys
from collections import defaultdict
from pathlib import Path
import numpy as np
import dnnx

sys.path.insert(1, str(Path(__file__).resolve().parent.parent))  # bench/, for resnet50.py
from resnet50 import build_resnet50  # noqa: E402

TOP = 8  # the slowest layers shown per precision
model = build_resnet50()
x = np.random.default_rng(0).standard_normal((256, 3, 224, 224)).astype(np.float32)
for precision in ("fp32", "tf32", "fp16", "bf16"):
    m = dnnx.load(model, device="cuda", precision=precision, batch_size=256)
    rows = m.profile(x, repeat=5)
    by_op = defaultdict(float)
    algos = defaultdict(int)
    for r in rows:
        by_op[r.op] += r.median_ms
    plan = m.plan(batch_size=256)
    for row in plan:
        if row["op"].startswith("Conv"):
            algos[row["algorithm"].split(" ")[0]] += 1
    total = sum(by_op.values())
    print(f"{precision}: total {total:.2f} ms; " + ", ".join(f"{k} {v:.2f}" for k, v in sorted(by_op.items(), key=lambda kv: -kv[1])))
    print(f"  conv algorithms: {dict(algos)}", flush=True)
    by_name = {row["name"]: row for row in plan}
    for r in sorted(rows, key=lambda r: -r.median_ms)[:TOP]:
        print(f"  {r.name} {r.op} {r.median_ms:.3f} ms [{by_name.get(r.name, {}).get('algorithm', '')[:60]}]")
    m = None
