"""Latency of dnnx on CUDA with PyTorch CUDA tensors as inputs (DLPack, no host copy), against
dnnx.DeviceArray inputs, LeNet at batch 1 and 1024, CUDA graphs on: wall-clock medians of 300
calls after 30 warm-up calls. Needs torch (same process: build dnnx against the cuDNN torch loads).

    python bench/bench_cuda_torch_io.py
"""
import time

import numpy as np
import torch

import dnnx
from dnnx.examples import build

for batch in (1, 1024):
    m = dnnx.load(build("lenet"), device="cuda", batch_size=batch)
    x = torch.randn(batch, 1, 28, 28, device="cuda")
    xd = m.to_device(x.cpu().numpy())
    for name, fn in (("torch in, device out", lambda: m.run(x, output="device")),
                     ("torch in, torch out", lambda: torch.from_dlpack(m.run(x, output="device"))),
                     ("DeviceArray in, device out", lambda: m.run(xd, output="device"))):
        for _ in range(30):
            fn()
        ts = []
        for _ in range(300):
            t0 = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
        print(f"batch {batch:5d}  {name:28s} median {1e6 * np.median(ts):7.1f} us")
    print("graphs:", m.graphs())
