"""One fine-tuning step on CUDA, dnnx against PyTorch on the same GPU: LeNet's last two layers
(fc1, fc2) at batch 64, 256 and 1024, and the whole model at 256. Prints a markdown table
(machine, date, command), also to --out.

    python bench/bench_cuda_finetune.py [--iters K] [--warmup W] [--out FILE]

A step: the batch copied to the GPU (from numpy, or already there: "x on GPU"), forward,
cross-entropy loss (fused with the final Softmax), backward over the trained layers only, SGD
with momentum 0.9 (lr 0.01; 0.001 for the whole model), and the loss back as a Python float. dnnx: Tuner.step, one CUDA graph replay
per step from the second step on ("dnnx eager": cuda_graph=False); "x on GPU" passes a
dnnx.DeviceArray made once (Model.to_device), copied on the device into the step's input.
PyTorch (a separate process: only one libcudnn.so.9 per process) in fp32 with TF32 off: "torch
eager" is the same step written the usual way (zero_grad, forward, F.cross_entropy on the
logits, backward, optimizer.step, loss.item()), from numpy or with x on the GPU already;
"torch graph" replays that step captured with torch.cuda.graph on static tensors (the copy of
the numpy batch into the static input and loss.item() outside the graph). Times are wall-clock medians over K
steps after W warm-up steps. Target (issue #4): at or under 150 us per last-two-layer step at
batch 256 on an H200.
"""
from __future__ import annotations

import argparse
import contextlib
import datetime
import io
import json
import platform
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

from _timing import median_us, time_calls
from _torch_worker import add_worker_arguments, run_torch_worker

CASES = (("last:2", 64), ("last:2", 256), ("last:2", 1024), ("all", 256))
# dnnx's rows: every case with algo_search="heuristic", and the target's case and the whole model
# also with "exhaustive" (cuDNN's and cuBLASLt's candidates timed at plan time, through a plan
# cache); the whole model also with "auto", the default (its backward convs timed: Note [auto search])
DNNX_ROWS = (("last:2", 64, "heuristic"), ("last:2", 256, "heuristic"), ("last:2", 256, "exhaustive"),
             ("last:2", 1024, "heuristic"), ("all", 256, "heuristic"), ("all", 256, "auto"),
             ("all", 256, "exhaustive"))
TARGET_US = 150.0  # last:2 at batch 256
# SGD learning rate per case: the whole model trained on one repeated batch diverges at 0.01 (on
# the CPU too: loss 8.6 -> 5e3 -> non-finite within 15 steps), so it steps at 0.001.
LR = {"last:2": 0.01, "all": 0.001}


def batch_for(batch: int):
    rng = np.random.default_rng(batch)
    return rng.standard_normal((batch, 1, 28, 28)).astype(np.float32), rng.integers(0, 10, size=batch)


# --- the PyTorch worker (its own process) ------------------------------------------------------
def torch_worker(model_path: str, out: str, warmup: int, iters: int) -> None:
    import torch
    import torch.nn.functional as F

    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    init = {t.name: numpy_helper.to_array(t).copy() for t in onnx.load(model_path).graph.initializer}
    results = {"torch": torch.__version__, "gpu": torch.cuda.get_device_name(0), "cases": {}}
    for trainable, batch in CASES:
        w = {k: torch.from_numpy(v).cuda() for k, v in init.items()}
        trained = [k for k in w if trainable == "all" or k.startswith("fc")]
        for k in trained:
            w[k].requires_grad_(True)
        opt = torch.optim.SGD([w[k] for k in trained], lr=LR[trainable], momentum=0.9)

        def logits(x):
            with torch.set_grad_enabled(trainable == "all"):
                h = F.max_pool2d(F.conv2d(x, w["conv1.w"], w["conv1.b"]), 2, 2)
                h = F.max_pool2d(F.conv2d(h, w["conv2.w"], w["conv2.b"]), 2, 2).flatten(1)
            h = F.relu(F.linear(h, w["fc1.w"], w["fc1.b"]))
            return F.linear(h, w["fc2.w"], w["fc2.b"])

        x_np, y_np = batch_for(batch)

        def eager_step(x):
            y = torch.from_numpy(y_np).cuda()
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(logits(x), y)
            loss.backward()
            opt.step()
            return loss.item()

        x_dev = torch.from_numpy(x_np).cuda()
        case = {"eager": time_calls(lambda: eager_step(torch.from_numpy(x_np).cuda()), warmup, iters),
                "eager device": time_calls(lambda: eager_step(x_dev), warmup, iters)}
        try:
            sx, sy = torch.from_numpy(x_np).cuda(), torch.from_numpy(y_np).cuda()
            stream = torch.cuda.Stream()
            stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream):
                for _ in range(3):
                    opt.zero_grad(set_to_none=True)
                    F.cross_entropy(logits(sx), sy).backward()
                    opt.step()
            torch.cuda.current_stream().wait_stream(stream)
            graph = torch.cuda.CUDAGraph()
            opt.zero_grad(set_to_none=True)
            with torch.cuda.graph(graph):
                static_loss = F.cross_entropy(logits(sx), sy)
                static_loss.backward()
                opt.step()

            def replay():
                sx.copy_(torch.from_numpy(x_np), non_blocking=False)
                sy.copy_(torch.from_numpy(y_np), non_blocking=False)
                graph.replay()
                return static_loss.item()

            case["graph"] = time_calls(replay, warmup, iters)
        except Exception as e:  # noqa: BLE001 - reported in the table, not fatal
            case["graph_error"] = f"{type(e).__name__}: {e}"
        results["cases"][f"{trainable}@{batch}"] = case
    Path(out).write_text(json.dumps(results))


