"""Issue #38 probe: the channels-last forms of the channel-axis ops (Concat, Split, Slice, the channel
shuffle) and the means over pixels on the CPU, on against off (DNNX_PROBE_CHANNEL_CONCAT=0, the plan
before them). Both plans load in one process and take turns, --rounds interleaved rounds of --calls
calls each; medians. Prints each model's Transpose count in either plan.

    DNNX_DEV_BUILD=build/dev PYTHONPATH=python python bench/probes/probe_channel_forms_cpu.py \\
        [--threads 1] [--rounds 10] zoo2/rexnet_100.onnx zoo/shufflenet_v2_x1_0.onnx
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import _external_models as ext  # noqa: E402

import dnnx  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="+", help="names under ../shared/external (zoo2/rexnet_100.onnx)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--calls", type=int, default=5)
    args = ap.parse_args()
    dnnx.threads.set_num_threads(args.threads)
    for name in args.models:
        model = ext.read_model(name, ext.EXTERNAL)
        feeds, _ = ext.make_inputs(name, model, 1)
        plans = {}
        for key, switch in (("off", "0"), ("on", "1")):  # the switch is read when a backend is made
            os.environ["DNNX_PROBE_CHANNEL_CONCAT"] = switch
            plans[key] = dnnx.load(model, batch_size=1)
        os.environ.pop("DNNX_PROBE_CHANNEL_CONCAT")
        transposes = {k: sum(r["op"] == "Transpose" for r in m.plan()) for k, m in plans.items()}
        times = {k: [] for k in plans}
        for _ in range(args.rounds):
            for key, m in plans.items():
                m.run_dict(feeds)
                start = time.perf_counter()
                for _ in range(args.calls):
                    m.run_dict(feeds)
                times[key].append((time.perf_counter() - start) / args.calls * 1e3)
        off, on = (float(np.median(times[k])) for k in ("off", "on"))
        print(f"{name} {args.threads} thr: Transposes {transposes}; off {off:.3f} ms, on {on:.3f} ms, "
              f"on/off {on / off:.3f}", flush=True)


if __name__ == "__main__":
    main()
