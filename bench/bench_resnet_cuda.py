"""dnnx on CUDA against PyTorch and onnxruntime-gpu on a ResNet-50-shaped model (bench/resnet50.py), batch 256 by
default (issue #5, GPU part); prints a markdown section and appends it to --out if given.

Results: bench/RESULTS_CUDA.md, "ResNet-50 at batch 256" (H200, 2026-11-30).

    python bench/bench_resnet_cuda.py [--batch 256] [--iters K] [--warmup W] [--out bench/RESULTS_CUDA.md]

dnnx (device="cuda", input already on the GPU, output="device", CUDA graphs on, the default):
  precision fp32 (no TF32, NCHW), tf32, fp16 and bf16 (half storage, tensor ops, fp32 accumulation; the
  input converted to half and the output back to float32 on the GPU, inside the timed run); tf32
  and fp16 run their convs channels-last (the channels_last pass, Transposes at the edges, timed);
  each with the default plan (algo_search="auto", no workspace_limit: Note [auto search]) and
  "exhaustive", and fp32 also "heuristic" with 256 MiB (the default before "auto") and
  "exhaustive" with 4 GiB (the exhaustive plan is timed at load; a
  temporary plan cache is used, so nothing is reused from a previous run and ~/.cache is left
  alone; the load time is reported).
PyTorch (in a separate process, `--worker torch`: it loads its own cuDNN, and only one
libcudnn.so.9 can live in a process): torchvision's resnet50 if torchvision is importable, else a
torch model built here to the same shape; both get the same weights as the ONNX model (BN
statistics included), eval mode, torch.inference_mode, cudnn.benchmark = True, input already on
the GPU, synchronize after each forward. Rows: fp32 (TF32 off), tf32 (TF32 on for cuDNN and
matmul), fp16 NCHW (model and input .half()), fp16 channels-last (torch.channels_last as well: PyTorch's fastest fp16, the issue's
reference) and bf16 channels-last (torch.bfloat16); the fp16 and bf16 inputs are converted before timing, so torch's fp16 rows exclude the
conversion dnnx's include.
onnxruntime-gpu (a separate process, `--worker ort`, the same reason; bench/_ort_worker.py: carried
there, ORT_GPU_PATH, ../shared/GPU.md): CUDA provider, CUDA graph, exhaustive cuDNN search, IO
binding on the GPU; fp32 (use_tf32 0), tf32, and fp16 as onnxruntime's own float16 converter
writes the model (float32 input and output kept, so its conversions are timed as dnnx's are),
NCHW and with prefer_nhwc=1. Without it the rows say why.
Outputs: max abs diff of each dnnx case against torch fp32, and relative to max |torch fp32|.
"""
from __future__ import annotations

import argparse
import copy
import json
import shlex
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _ort_worker import ort_case, ort_cell, ort_worker, run_ort_worker  # noqa: E402
from _timing import time_calls  # noqa: E402
from _torch_worker import add_worker_arguments, machine_lines, run_torch_worker  # noqa: E402
from resnet50 import STAGES, build_resnet50  # noqa: E402


def inputs_for(batch: int) -> np.ndarray:
    return np.random.default_rng(batch).standard_normal((batch, 3, 224, 224)).astype(np.float32)


# --- the PyTorch worker (its own process) ------------------------------------------------------
def torch_state_dict(model_path: str) -> dict:
    """The ONNX initialisers under torchvision's resnet50 parameter names."""
    import torch

    w = {t.name: torch.from_numpy(numpy_helper.to_array(t).copy()) for t in onnx.load(model_path).graph.initializer}
    sd = {}

    def conv_bn(onnx_name: str, conv: str, bn: str) -> None:
        sd[f"{conv}.weight"] = w[f"{onnx_name}.w"]
        sd[f"{bn}.weight"] = w[f"{onnx_name}.gamma"]
        sd[f"{bn}.bias"] = w[f"{onnx_name}.beta"]
        sd[f"{bn}.running_mean"] = w[f"{onnx_name}.mean"]
        sd[f"{bn}.running_var"] = w[f"{onnx_name}.var"]
        sd[f"{bn}.num_batches_tracked"] = torch.tensor(0)

    conv_bn("stem", "conv1", "bn1")
    for s, (_, blocks, _) in enumerate(STAGES, start=1):
        for i in range(blocks):
            p, t = f"layer{s}.{i}", f"layer{s}.{i}"
            for part, n in (("a", 1), ("b", 2), ("c", 3)):
                conv_bn(f"{p}.{part}", f"{t}.conv{n}", f"{t}.bn{n}")
            if i == 0:
                conv_bn(f"{p}.proj", f"{t}.downsample.0", f"{t}.downsample.1")
    sd["fc.weight"], sd["fc.bias"] = w["fc.w"], w["fc.b"]
    return sd


