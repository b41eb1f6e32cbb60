"""Per-layer CPU times of dnnx and onnxruntime on bench/resnet50.py's model, side by side (issue #17):
dnnx from Model.profile, onnxruntime from its own profiler (SessionOptions.enable_profiling), both
medians over --repeat runs on the same threads. Rows are dnnx's conv layers; onnxruntime's fused
node of the same conv is matched by the layer prefix of its name ("layer1.0.a.relu_nchwc").

    python bench/probes/probe_resnet_layers_cpu.py [--threads T] [--batch N] [--repeat K]
"""
from __future__ import annotations

import argparse
import collections
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from resnet50 import build_resnet50  # noqa: E402

import dnnx  # noqa: E402
from _ort_profile import ort_layers  # noqa: E402  (bench/probes/ is sys.path[0])
from dnnx.threads import set_num_threads  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=10)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp()
    path = Path(tmp) / "resnet50.onnx"
    onnx.save(build_resnet50(seed=0), path)
    set_num_threads(a.threads)
    model = dnnx.load(path, batch_size=a.batch)
    x = np.random.default_rng(0).standard_normal((a.batch, 3, 224, 224)).astype(np.float32)
    feeds = {"x": x}
    model.run_dict(feeds)
    table = model.profile(feeds, repeat=a.repeat)
    ort_t = ort_layers(path, feeds, a.threads, a.repeat)
    ort_total = sum(t for _, t in ort_t.values())
    print(f"{'layer':20s} {'dnnx algo':20s} {'dnnx ms':>8s} {'ort op':>14s} {'ort ms':>8s} {'ratio':>6s}")
    for row in table:
        name, ms = row.name, row.median_ms
        prefix = name.rsplit(".", 1)[0] + "."  # "layer1.0.a.conv" -> onnxruntime's "layer1.0.a.relu_nchwc"
        match = [k for k in ort_t if k == name or (k.startswith(prefix) and ort_t[k][0] == row.op.split("+")[0])]
        o = ort_t[match[0]] if match else ("", float("nan"))
        print(f"{name:20s} {row.algorithm[:20]:20s} {ms:8.3f} {o[0][:14]:>14s} {o[1]:8.3f} {ms / o[1]:6.2f}")
    print(f"total dnnx {table.total_ms:.2f} ms, ort {ort_total:.2f} ms")
    by_op = collections.defaultdict(float)
    for op, t in ort_t.values():
        by_op[op] += t
    print("ort by op:", ", ".join(f"{op} {t:.2f}" for op, t in sorted(by_op.items(), key=lambda kv: -kv[1])))


if __name__ == "__main__":
    main()
