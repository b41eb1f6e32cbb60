"""Any external model's layers on the CPU, dnnx beside onnxruntime (issue #38): dnnx's Model.profile
and onnxruntime's own profiler (SessionOptions.enable_profiling) over the same feeds and threads,
medians over --repeat runs. Three tables: dnnx's time by op and algorithm, onnxruntime's by op, and
both summed per group of layers, a group being the first --depth components of the node names
("/features/features.2/features.2.0/block/block.1/..." at depth 5: one MBConv's depthwise conv
with its activation, whatever each engine fused or reordered). onnxruntime's layout reorders have
generated names and are summed on a row of their own.

    DNNX_DEV_BUILD=build/dev PYTHONPATH=python python bench/probes/probe_model_layers_cpu.py \
        zoo/efficientnet_b0.onnx [--threads 1] [--repeat 30] [--depth 5]
"""
from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import _external_models as ext  # noqa: E402

import dnnx  # noqa: E402
from _ort_profile import ort_layers  # noqa: E402  (bench/probes/ is sys.path[0])


def group(name: str, depth: int) -> str:
    return "/".join(name.strip("/").split("/")[:depth]) if name.startswith("/") else "(generated names)"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model", help="a file under ../shared/external, e.g. zoo/efficientnet_b0.onnx")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--depth", type=int, default=5)
    a = ap.parse_args()
    model = ext.read_model(a.model)
    batch = 1 if ext.batch_dim(ext.declared_inputs(model)) else None
    feeds, _ = ext.make_inputs(a.model, model, batch)
    dnnx.threads.set_num_threads(a.threads)
    ours = dnnx.load(model, batch_size=batch) if batch is not None else dnnx.load(model)
    ours.run_dict(feeds)
    table = ours.profile(feeds, repeat=a.repeat)
    theirs = ort_layers(ours.proto, feeds, a.threads, a.repeat)

    by_algo, count = collections.defaultdict(float), collections.Counter()
    for r in table:
        by_algo[(r.op, r.algorithm)] += r.median_ms
        count[(r.op, r.algorithm)] += 1
    print(f"dnnx: {table.total_ms:.3f} ms over its layers")
    for (op, algo), ms in sorted(by_algo.items(), key=lambda kv: -kv[1]):
        print(f"  {ms:8.3f} {count[(op, algo)]:4d}  {op:28s} {algo}")
    by_op, ort_count = collections.defaultdict(float), collections.Counter()
    for op, ms in theirs.values():
        by_op[op] += ms
        ort_count[op] += 1
    print(f"onnxruntime: {sum(by_op.values()):.3f} ms over its nodes")
    for op, ms in sorted(by_op.items(), key=lambda kv: -kv[1]):
        print(f"  {ms:8.3f} {ort_count[op]:4d}  {op}")

    ours_g, theirs_g = collections.OrderedDict(), collections.defaultdict(float)
    for r in table:
        key = group(r.name, a.depth)
        ours_g[key] = ours_g.get(key, 0.0) + r.median_ms
    for name, (_, ms) in theirs.items():
        theirs_g[group(name, a.depth)] += ms
    print(f"\n{'group':60s} {'dnnx ms':>8s} {'ort ms':>8s} {'ratio':>6s}")
    for key in list(ours_g) + [k for k in theirs_g if k not in ours_g]:
        d, o = ours_g.get(key, 0.0), theirs_g.get(key, 0.0)
        ratio = f"{d / o:6.2f}" if d > 0 and o > 0 else "     -"
        print(f"{key[-60:]:60s} {d:8.3f} {o:8.3f} {ratio}")


if __name__ == "__main__":
    main()
