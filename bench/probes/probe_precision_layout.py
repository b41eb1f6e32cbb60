"""Issue #17 probe: where tf32 and fp16 lose to fp32 on small models. LeNet (dnnx.examples) at
batch 1 and 1024: the whole-run time (device input and output, CUDA graph replays, median of 200)
and the per-layer profile, at fp32, tf32 and fp16, each with the channels_last pass on (the
default) and off.

    python bench/probes/probe_precision_layout.py
"""
import time

import numpy as np

import dnnx
from dnnx.examples import build


def run_time_us(model, x, repeat=200):
    dx = model.to_device(x)
    for _ in range(5):
        model.run(dx, output="device")
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        model.run(dx, output="device")
        times.append(time.perf_counter() - start)
    return 1e6 * float(np.median(times))


for batch in (1, 1024):
    x = np.random.default_rng(0).random((batch, 1, 28, 28), dtype=np.float32)
    for precision in ("fp32", "tf32", "fp16"):
        for nhwc in (True, False):
            if precision == "fp32" and not nhwc:
                continue
            model = dnnx.load(build("lenet"), device="cuda", precision=precision, batch_size=batch,
                              passes={"channels_last": nhwc})
            us = run_time_us(model, x)
            print(f"== LeNet batch {batch} {precision} channels_last={nhwc}: {us:.1f} us per run")
            print(model.profile(x, repeat=50))
