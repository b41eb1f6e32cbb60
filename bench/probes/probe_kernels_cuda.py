"""Which CUDA kernels a model's run spends its device time in: torch.profiler (CUPTI) over runs
without the whole-model CUDA graph, so every kernel shows by name. Per-layer times come from
`dnnx profile`; this says what is inside a layer (e.g. an Int8Conv's pad kernel, cuDNN's conv and
the requantizing epilogue, issue #37).

    python3 bench/probes/probe_kernels_cuda.py MODEL.onnx [--batch 256] [--precision fp32] [--runs 3]

MODEL is a file, or a name under ../shared/external (zoo/densenet121.onnx). The input is seeded uniform [0, 1) floats of each input's shape, with the leading dim set to --batch.
Prints the kernels by total device time, with their count per run and mean time.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model")
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--precision", default="fp32")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    import dnnx
    from torch.profiler import ProfilerActivity, profile

    src = args.model
    if not Path(src).is_file():  # a name under ../shared/external (zoo weights materialized from their seed)
        import _external_models as ext

        src = ext.read_model(src).SerializeToString()
    start = time.perf_counter()
    m = dnnx.load(src, device="cuda", precision=args.precision, batch_size=args.batch,
                  cuda_graph=False, plan_cache=False)
    print(f"load {time.perf_counter() - start:.2f} s", flush=True)
    rng = np.random.default_rng(0)
    feeds = {i.name: m.to_device(rng.random(tuple(i.shape), dtype=np.float32)) for i in m.inputs}
    for _ in range(3):
        m.run(feeds, output="device")
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(args.runs):
            m.run(feeds, output="device")
    rows = [e for e in prof.key_averages() if e.device_type.name == "CUDA" or getattr(e, "self_device_time_total", 0)]
    rows.sort(key=lambda e: -e.self_device_time_total)
    total = sum(e.self_device_time_total for e in rows) / args.runs / 1e3
    print(f"device time per run: {total:.2f} ms over {args.runs} runs", flush=True)
    print(f"{'ms/run':>8} {'share':>6} {'calls/run':>9} {'us/call':>8}  kernel")
    for e in rows[: args.top]:
        per_run = e.self_device_time_total / args.runs / 1e3
        calls = e.count / args.runs
        print(f"{per_run:8.3f} {per_run / total:6.1%} {calls:9.1f} {e.self_device_time_total / max(e.count, 1):8.1f}  "
              f"{e.key[:110]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
