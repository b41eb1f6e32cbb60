"""One LSTM training step, dnnx against PyTorch's cuDNN LSTM on the same GPU: the 4-layer,
sequence-512, input-and-hidden-512 LSTM of bench_cuda_lstm.py (same ONNX model, same weights),
every layer trained (trainable="all"), MSE loss on the last layer's Y, plain SGD (lr 0.01, no
momentum), at batch 32 and 256, fp32 (FMA only on both sides: TF32 off).

    python bench/bench_cuda_finetune_lstm.py [--iters K] [--warmup W] [--batches 32 256] [--out FILE]

One step is forward, loss, backward and the weight update:
- dnnx: Tuner.step(x, y) with numpy x and y (their copies to the GPU included), which returns the
  loss as a float (so the step has finished). The four layers train as one multi-layer cuDNN RNN
  (Note [stacked LSTMs in training]: one training-mode forward whose reserve space the backward
  reads, one backward-data and one backward-weights call). Also timed: x already on the GPU
  (Model.to_device; y still numpy), and the four layers trained one call each (the fuse_lstm_stack
  pass off: the per-layer path, still without a second forward).
- PyTorch (its own process: it loads its own cuDNN, and only one libcudnn.so.9 can live in a
  process): nn.LSTM(512, 512, num_layers=4) forward, F.mse_loss, backward, torch.optim.SGD step,
  loss.item(); "host" starts from numpy (the same copies as dnnx), "device" from tensors already
  on the GPU.
Times are wall-clock medians of K steps after W warm-up steps; every step changes the weights, so
both sides also report the loss after the timed steps (they start equal, and should stay close).
The report goes to stdout (and --out, never bench/RESULTS*.md by default).
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import median_ms  # noqa: E402
from _torch_worker import add_worker_arguments, machine_lines, run_torch_worker  # noqa: E402
from bench_cuda_lstm import FEATURES, HIDDEN, LAYERS, SEQ, copy_weights_to_torch, inputs_for, onnx_model  # noqa: E402

BATCHES = (32, 256)
LR = 0.01


def targets_for(batch: int) -> np.ndarray:
    return (0.1 * np.random.default_rng(batch + 1000).standard_normal((SEQ, batch, HIDDEN))).astype(np.float32)


def time_steps(step, warmup: int, iters: int) -> tuple:
    """(seconds per timed step, the last loss)."""
    loss = None
    for _ in range(warmup):
        loss = step()
    seconds = []
    for _ in range(iters):
        start = time.perf_counter()
        loss = step()
        seconds.append(time.perf_counter() - start)
    return seconds, float(loss)


# --- the PyTorch worker (its own process) ------------------------------------------------------
def torch_worker(out_dir: str, warmup: int, iters: int, batches: list) -> None:
    import torch
    import torch.nn.functional as F

    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    def fresh_lstm():
        lstm = torch.nn.LSTM(FEATURES, HIDDEN, num_layers=LAYERS).cuda().train()
        copy_weights_to_torch(lstm)
        return lstm

    results = {"torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
               "gpu": torch.cuda.get_device_name(0), "cases": {}}
    for batch in batches:
        x_np, y_np = inputs_for(batch), targets_for(batch)
        case = {}
        for mode in ("host", "device"):
            lstm = fresh_lstm()
            opt = torch.optim.SGD(lstm.parameters(), lr=LR)
            x_dev, y_dev = torch.from_numpy(x_np).cuda(), torch.from_numpy(y_np).cuda()

            def step():
                x, y = (torch.from_numpy(x_np).cuda(), torch.from_numpy(y_np).cuda()) if mode == "host" else (x_dev, y_dev)
                opt.zero_grad(set_to_none=True)
                loss = F.mse_loss(lstm(x)[0], y)
                loss.backward()
                opt.step()
                return loss.item()

            first = step()
            seconds, last = time_steps(step, warmup, iters)
            case[mode] = {"seconds": seconds, "first_loss": first, "last_loss": last}
            del lstm, opt
            torch.cuda.empty_cache()
        results["cases"][str(batch)] = case
    (Path(out_dir) / "torch.json").write_text(json.dumps(results))


# --- dnnx and the report (the main process: never imports torch) ------------------------------
def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iters", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--batches", type=int, nargs="+", default=list(BATCHES))
    parser.add_argument("--out", help="also write the markdown report here")
    add_worker_arguments(parser, "--dir")
    args = parser.parse_args()
    if args.worker:
        torch_worker(args.dir, args.warmup, args.iters, args.batches)
        return 0

    import dnnx

    with tempfile.TemporaryDirectory() as tmp:
        run_torch_worker(__file__, "--dir", tmp, "--warmup", str(args.warmup), "--iters", str(args.iters),
                         "--batches", *map(str, args.batches))
        torch_results = json.loads((Path(tmp) / "torch.json").read_text())
    rows = []
    for batch in args.batches:
        x, y = inputs_for(batch), targets_for(batch)
        times = {}
        for mode in ("fused", "device", "per_layer"):
            passes = {"fuse_lstm_stack": False} if mode == "per_layer" else None
            model = dnnx.load(onnx_model(batch), device="cuda", precision="fp32", passes=passes)
            tuner = model.finetune(trainable="all", loss="mse", lr=LR, momentum=0.0)
            xs = model.to_device(x) if mode == "device" else x
            first = tuner.step(xs, y)
            seconds, last = time_steps(lambda: tuner.step(xs, y), args.warmup, args.iters)
            times[mode] = (median_ms(seconds), first, last)
            del tuner, model
        ours, first, last = times["fused"]
        t = torch_results["cases"][str(batch)]
        host, device = median_ms(t["host"]["seconds"]), median_ms(t["device"]["seconds"])
        rows.append(f"| {batch} | {ours:.1f} | {host:.1f} | {ours / host:.2f} | {times['device'][0]:.1f} | "
                    f"{device:.1f} | {times['per_layer'][0]:.1f} | "
                    f"{first:.6g} / {t['host']['first_loss']:.6g} | {last:.6g} / {t['host']['last_loss']:.6g} |")
    lines = [
        f"## LSTM training step: {LAYERS} layers, sequence {SEQ}, input and hidden {HIDDEN}, all layers trained, "
        "MSE + SGD (dnnx vs PyTorch, cuDNN both, fp32)",
        "",
        *machine_lines(torch_results, dnnx.cuda_status()),
        f"- method: wall-clock median of {args.iters} steps after {args.warmup} warm-up steps (one untimed step "
        "first); same weights, inputs and targets",
        "",
        "| batch | dnnx ms/step (numpy in) | torch ms/step (numpy in) | dnnx/torch | dnnx ms/step (x on GPU) | "
        "torch ms/step (on GPU) | dnnx one call per layer (numpy in) | first loss dnnx / torch | "
        "last loss dnnx / torch |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        *rows,
    ]
    text = "\n".join(lines) + "\n"
    if args.out:
        Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
