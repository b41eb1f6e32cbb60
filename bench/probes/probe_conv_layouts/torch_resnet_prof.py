import torch, torchvision
from torch.profiler import profile, ProfilerActivity
torch.backends.cudnn.benchmark = True
for mode in ("fp16cl", "tf32"):
    torch.backends.cudnn.allow_tf32 = mode == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = mode == "tf32"
    m = torchvision.models.resnet50().cuda().eval()
    x = torch.rand(256, 3, 224, 224, device="cuda")
    if mode == "fp16cl":
        m = m.half().to(memory_format=torch.channels_last); x = x.half().contiguous(memory_format=torch.channels_last)
    with torch.no_grad():
        for _ in range(5): m(x)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as p:
            m(x); torch.cuda.synchronize()
    print("== torch resnet50", mode)
    rows = sorted(p.key_averages(), key=lambda e: -e.self_device_time_total)[:14]
    tot = sum(e.self_device_time_total for e in p.key_averages())
    print(f"total GPU us {tot:.0f}")
    for e in rows: print(f"{e.self_device_time_total:10.0f} us  x{e.count:4d}  {e.key[:110]}")
