"""dnnx on CUDA against PyTorch on the same GPU, LeNet at batch 1, 64, 256 and 1024; writes
bench/RESULTS_CUDA.md (or --out).

    python bench/bench_cuda.py [--iters K] [--warmup W] [--out FILE]

PyTorch runs in a separate process (`--worker torch`): it loads its own cuDNN, and only one
libcudnn.so.9 can live in a process. Both sides use fp32 with TF32 off and cuDNN's heuristic
algorithm choice (torch.backends.cudnn.benchmark = False), on the same weights and the same
seeded random inputs; the worker also returns its outputs, so that the report shows the
largest difference. Times are wall-clock medians over K calls after W warm-up calls:
- dnnx: Model.run, numpy in and numpy out (copies to and from the GPU included; dnnx has no
  device-resident inputs or CUDA graphs yet);
- torch host: the same numpy in/out work (tensor to the GPU, forward, back to numpy);
- torch device: input already on the GPU, synchronize after the forward (eager);
- torch graph: one CUDA graph replay of the forward on a static input, then synchronize.
"""
from __future__ import annotations

import argparse
import datetime
import json
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

BATCHES = (1, 64, 256, 1024)


def time_calls(fn, warmup: int, iters: int) -> list:
    for _ in range(warmup):
        fn()
    seconds = []
    for _ in range(iters):
        start = time.perf_counter()
        fn()
        seconds.append(time.perf_counter() - start)
    return seconds


def inputs_for(batch: int) -> np.ndarray:
    return np.random.default_rng(batch).standard_normal((batch, 1, 28, 28)).astype(np.float32)


# --- the PyTorch worker (its own process) ------------------------------------------------------
def torch_worker(model_path: str, out_dir: str, warmup: int, iters: int) -> None:
    import torch
    import torch.nn.functional as F

    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.benchmark = False
    w = {t.name: torch.from_numpy(numpy_helper.to_array(t).copy()).cuda()
         for t in onnx.load(model_path).graph.initializer}

    def lenet(x):
        x = F.max_pool2d(F.conv2d(x, w["conv1.w"], w["conv1.b"]), 2, 2)
        x = F.max_pool2d(F.conv2d(x, w["conv2.w"], w["conv2.b"]), 2, 2)
        x = F.relu(F.linear(x.flatten(1), w["fc1.w"], w["fc1.b"]))
        return F.softmax(F.linear(x, w["fc2.w"], w["fc2.b"]), dim=1)

    results = {"torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
               "gpu": torch.cuda.get_device_name(0), "cases": {}}
    with torch.inference_mode():
        for batch in BATCHES:
            x_np = inputs_for(batch)
            x_dev = torch.from_numpy(x_np).cuda()
            np.save(Path(out_dir) / f"torch_{batch}.npy", lenet(x_dev).cpu().numpy())

            def host():
                return lenet(torch.from_numpy(x_np).cuda()).cpu().numpy()

            def device():
                lenet(x_dev)
                torch.cuda.synchronize()

            static_x = x_dev.clone()
            stream = torch.cuda.Stream()
            stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream):
                for _ in range(3):
                    lenet(static_x)
            torch.cuda.current_stream().wait_stream(stream)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                lenet(static_x)

            def replay():
                graph.replay()
                torch.cuda.synchronize()

            results["cases"][str(batch)] = {name: time_calls(fn, warmup, iters)
                                            for name, fn in (("host", host), ("device", device), ("graph", replay))}
    (Path(out_dir) / "torch.json").write_text(json.dumps(results))


# --- dnnx and the report (the main process: never imports torch) ------------------------------
def median_ms(seconds: list) -> float:
    return 1e3 * float(np.median(seconds))


def report(dnnx_times: dict, torch_results: dict, diffs: dict, status: str, command: str, warmup: int,
           iters: int) -> str:
    import dnnx

    lines = [
        "# dnnx CUDA vs PyTorch: LeNet, fp32 (no TF32)",
        "",
        f"- date: {datetime.datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z')}",
        f"- GPU: {torch_results['gpu']}; dnnx {dnnx.__version__}: {status}",
        f"- PyTorch {torch_results['torch']} (cuDNN {torch_results['cudnn']}), in its own process; "
        f"Python {platform.python_version()}",
        f"- command: `{command}`",
        f"- method: wall-clock median of {iters} calls after {warmup} warm-up calls; same weights and seeded "
        "inputs; cuDNN heuristic algorithms on both sides (see bench/bench_cuda.py)",
        "",
        "| batch | dnnx ms (numpy in/out) | torch ms (numpy in/out) | dnnx/torch | torch eager ms (on GPU) | "
        "torch CUDA graph ms (on GPU) | dnnx samples/s | max abs diff |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for batch in BATCHES:
        t = torch_results["cases"][str(batch)]
        ours, host = median_ms(dnnx_times[batch]), median_ms(t["host"])
        lines.append(f"| {batch} | {ours:.3f} | {host:.3f} | {ours / host:.2f} | {median_ms(t['device']):.3f} | "
                     f"{median_ms(t['graph']):.3f} | {batch / ours * 1e3:,.0f} | {diffs[batch]:.2g} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iters", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--out", default=str(Path(__file__).with_name("RESULTS_CUDA.md")))
    parser.add_argument("--worker", choices=["torch"], help=argparse.SUPPRESS)
    parser.add_argument("--model", help=argparse.SUPPRESS)
    parser.add_argument("--dir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        torch_worker(args.model, args.dir, args.warmup, args.iters)
        return 0

    import dnnx
    from dnnx.examples import build

    with tempfile.TemporaryDirectory() as tmp:
        model_path = str(Path(tmp) / "lenet.onnx")
        onnx.save(build("lenet", seed=0), model_path)
        subprocess.run([sys.executable, __file__, "--worker", "torch", "--model", model_path, "--dir", tmp,
                        "--warmup", str(args.warmup), "--iters", str(args.iters)], check=True)
        torch_results = json.loads((Path(tmp) / "torch.json").read_text())
        dnnx_times, diffs = {}, {}
        for batch in BATCHES:
            x = inputs_for(batch)
            model = dnnx.load(model_path, device="cuda", batch_size=batch)
            diffs[batch] = float(np.abs(model.run(x) - np.load(Path(tmp) / f"torch_{batch}.npy")).max())
            dnnx_times[batch] = time_calls(lambda: model.run(x), args.warmup, args.iters)
    text = report(dnnx_times, torch_results, diffs, dnnx.cuda_status(), shlex.join(["python", *sys.argv]),
                  args.warmup, args.iters)
    Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
