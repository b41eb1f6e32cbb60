"""The 4-layer LSTM of bench_cuda_lstm.py (sequence 512, input and hidden 512) on each cuDNN RNN
algorithm: standard (what dnnx plans), persistent static and persistent dynamic, by the probe hook
DNNX_PROBE_RNN_ALGO (engine/backends/cuda/backend/test_hooks.h), each in a process of its own. Per
algorithm, precision and batch: the wall-clock median of --iters calls (input on the GPU,
output="device") and the max abs difference from the standard algorithm's output.

    python bench/probes/probe_rnn_algo.py [--iters 10] [--batches 64,256]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for bench_cuda_lstm and _timing
ALGOS = ("standard", "persist_static", "persist_dynamic")


def worker(algo: str, precision: str, batch: int, iters: int, out: str) -> None:
    import dnnx
    from _timing import median_ms, time_calls
    from bench_cuda_lstm import inputs_for, onnx_model

    model = dnnx.load(onnx_model(batch), device="cuda", precision=precision, plan_cache=False)
    x = model.to_device(inputs_for(batch))
    ms = median_ms(time_calls(lambda: model.run(x, output="device"), 3, iters))
    y = np.asarray(model.run(inputs_for(batch)))
    np.save(out, y[-8:])
    print(json.dumps({"ms": ms}))


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--iters", type=int, default=10)
    p.add_argument("--batches", default="64,256")
    p.add_argument("--worker", nargs=5)
    args = p.parse_args()
    if args.worker:
        algo, precision, batch, iters, out = args.worker
        worker(algo, precision, int(batch), int(iters), out)
        return 0
    print("| precision | batch | algorithm | ms per call | max abs diff vs standard |")
    print("| --- | ---: | --- | ---: | ---: |")
    for precision in ("fp32", "tf32"):
        for batch in (int(b) for b in args.batches.split(",")):
            ref = None
            for algo in ALGOS:
                out = f"/tmp/probe_rnn_{algo}_{precision}_{batch}.npy"
                env = dict(os.environ, DNNX_PROBE_RNN_ALGO=algo)
                r = subprocess.run([sys.executable, __file__, "--worker", algo, precision, str(batch), str(args.iters), out],
                                   env=env, capture_output=True, text=True)
                if r.returncode != 0:
                    print(f"| {precision} | {batch} | {algo} | failed: {r.stderr.strip().splitlines()[-1][:150]} | |",
                          flush=True)
                    continue
                ms = json.loads(r.stdout.strip().splitlines()[-1])["ms"]
                y = np.load(out)
                ref = y if ref is None else ref
                print(f"| {precision} | {batch} | {algo} | {ms:.2f} | {float(np.abs(y - ref).max()):.2g} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
