"""What cuDNN's int8 convolution can do on this GPU (issue #37: dnnx's int8 ResNet-50 at batch 256
ran at 73 ms against its fp16's 7.4 ms on an H100). For ResNet-50's conv shapes at --batch, in
channels-last layouts, each engine's median GPU time (CUDA events, --reps runs):

- fp16:      PyTorch's conv2d in channels_last (cudnn.benchmark on): the yardstick;
- int32 out: cudnn-frontend's int8 conv with int32 sums, as dnnx's Int8Conv runs it
             (quant/int8_conv_graph.cc): every plan that heuristics A and the fallback list offer,
             plan 0 (dnnx's pick today) and the fastest;
- int8 out:  the same conv with the requantizing epilogue fused (float scale and bias per
             channel, Relu, an int8 output): the form that keeps 1 byte per value between layers;
- int_mm:    a 1x1 conv as torch._int_mm's int8 GEMM (cuBLASLt IMMA), [N*H*W, C] x [C, M].

Needs torch and the nvidia-cudnn-frontend Python module (scripts/gpu-check.sh installs its wheel).

    python3 bench/probes/probe_cuda_int8_conv.py [--batch 256] [--reps 20]
"""
from __future__ import annotations

import argparse
import statistics

import torch

# (C, H, M, k, stride): ResNet-50's conv shapes, stage by stage (the 7x7 stem left out)
SHAPES = [
    (64, 56, 64, 1, 1), (64, 56, 64, 3, 1), (64, 56, 256, 1, 1), (256, 56, 64, 1, 1),
    (128, 28, 128, 3, 1), (512, 28, 128, 1, 1), (128, 28, 512, 1, 1),
    (256, 14, 256, 3, 1), (1024, 14, 256, 1, 1), (256, 14, 1024, 1, 1),
    (512, 7, 512, 3, 1), (2048, 7, 512, 1, 1), (512, 7, 2048, 1, 1),
]


def median_ms(fn, reps: int) -> float:
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)


