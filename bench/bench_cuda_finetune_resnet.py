"""One whole-model fine-tuning step of ResNet-18 on CUDA, dnnx against PyTorch on the same GPU: the
zoo's ResNet-18 (../shared/external/zoo/resnet18.onnx, its weights from their seed; batch norm
folded into the convs by PyTorch's exporter), every layer trained (trainable="all"), at batch 64,
224 x 224, fp32 (FMA only on both sides: TF32 off). Prints a markdown table (machine, date,
command), also to --out.

    python bench/bench_cuda_finetune_resnet.py [--batch 64] [--iters K] [--warmup W] [--out FILE]

A step: forward, cross-entropy loss, backward through every layer, SGD with momentum 0.9
(lr 0.001), and the loss back as a Python float; x is on the GPU already on both sides.
- dnnx: Tuner.step on a dnnx.DeviceArray (Model.to_device), one CUDA graph replay per step
  ("graph"; cuda_graph=False: "eager"), with algo_search "heuristic" and "exhaustive" (cuDNN's
  forward and backward candidates timed at plan time, through a plan cache in a temporary folder).
- PyTorch (a separate process: only one libcudnn.so.9 per process): the same ONNX graph written
  in torch's functional ops on the same initializers (torch_graph_forward below: an Identity
  shares its input's tensor, so a bias read by four convs is one parameter on both sides), with
  torch.backends.cudnn.benchmark on; "eager" is zero_grad, forward, F.cross_entropy, backward,
  optimizer.step, loss.item(); "graph" replays that step captured with torch.cuda.graph.
Times are wall-clock medians of K steps after W warm-up steps. Both sides report the first
step's loss: the same weights and batch, so they agree (the graphs are the same function).
Target (issue #38): dnnx's step no slower than PyTorch's CUDA graph.
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
from onnx import helper, numpy_helper

from _external_models import EXTERNAL, read_model
from _timing import median_us, time_calls
from _torch_worker import add_worker_arguments, run_torch_worker

MODEL = "zoo/resnet18.onnx"
LR, MOMENTUM = 0.001, 0.9
SEARCHES = ("heuristic", "exhaustive")


def batch_for(batch: int):
    rng = np.random.default_rng(batch)
    return rng.standard_normal((batch, 3, 224, 224)).astype(np.float32), rng.integers(0, 1000, size=batch)


# --- the PyTorch worker (its own process) ------------------------------------------------------
def torch_graph_forward(model: onnx.ModelProto, env: dict, x):
    """The ONNX graph's output, run node by node in torch's functional ops; env: initializer name ->
    tensor. Covers what PyTorch's exporter writes for ResNet: Conv, Relu, Add, MaxPool,
    GlobalAveragePool, Flatten, Gemm (transB=1) and Identity."""
    import torch.nn.functional as F

    env = dict(env)
    env[model.graph.input[0].name] = x
    for node in model.graph.node:
        a = {at.name: helper.get_attribute_value(at) for at in node.attribute}
        ins = [env[name] for name in node.input if name]
        op = node.op_type
        if op == "Conv":
            pads = a.get("pads", [0, 0, 0, 0])
            assert pads[:2] == pads[2:], f"{node.name}: asymmetric pads"
            y = F.conv2d(ins[0], ins[1], ins[2] if len(ins) > 2 else None, stride=a.get("strides", 1),
                         padding=pads[:2], dilation=a.get("dilations", 1), groups=a.get("group", 1))
        elif op == "MaxPool":
            pads = a.get("pads", [0, 0, 0, 0])
            y = F.max_pool2d(ins[0], a["kernel_shape"], a.get("strides", 1), pads[:2], ceil_mode=bool(a.get("ceil_mode", 0)))
        elif op == "Gemm":
            assert a.get("transB") == 1 and not a.get("transA") and a.get("alpha", 1.0) == a.get("beta", 1.0) == 1.0
            y = F.linear(ins[0], ins[1], ins[2])
        elif op in ("Relu", "Add", "GlobalAveragePool", "Flatten", "Identity"):
            y = {"Relu": lambda: F.relu(ins[0]), "Add": lambda: ins[0] + ins[1],
                 "GlobalAveragePool": lambda: ins[0].mean(dim=(2, 3), keepdim=True),
                 "Flatten": lambda: ins[0].flatten(a.get("axis", 1)), "Identity": lambda: ins[0]}[op]()
        else:
            raise NotImplementedError(f"{node.name}: {op}")
        env[node.output[0]] = y
    return env[model.graph.output[0].name]


def torch_worker(model_path: str, out: str, batch: int, warmup: int, iters: int) -> None:
    import torch
    import torch.nn.functional as F

    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    model = onnx.load(model_path)
    w = {t.name: torch.from_numpy(numpy_helper.to_array(t).copy()).cuda().requires_grad_(True)
         for t in model.graph.initializer}
    opt = torch.optim.SGD(list(w.values()), lr=LR, momentum=MOMENTUM)
    x_np, y_np = batch_for(batch)
    sx, sy = torch.from_numpy(x_np).cuda(), torch.from_numpy(y_np).cuda()

    def eager_step():
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(torch_graph_forward(model, w, sx), sy)
        loss.backward()
        opt.step()
        return loss.item()

    results = {"torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
               "gpu": torch.cuda.get_device_name(0), "first loss": eager_step()}
    results["eager"] = time_calls(eager_step, warmup, iters)
    try:
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(3):
                opt.zero_grad(set_to_none=True)
                F.cross_entropy(torch_graph_forward(model, w, sx), sy).backward()
                opt.step()
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        opt.zero_grad(set_to_none=True)
        with torch.cuda.graph(graph):
            static_loss = F.cross_entropy(torch_graph_forward(model, w, sx), sy)
            static_loss.backward()
            opt.step()

        def replay():
            graph.replay()
            return static_loss.item()

        results["graph"] = time_calls(replay, warmup, iters)
    except Exception as e:  # noqa: BLE001 - reported in the table, not fatal
        results["graph_error"] = f"{type(e).__name__}: {e}"
    Path(out).write_text(json.dumps(results))


# --- dnnx and the report (the main process: never imports torch) ------------------------------
def time_dnnx(model_path: str, batch: int, warmup: int, iters: int, graph: bool, search: str, cache: str):
    import dnnx

    model = dnnx.load(model_path, device="cuda", cuda_graph=graph, algo_search=search, plan_cache=cache)
    tuner = model.finetune(trainable="all", lr=LR, momentum=MOMENTUM)
    x, y = batch_for(batch)
    x = model.to_device(x)
    first = tuner.step(x, y)
    seconds = time_calls(lambda: tuner.step(x, y), warmup, iters)
    if graph:
        assert [g["state"] for g in tuner.graphs()] == ["captured"], tuner.graphs()
    return first, seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--iters", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--out", help="also write the markdown section to this file")
    add_worker_arguments(parser, "--model", "--result")
    args = parser.parse_args()
    if args.worker:
        torch_worker(args.model, args.result, args.batch, args.warmup, args.iters)
        return 0
    if not (EXTERNAL / MODEL).exists():
        print(f"{EXTERNAL / MODEL} is absent: nothing to measure")
        return 0
    import dnnx

    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        model_path = str(Path(tmp) / "resnet18.onnx")
        onnx.save(read_model(MODEL), model_path)
        cache = str(Path(tmp) / "plan-cache.json")
        for search in SEARCHES:
            for graph in (True, False):
                first, seconds = time_dnnx(model_path, args.batch, args.warmup, args.iters, graph, search, cache)
                rows[(search, graph)] = (first, median_us(seconds) / 1e3)
        result = Path(tmp) / "torch.json"
        status = "ok"
        try:
            run_torch_worker(__file__, "--model", model_path, "--result", str(result), "--batch", str(args.batch),
                             "--iters", str(args.iters), "--warmup", str(args.warmup), timeout=900)
            t = json.loads(result.read_text())
        except (subprocess.SubprocessError, OSError) as e:
            status, t = f"PyTorch worker failed: {e}", {}
    torch_graph = median_us(t["graph"]) / 1e3 if "graph" in t else float("nan")
    torch_eager = median_us(t["eager"]) / 1e3 if "eager" in t else float("nan")
    report = io.StringIO()
    with contextlib.redirect_stdout(report):
        command = "python " + " ".join(shlex.quote(a) for a in sys.argv)
        print(f"## ResNet-18 fine-tuning step on CUDA, every layer, batch {args.batch}: dnnx vs PyTorch "
              f"({datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC)")
        print()
        print(f"- machine: {platform.node()}, {t.get('gpu', '?')}; dnnx {dnnx.__version__}, torch {t.get('torch', '?')} "
              f"(cuDNN {t.get('cudnn', '?')}); {dnnx.cuda_status()}")
        print(f"- command: `{command}` (median of {args.iters} steps after {args.warmup} warm-up steps; x on the GPU)")
        print(f"- PyTorch worker: {status}; first step's loss: PyTorch {t.get('first loss', float('nan')):.5f}, "
              f"dnnx {rows[('heuristic', True)][0]:.5f}")
        print()
        print("| engine | algo_search | ms per step | vs torch graph |")
        print("| --- | --- | ---: | ---: |")
        for (search, graph), (_, ms) in rows.items():
            print(f"| dnnx {'graph' if graph else 'eager'} | {search} | {ms:.2f} | {ms / torch_graph:.2f}x |")
        print(f"| torch eager | cudnn.benchmark | {torch_eager:.2f} | {torch_eager / torch_graph:.2f}x |")
        print(f"| torch graph | cudnn.benchmark | {torch_graph:.2f} | 1.00x |")
        if "graph_error" in t:
            print(f"\n- torch graph: {t['graph_error']}")
        best = min(ms for (_, graph), (_, ms) in rows.items() if graph)
        print()
        print(f"Target: dnnx's step no slower than PyTorch's CUDA graph: {best:.2f} ms against {torch_graph:.2f} "
              f"({'met' if best <= torch_graph else 'NOT met'}).")
    print(report.getvalue(), end="")
    if args.out:
        Path(args.out).write_text(report.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