# --- dnnx and the report (the main process: never imports torch) ------------------------------
def time_dnnx(model_path: str, trainable: str, batch: int, warmup: int, iters: int, graph: bool,
              on_gpu: bool = False, search: str = "heuristic") -> list:
    import dnnx

    cache = str(Path(model_path).with_name("plan-cache.json"))
    model = dnnx.load(model_path, device="cuda", cuda_graph=graph, algo_search=search, plan_cache=cache)
    tuner = model.finetune(trainable=trainable, lr=LR[trainable], momentum=0.9)
    x, y = batch_for(batch)
    if on_gpu:
        x = model.to_device(x)
    seconds = time_calls(lambda: tuner.step(x, y), warmup, iters)
    if graph:
        assert [g["state"] for g in tuner.graphs()] == ["captured"], tuner.graphs()
    if search != "heuristic":  # what the search chose (the plan cache's, after the first load)
        PLANS[(trainable, batch, search)] = [f"{r['name']} ({r['stage']}): {r['algorithm']}"
                                             for r in tuner.plan(batch_size=batch)]
    return seconds


PLANS = {}  # (trainable, batch, search) -> the tuner's plan rows, for a searched plan


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iters", type=int, default=1000)
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--out", help="also write the markdown section to this file")
    add_worker_arguments(parser, "--model", "--result")
    args = parser.parse_args()
    if args.worker:
        torch_worker(args.model, args.result, args.warmup, args.iters)
        return 0
    import dnnx
    from dnnx.examples.lenet import build_lenet

    with tempfile.TemporaryDirectory() as tmp:
        model_path = str(Path(tmp) / "lenet.onnx")
        onnx.save(build_lenet(seed=0), model_path)
        rows = {}
        for trainable, batch, search in DNNX_ROWS:
            timed = lambda graph, on_gpu=False: median_us(  # noqa: E731
                time_dnnx(model_path, trainable, batch, args.warmup, args.iters, graph, on_gpu, search))
            rows[(trainable, batch, search)] = {
                "dnnx": timed(True), "dnnx device": timed(True, on_gpu=True), "dnnx eager": timed(False)}
        result = Path(tmp) / "torch.json"
        status = "ok"
        try:
            run_torch_worker(__file__, "--model", model_path, "--result", str(result), "--iters", str(args.iters),
                             "--warmup", str(args.warmup), timeout=900)
            torch_results = json.loads(result.read_text())
        except (subprocess.SubprocessError, OSError) as e:
            status, torch_results = f"PyTorch worker failed: {e}", {"cases": {}}
    report = io.StringIO()
    with contextlib.redirect_stdout(report):
        command = "python " + " ".join(shlex.quote(a) for a in sys.argv)
        print(f"## Fine-tuning step on CUDA: dnnx vs PyTorch ({datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC)")
        print()
        print(f"- machine: {platform.node()}, {torch_results.get('gpu', '?')}; dnnx {dnnx.__version__}, "
              f"torch {torch_results.get('torch', '?')}; {dnnx.cuda_status()}")
        print(f"- command: `{command}` (median of {args.iters} steps after {args.warmup} warm-up steps)")
        print(f"- PyTorch worker: {status}")
        print()
        print("| trained | batch | dnnx graph (us) | dnnx graph, x on GPU (us) | dnnx eager (us) | torch eager (us) "
              "| torch eager, x on GPU (us) | torch graph (us) | dnnx vs torch eager |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for (trainable, batch, search), r in rows.items():
            t = torch_results["cases"].get(f"{trainable}@{batch}", {})
            label = trainable if search == "heuristic" else f"{trainable}, {search}"
            eager = median_us(t["eager"]) if "eager" in t else float("nan")
            eager_dev = median_us(t["eager device"]) if "eager device" in t else float("nan")
            graph = f"{median_us(t['graph']):.0f}" if "graph" in t else ("failed" if "graph_error" in t else "n/a")
            print(f"| {label} | {batch} | {r['dnnx']:.0f} | {r['dnnx device']:.0f} | {r['dnnx eager']:.0f} | "
                  f"{eager:.0f} | {eager_dev:.0f} | {graph} | {eager / r['dnnx']:.1f}x |")
        print()
        for search in ("heuristic", "exhaustive"):
            last2, last2_dev = (rows[("last:2", 256, search)][k] for k in ("dnnx", "dnnx device"))
            print(f"Target: last:2 step at batch 256 <= {TARGET_US:.0f} us, algo_search={search}: {last2:.0f} us "
                  f"from numpy ({'met' if last2 <= TARGET_US else 'NOT met'}), {last2_dev:.0f} us with x on the "
                  f"GPU ({'met' if last2_dev <= TARGET_US else 'NOT met'}).")
        for (trainable, batch, search), plan in PLANS.items():
            print()
            print(f"{trainable} at batch {batch}, algo_search={search}, as planned:")
            for row in plan:
                print(f"- {row}")
        for key, t in torch_results["cases"].items():
            if "graph_error" in t:
                print(f"- torch graph {key}: {t['graph_error']}")
    print(report.getvalue(), end="")
    if args.out:
        Path(args.out).write_text(report.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