def cudnn_plans(cudnn, handle, x, w, pad, stride, fused: bool):
    """(plan names, a function running plan i) of the int8 conv; fused adds scale, bias, Relu and an
    int8 output."""
    g = cudnn.pygraph(io_data_type=cudnn.data_type.INT8, intermediate_data_type=cudnn.data_type.FLOAT if fused else
                      cudnn.data_type.INT32, compute_data_type=cudnn.data_type.INT32, handle=handle)
    X = g.tensor(name="X", dim=list(x.shape), stride=list(x.stride()), data_type=cudnn.data_type.INT8)
    W = g.tensor(name="W", dim=list(w.shape), stride=list(w.stride()), data_type=cudnn.data_type.INT8)
    sums = g.conv_fprop(image=X, weight=W, padding=[pad, pad], stride=[stride, stride], dilation=[1, 1],
                        compute_data_type=cudnn.data_type.INT32)
    m = w.shape[0]
    n, _, h, wd = x.shape
    oh = (h + 2 * pad - w.shape[2]) // stride + 1
    extra = {}
    if fused:
        sums.set_data_type(cudnn.data_type.INT32)
        scale = torch.full((1, m, 1, 1), 0.01, device="cuda", dtype=torch.float32)
        bias = torch.zeros((1, m, 1, 1), device="cuda", dtype=torch.float32)
        S = g.tensor(name="S", dim=[1, m, 1, 1], stride=[m, 1, 1, 1], data_type=cudnn.data_type.FLOAT)
        B = g.tensor(name="B", dim=[1, m, 1, 1], stride=[m, 1, 1, 1], data_type=cudnn.data_type.FLOAT)
        v = g.mul(a=sums, b=S, compute_data_type=cudnn.data_type.FLOAT)
        v.set_data_type(cudnn.data_type.FLOAT)
        v = g.add(a=v, b=B, compute_data_type=cudnn.data_type.FLOAT)
        v.set_data_type(cudnn.data_type.FLOAT)
        Y = g.relu(input=v, compute_data_type=cudnn.data_type.FLOAT)
        Y.set_output(True).set_data_type(cudnn.data_type.INT8)
        y = torch.empty((n, oh, oh, m), device="cuda", dtype=torch.int8).permute(0, 3, 1, 2)
        extra = {S: scale, B: bias}
    else:
        Y = g.identity(input=sums)
        Y.set_output(True).set_data_type(cudnn.data_type.INT32)
        y = torch.empty((n, oh, oh, m), device="cuda", dtype=torch.int32).permute(0, 3, 1, 2)
    Y.set_dim(list(y.shape)).set_stride(list(y.stride()))
    g.validate()
    g.build_operation_graph()
    g.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
    g.check_support()
    g.build_plans(cudnn.build_plan_policy.ALL)
    count = g.get_execution_plan_count()
    names, runners = [], []
    for i in range(count):
        try:
            size = g.get_workspace_size_plan_at_index(i)
            workspace = torch.empty(max(size, 1), device="cuda", dtype=torch.uint8)
            pack = {X: x, W: w, Y: y, **extra}
            names.append(g.get_plan_name_at_index(i))
            runners.append(lambda i=i, pack=pack, workspace=workspace:
                           g.execute_plan_at_index(pack, workspace, i, handle=handle))
        except Exception as e:  # a plan that was not built
            names.append(f"plan {i}: {type(e).__name__}")
            runners.append(None)
    return names, runners


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--reps", type=int, default=20)
    args = parser.parse_args()
    import cudnn

    torch.backends.cudnn.benchmark = True
    handle = cudnn.create_handle()
    cudnn.set_stream(handle=handle, stream=torch.cuda.current_stream().cuda_stream)
    print(f"{torch.cuda.get_device_name()}, cuDNN backend {cudnn.backend_version()}, batch {args.batch}, "
          f"median of {args.reps} (ms)")
    print("C H M k s | fp16 torch | int32 out: plans, plan0, best (name) | int8 out fused: plans, plan0, best | int_mm")
    totals = {"fp16": 0.0, "int32_p0": 0.0, "int32_best": 0.0, "int8_p0": 0.0, "int8_best": 0.0}
    for c, h, m, k, s in SHAPES:
        pad = k // 2
        n = args.batch
        xh = torch.randn(n, c, h, h, device="cuda", dtype=torch.float16).to(memory_format=torch.channels_last)
        wh = torch.randn(m, c, k, k, device="cuda", dtype=torch.float16).to(memory_format=torch.channels_last)
        fp16 = median_ms(lambda: torch.nn.functional.conv2d(xh, wh, padding=pad, stride=s), args.reps)
        totals["fp16"] += fp16
        x8 = torch.randint(-8, 8, (n, h, h, c), device="cuda", dtype=torch.int8).permute(0, 3, 1, 2)
        w8 = torch.randint(-8, 8, (m, k, k, c), device="cuda", dtype=torch.int8).permute(0, 3, 1, 2)
        row = [f"{c} {h} {m} {k} {s} | {fp16:.3f}"]
        for fused, key in ((False, "int32"), (True, "int8")):
            try:
                names, runners = cudnn_plans(cudnn, handle, x8, w8, pad, s, fused)
                times = [median_ms(r, args.reps) if r else float("inf") for r in runners]
                best = min(range(len(times)), key=times.__getitem__)
                totals[key + "_p0"] += times[0]
                totals[key + "_best"] += times[best]
                row.append(f"{len(times)}, {times[0]:.3f}, {times[best]:.3f} ({names[best][:40]})")
            except Exception as e:
                row.append(f"refused: {type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else ''}")
        if k == 1 and s == 1:
            a = torch.randint(-8, 8, (n * h * h, c), device="cuda", dtype=torch.int8)
            b = torch.randint(-8, 8, (c, m), device="cuda", dtype=torch.int8)
            try:
                row.append(f"{median_ms(lambda: torch._int_mm(a, b), args.reps):.3f}")
            except Exception as e:
                row.append(f"int_mm: {type(e).__name__}")
        print(" | ".join(row), flush=True)
    print("sums over the shapes (ms): " + ", ".join(f"{k} {v:.2f}" for k, v in totals.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
