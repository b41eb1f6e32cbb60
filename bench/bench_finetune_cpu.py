"""Fine-tuning step time on the CPU: LeNet with its last two layers trained (fc1, fc2), at batch
64 and 256: the median of one SGD step (frozen head forward, tail forward and backward, update)
and of the head's forward alone (what the frozen layers cost), with the tuner's memory report.

    python bench/bench_finetune_cpu.py [--steps K] [--warmup W] [--threads T]
"""
from __future__ import annotations

import argparse

import numpy as np

import dnnx
from dnnx.examples.lenet import build_lenet
from dnnx.plan import format_bytes
from dnnx.threads import set_num_threads

from _timing import median_ms, time_calls

BATCHES = (64, 256)
TRAINABLE = "last:2"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    print(f"LeNet, trainable {TRAINABLE}, {args.threads} thread(s), median of {args.steps} steps\n")
    print(f"{'batch':>5}  {'step ms':>8}  {'forward ms':>10}  {'samples/s':>9}  {'kept for backward':>17}  "
          f"{'saved vs keeping all':>20}")
    for batch in BATCHES:
        model = dnnx.load(build_lenet(seed=0))
        tuner = model.finetune(trainable=TRAINABLE, lr=0.01, momentum=0.9)
        x = rng.random((batch, 1, 28, 28), dtype=np.float32)
        y = rng.integers(0, 10, size=batch)
        step = median_ms(time_calls(lambda: tuner.step(x, y), args.warmup, args.steps))
        forward = median_ms(time_calls(lambda: model.run(x), args.warmup, args.steps))
        memory = tuner.memory(batch_size=batch)
        print(f"{batch:>5}  {step:>8.2f}  {forward:>10.2f}  {batch / step * 1e3:>9.0f}  "
              f"{format_bytes(memory['tail_activation_bytes']):>17}  {format_bytes(memory['saved_bytes']):>20}")


if __name__ == "__main__":
    main()
