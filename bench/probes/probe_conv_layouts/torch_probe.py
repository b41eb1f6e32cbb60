"""Per-shape torch conv timing (cudnn.benchmark), NCHW / channels_last x fp32 / tf32 / fp16; and a
torch.profiler breakdown of torchvision resnet50 at batch 256 fp16 channels-last and tf32."""
import sys, torch, torch.nn.functional as F
torch.backends.cudnn.benchmark = True
def t(fn, reps=20):
    for _ in range(3): fn()
    torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    for _ in range(reps): fn()
    e1.record(); torch.cuda.synchronize()
    return e0.elapsed_time(e1) / reps
n, c, h, w, k, r, st, pd = map(int, sys.argv[1:9])
for prec in ("fp32", "tf32", "fp16"):
    torch.backends.cudnn.allow_tf32 = prec == "tf32"
    dt = torch.float16 if prec == "fp16" else torch.float32
    for fmt in ("NCHW", "NHWC"):
        mf = torch.channels_last if fmt == "NHWC" else torch.contiguous_format
        x = (torch.rand(n, c, h, w, device="cuda", dtype=dt) - 0.5).contiguous(memory_format=mf)
        wt = (torch.rand(k, c, r, r, device="cuda", dtype=dt) - 0.5).contiguous(memory_format=mf)
        ms = t(lambda: F.conv2d(x, wt, None, st, pd))
        print(f"TORCH {prec} {fmt} conv {ms:.4f}")