def torch_resnet50():
    """(model, source): torchvision's resnet50, or the same shape built here."""
    try:
        import torchvision

        return torchvision.models.resnet50(weights=None), f"torchvision {torchvision.__version__} resnet50"
    except ImportError:
        pass
    import torch.nn as nn

    class Bottleneck(nn.Module):  # torchvision's v1.5 layout and parameter names
        def __init__(self, cin, width, stride):
            super().__init__()
            cout = width * 4
            self.conv1, self.bn1 = nn.Conv2d(cin, width, 1, bias=False), nn.BatchNorm2d(width)
            self.conv2, self.bn2 = nn.Conv2d(width, width, 3, stride, 1, bias=False), nn.BatchNorm2d(width)
            self.conv3, self.bn3 = nn.Conv2d(width, cout, 1, bias=False), nn.BatchNorm2d(cout)
            self.relu = nn.ReLU(inplace=True)
            self.downsample = None
            if stride != 1 or cin != cout:
                self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            h = self.relu(self.bn1(self.conv1(x)))
            h = self.relu(self.bn2(self.conv2(h)))
            h = self.bn3(self.conv3(h))
            return self.relu(h + (self.downsample(x) if self.downsample is not None else x))

    class ResNet50(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1, self.bn1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64)
            self.relu, self.maxpool = nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, 1)
            cin = 64
            for s, (width, blocks, stride) in enumerate(STAGES, start=1):
                layer = []
                for i in range(blocks):
                    layer.append(Bottleneck(cin, width, stride if i == 0 else 1))
                    cin = width * 4
                setattr(self, f"layer{s}", nn.Sequential(*layer))
            self.avgpool, self.fc = nn.AdaptiveAvgPool2d(1), nn.Linear(cin, 1000)

        def forward(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
            return self.fc(self.avgpool(x).flatten(1))

    return ResNet50(), "a torch.nn ResNet-50 built in bench/bench_resnet_cuda.py (torchvision not importable)"


def torch_worker(model_path: str, out_dir: str, batch: int, warmup: int, iters: int) -> None:
    import torch

    torch.backends.cudnn.benchmark = True
    net, source = torch_resnet50()
    net.load_state_dict(torch_state_dict(model_path))
    net = net.cuda().eval()
    x = torch.from_numpy(inputs_for(batch)).cuda()
    results = {"torch": torch.__version__, "cudnn": torch.backends.cudnn.version(), "source": source,
               "gpu": torch.cuda.get_device_name(0), "cases": {}}
    cases = (("fp32", False, None, None), ("tf32", True, None, None),
             ("fp16 NCHW", True, torch.float16, torch.contiguous_format),
             ("fp16 channels-last", True, torch.float16, torch.channels_last),
             ("bf16 channels-last", True, torch.bfloat16, torch.channels_last))
    with torch.inference_mode():
        for name, tf32, dtype, layout in cases:
            torch.backends.cudnn.allow_tf32 = tf32
            torch.backends.cuda.matmul.allow_tf32 = tf32
            m, inp = net, x
            if dtype is not None:  # a copy: .to() converts a module in place
                m = copy.deepcopy(net).to(dtype=dtype, memory_format=layout)
                inp = x.to(dtype=dtype).contiguous(memory_format=layout)

            def call():
                m(inp)
                torch.cuda.synchronize()

            out = m(inp).float().cpu().numpy()
            np.save(Path(out_dir) / f"torch_{len(results['cases'])}.npy", out)
            results["cases"][name] = time_calls(call, warmup, iters)
    (Path(out_dir) / "torch.json").write_text(json.dumps(results))


# --- the onnxruntime-gpu worker (its own process: bench/_ort_worker.py) -----------------------
# (row label, _ort_worker.ort_case options): fp16 as onnxruntime's own converter writes it, NCHW
# and with the provider's NHWC option
ORT_CASES = (("fp32", {"use_tf32": 0}), ("tf32", {"use_tf32": 1}), ("fp16 NCHW", {"use_tf32": 1, "fp16": True}),
             ("fp16 NHWC", {"use_tf32": 1, "fp16": True, "nhwc": True}))


def ort_cases(model_path: str, batch: int) -> list:
    return [ort_case(name, model_path, inputs_for(batch), (batch, 1000), **options) for name, options in ORT_CASES]


# --- dnnx and the report (the main process: never imports torch or onnxruntime) ---------------
# (precision, algo_search, workspace_limit), None: the default (algo_search="auto" and the
# backend's workspace limit: 4 GiB at fp32, where cuDNN's FFT and Winograd algorithms for the
# large 3x3 layers fit, 256 MiB otherwise; PyTorch's cudnn.benchmark takes whatever workspace it
# can allocate)
DNNX_CASES = [(p, a, None) for p in ("fp32", "tf32", "fp16", "bf16") for a in (None, "exhaustive")] + [
    ("fp32", "heuristic", "256MiB"), ("fp32", "heuristic", "4GiB")]
# the targets (#17), ms at batch 256: the default plan of each precision
TARGETS_MS = {"fp32": 50.0, "tf32": 9.0, "fp16": 6.5}


def case_label(algo, workspace) -> str:
    if algo is None:
        return "default (auto)"
    return algo if workspace is None else f"{algo}, {workspace} workspace"


def time_dnnx(model_path: str, batch: int, warmup: int, iters: int, cache_dir: str) -> dict:
    """{(precision, algo_search): (seconds per call, load seconds, output)}."""
    import dnnx

    x = inputs_for(batch)
    results = {}
    for precision, algo, workspace in DNNX_CASES:
        start = time.perf_counter()
        model = dnnx.load(model_path, device="cuda", batch_size=batch, precision=precision,
                          algo_search=algo or "auto", workspace_limit=workspace,
                          plan_cache=str(Path(cache_dir) / f"plan-{precision}-{algo}-{workspace}.json"))
        x_dev = model.to_device(x)
        out = model.run(x_dev, output="device").numpy()
        loaded = time.perf_counter() - start
        results[(precision, case_label(algo, workspace))] = (time_calls(lambda: model.run(x_dev, output="device"), warmup, iters),
                                      loaded, out)
        model = x_dev = None  # free this plan's GPU memory before the next load
    return results


def ms(seconds: list) -> tuple:
    return 1e3 * float(np.median(seconds)), 1e3 * float(np.percentile(seconds, 90))


def report(batch, ours, theirs, torch_outs, ort, status, command, warmup, iters) -> str:
    ref = torch_outs[0]
    scale = float(np.max(np.abs(ref)))
    torch_fp32 = ms(theirs["cases"]["fp32"])[0]
    lines = [
        "",
        f"# dnnx CUDA vs PyTorch: ResNet-50 (bench/resnet50.py), batch {batch}",
        "",
        *machine_lines(theirs, status, f", {theirs['source']}, in its own process, cudnn.benchmark = True"),
        f"- onnxruntime-gpu: {ort.get('version') or 'not available: ' + ort.get('error', '?')}, in its own process: "
        "CUDA provider, CUDA graph, exhaustive cuDNN search, IO binding on the GPU; fp16 as "
        "onnxruntime.transformers.float16 converts the model (float32 input and output kept), NCHW and prefer_nhwc=1",
        f"- command: `{command}`",
        f"- method: wall-clock median and p90 of {iters} calls after {warmup} warm-up calls, input on the GPU, "
        "each call complete when it returns (dnnx: output=\"device\", CUDA graph replay; torch: synchronize; "
        "onnxruntime: run_with_iobinding + synchronize_outputs); same weights and seeded inputs",
        "- dnnx fp16 and bf16: float32 input and output, converted on the GPU inside the run; tf32, fp16 and bf16 "
        "run the convs "
        "channels-last (NHWC) between Transposes at the edges (the channels_last pass), fp32 NCHW",
        f"- diffs against torch fp32; output scale max |torch fp32| = {scale:.3g}",
        *[f"- target {p} default <= {t:g} ms: {'met' if ms(ours[(p, case_label(None, None))][0])[0] <= t else 'missed'}"
          f" ({ms(ours[(p, case_label(None, None))][0])[0]:.2f} ms)" for p, t in TARGETS_MS.items()
          if (p, case_label(None, None)) in ours],
        "",
        "| engine | precision | algorithms | median ms | p90 ms | images/s | vs torch fp32 | load s | "
        "max abs diff | rel diff |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for (precision, algo), (seconds, loaded, out) in ours.items():
        med, p90 = ms(seconds)
        diff = float(np.max(np.abs(out - ref)))
        lines.append(f"| dnnx | {precision} | {algo} | {med:.2f} | {p90:.2f} | {batch / med * 1e3:,.0f} | "
                     f"{med / torch_fp32:.2f} | {loaded:.1f} | {diff:.2g} | {diff / scale:.2g} |")
    for i, (name, seconds) in enumerate(theirs["cases"].items()):
        med, p90 = ms(seconds)
        diff = float(np.max(np.abs(torch_outs[i] - ref)))
        lines.append(f"| torch | {name} | cudnn.benchmark | {med:.2f} | {p90:.2f} | {batch / med * 1e3:,.0f} | "
                     f"{med / torch_fp32:.2f} | | {diff:.2g} | {diff / scale:.2g} |")
    for name, _ in ORT_CASES:
        seconds, note = ort_cell(ort, name)
        if seconds is None:
            lines.append(f"| onnxruntime-gpu | {name} | {note.replace('|', '/')} | | | | | | | |")
            continue
        med, p90 = ms(seconds)
        out = ort["cases"][name]["out"]
        diff = float(np.max(np.abs(out - ref))) if out is not None else float("nan")
        lines.append(f"| onnxruntime-gpu | {name} | exhaustive{', ' + note if note else ', CUDA graph'} | {med:.2f} | "
                     f"{p90:.2f} | {batch / med * 1e3:,.0f} | {med / torch_fp32:.2f} | | {diff:.2g} | {diff / scale:.2g} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--iters", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--out", help="a markdown file to append the section to (printed either way)")
    add_worker_arguments(parser, "--model", "--dir")
    args = parser.parse_args()
    if args.worker == "torch":
        torch_worker(args.model, args.dir, args.batch, args.warmup, args.iters)
        return 0
    if args.worker == "ort":
        ort_worker(args.dir, ort_cases(args.model, args.batch), args.warmup, args.iters)
        return 0

    import dnnx

    status = dnnx.cuda_status()
    command = shlex.join(["python", *sys.argv])
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "resnet50.onnx"
        onnx.save(build_resnet50(seed=0), path)
        worker_args = ("--model", str(path), "--batch", str(args.batch), "--warmup", str(args.warmup),
                       "--iters", str(args.iters))
        run_torch_worker(__file__, "--dir", tmp, *worker_args)
        ort = run_ort_worker(__file__, tmp, *worker_args)
        theirs = json.loads((Path(tmp) / "torch.json").read_text())
        torch_outs = [np.load(Path(tmp) / f"torch_{i}.npy") for i in range(len(theirs["cases"]))]
        ours = time_dnnx(str(path), args.batch, args.warmup, args.iters, tmp)
    text = report(args.batch, ours, theirs, torch_outs, ort, status, command, args.warmup, args.iters)
    print(text)
    if args.out:
        with open(args.out, "a") as f:
            f.write(text)
        print(f"appended to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
