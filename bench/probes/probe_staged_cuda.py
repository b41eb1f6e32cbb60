"""Where a staged detector's CUDA run goes (issue #36: torchvision's SSDlite ran 473 ms a call on
an H100 against onnxruntime-gpu's 23 ms, its CPU run 184 ms; Faster R-CNN 3.5 ms against 3.3).
SSDlite's postprocess is 90 per-class blocks of NonZero and TopK (the TorchScript exporter unrolls
torchvision's class loop), so a run crosses about 180 stages (Note [staged plans]). For each
setting: the wall time per run (median of --runs after 3 warm-ups) and the planner's counters
summed over the stages (plans built, reused, evicted: a plan rebuilt every run would show here).

    python3 bench/probes/probe_staged_cuda.py [--model zoo2/det_ssdlite320_mobilenet_v3_large.onnx] [--runs 5]
        [--settings cpu,cuda,cuda-nograph,cuda-heuristic] [--torch-profile N]

--torch-profile N: after the timed runs of each CUDA setting, N more runs under torch.profiler
(CUPTI sees every CUDA runtime call and kernel of the process, dnnx's included): the CUDA API
calls and kernels that take the time, as tables. For host stacks, run the probe under
`py-spy record --native`.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from _external_models import read_model  # noqa: E402


def stage_totals(stats: dict) -> dict:
    stages = stats.get("stages", [])
    keys = ("plans_built", "plans_reused", "plans_evicted")
    totals = {k: int(stats.get(k, 0)) + sum(int(s.get(k, 0)) for s in stages) for k in keys}
    totals["stages"] = len(stages)
    return totals


def torch_profile(m, x, runs: int) -> None:
    """The CUDA API calls and kernels of `runs` runs, as torch.profiler's tables."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(runs):
            m.run(x)
    table = prof.key_averages()
    print(f"  torch.profiler over {runs} runs, by host time:", flush=True)
    print(table.table(sort_by="self_cpu_time_total", row_limit=25, max_name_column_width=60), flush=True)
    print(f"  by device time:", flush=True)
    print(table.table(sort_by="self_cuda_time_total", row_limit=15, max_name_column_width=60), flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="zoo2/det_ssdlite320_mobilenet_v3_large.onnx")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--settings", default="cpu,cuda,cuda-nograph,cuda-heuristic")
    parser.add_argument("--torch-profile", type=int, default=0)
    args = parser.parse_args()
    import dnnx

    model = read_model(args.model).SerializeToString()
    x = np.random.default_rng(0).random((3, 320, 320), dtype=np.float32)
    known = {"cpu": ("cpu", {}), "cuda": ("cuda", {}), "cuda-nograph": ("cuda", {"cuda_graph": False}),
             "cuda-heuristic": ("cuda", {"algo_search": "heuristic"})}
    for name in args.settings.split(","):
        device, options = known[name]
        start = time.perf_counter()
        m = dnnx.load(model, device=device, **options)
        load_s = time.perf_counter() - start
        times = []
        for i in range(3 + args.runs):
            start = time.perf_counter()
            m.run(x)
            if i >= 3:
                times.append((time.perf_counter() - start) * 1e3)
            if i == 0:
                first = stage_totals(m.planner_stats())
        after = stage_totals(m.planner_stats())
        print(f"{device} {options}: load {load_s:.2f} s, run median {statistics.median(times):.1f} ms "
              f"(min {min(times):.1f}); after run 1 {first}; after all {after}", flush=True)
        if device == "cuda":
            graphs = m.graphs()
            print(f"  graphs of the first stage: {graphs[:2]}", flush=True)
            if args.torch_profile:
                torch_profile(m, x, args.torch_profile)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
