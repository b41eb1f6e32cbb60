"""The PyTorch side of the CUDA benches, run in its own process: PyTorch loads its own cuDNN, and
only one libcudnn.so.9 can live in a process. A script re-runs itself with `--worker torch`; the
worker writes its times (and the torch/cuDNN versions and GPU name) to a torch.json that the main
process reads back. The main process never imports torch."""
from __future__ import annotations

import argparse
import datetime
import platform
import subprocess
import sys


def torch_lenet(x, w: dict):
    """dnnx's LeNet example (dnnx.examples.lenet) in torch's functional ops on the ONNX
    initialisers `w` (name -> tensor): conv1 -> pool -> conv2 -> pool -> fc1+relu -> fc2 -> softmax.
    Shared by bench_cuda.py and bench_cuda_precision.py (torch is imported by the worker only)."""
    import torch.nn.functional as F

    x = F.max_pool2d(F.conv2d(x, w["conv1.w"], w["conv1.b"]), 2, 2)
    x = F.max_pool2d(F.conv2d(x, w["conv2.w"], w["conv2.b"]), 2, 2)
    x = F.relu(F.linear(x.flatten(1), w["fc1.w"], w["fc1.b"]))
    return F.softmax(F.linear(x, w["fc2.w"], w["fc2.b"]), dim=1)


def add_worker_arguments(parser: argparse.ArgumentParser, *paths: str) -> None:
    """The hidden options of the re-run: --worker (torch, or ort: bench/_ort_worker.py), and the
    paths it is handed (e.g. "--model", "--dir")."""
    parser.add_argument("--worker", choices=["torch", "ort"], help=argparse.SUPPRESS)
    for name in paths:
        parser.add_argument(name, help=argparse.SUPPRESS)


def run_torch_worker(script: str, *args: str, **run_kwargs) -> None:
    """`python script --worker torch args...`; raises CalledProcessError when the worker fails."""
    subprocess.run([sys.executable, script, "--worker", "torch", *args], check=True, **run_kwargs)


def machine_lines(torch_results: dict, status: str, torch_note: str = ", in its own process") -> list:
    """The report's date, GPU and PyTorch lines. torch_results: the worker's torch.json ("gpu",
    "torch", "cudnn"); status: dnnx.cuda_status(); torch_note: what follows the PyTorch version."""
    import dnnx

    return [
        f"- date: {datetime.datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z')}",
        f"- GPU: {torch_results['gpu']}; dnnx {dnnx.__version__}: {status}",
        f"- PyTorch {torch_results['torch']} (cuDNN {torch_results['cudnn']}){torch_note}; "
        f"Python {platform.python_version()}",
    ]
