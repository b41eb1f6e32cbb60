"""``dnnx finetune MODEL --data train.npz|digits --out tuned.onnx``: train the last layers of a model
with SGD on the CPU and write the tuned ONNX file (the original graph with new initializers).

Each epoch shows a progress line (loss, samples/s; refreshed in place on a terminal) and ends with
one line holding the train loss and the validation loss and accuracy. With --checkpoint-dir a
checkpoint is written (atomically) after every epoch; --resume continues from it with the same
data order, so the result is the same as a run that was never stopped. Ctrl-C finishes the step
in flight, saves the checkpoint and the model as they are after it, and exits with status 130.
"""
from __future__ import annotations

import hashlib
import math
import signal
import sys
import threading
import time
from pathlib import Path

import numpy as np

from .._importer import read_model
from ..finetune import LOSSES, atomic_write_bytes, tuned_proto
from ..model import load
from . import _checkpoint
from ._args import add_model, positive_int
from ._train_data import DIGITS, load_training_data

NAME = "finetune"
HELP = "fine-tune the last layers of a model with SGD on the CPU and save the tuned ONNX file"
INTERRUPTED = 130      # the shell's status for SIGINT
PROGRESS_EVERY_S = 0.5  # how often the in-place progress line is refreshed on a terminal


def _float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"expected a number, got '{text}'") from None
    return value


def add_arguments(parser) -> None:
    add_model(parser)
    parser.add_argument("--data", required=True, metavar="FILE.npz|digits",
                        help=f"training data: an .npz with inputs and labels, or '{DIGITS}' (scikit-learn's "
                             "handwritten digits resized to the model's input; needs the 'digits' extra)")
    parser.add_argument("--val", metavar="FILE.npz", help="validation data (same keys as --data)")
    parser.add_argument("--x-key", default="x", help="the inputs' key in the .npz files (default x)")
    parser.add_argument("--y-key", default="y", help="the labels' (or targets') key (default y)")
    parser.add_argument("--trainable", default="last:2",
                        help="'last:N' (the last N Conv/Gemm/MatMul/LSTM layers), 'all', or comma-separated "
                             "initializer names (default last:2)")
    parser.add_argument("--loss", default="cross_entropy", choices=LOSSES)
    parser.add_argument("--epochs", type=positive_int, default=5)
    parser.add_argument("--batch-size", type=positive_int, default=64)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--momentum", type=float, default=0.9)
    parser.add_argument("--nesterov", action="store_true")
    parser.add_argument("--weight-decay", type=float, default=0.0)
    parser.add_argument("--schedule", choices=["step", "cosine"], help="learning-rate schedule over the whole run")
    parser.add_argument("--device", default="cpu", help="where to train: cpu (default), cuda or cuda:N")
    parser.add_argument("--out", required=True, metavar="FILE.onnx", help="the tuned model")
    parser.add_argument("--seed", type=int, default=0, help="the data order (and the digits split)")
    parser.add_argument("--checkpoint-dir", metavar="DIR", help="write a checkpoint here after every epoch")
    parser.add_argument("--resume", action="store_true", help="continue from the checkpoint in --checkpoint-dir")


def _trainable(text: str):
    return text if text == "all" or text.startswith("last:") else [t.strip() for t in text.split(",") if t.strip()]


def _settings(args, model_path: Path) -> dict:
    """What a resumed run must share with the one that wrote the checkpoint."""
    digest = hashlib.sha256(model_path.read_bytes()).hexdigest()
    return {"model_sha256": digest, "data": str(args.data), "trainable": args.trainable, "loss": args.loss,
            "batch_size": args.batch_size, "lr": args.lr, "momentum": args.momentum, "nesterov": args.nesterov,
            "weight_decay": args.weight_decay, "schedule": args.schedule, "epochs": args.epochs, "seed": args.seed}


class _StopFlag:
    """Turns Ctrl-C into a flag that the loop reads between steps, so a step is never cut in half."""

    def __init__(self):
        self.set = False
        self._previous = None

    def __enter__(self):
        # Python lets only the main thread install handlers; elsewhere Ctrl-C is not ours to catch.
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def _handle(self, signum, frame):
        self.set = True

    def __exit__(self, *exc):
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)


class _Progress:
    """The epoch's progress line: refreshed in place on a terminal, the final line printed always."""

    def __init__(self, epoch: int, epochs: int, steps: int):
        self.prefix = f"epoch {epoch + 1}/{epochs}"
        self.steps = steps
        self.start = time.perf_counter()
        self.shown = self.start
        self.samples = 0
        self.loss_sum = 0.0
        self.loss_rows = 0
        self.tty = sys.stdout.isatty()

    def add(self, loss: float, rows: int, step: int) -> None:
        self.samples += rows
        self.loss_sum += loss * rows
        self.loss_rows += rows
        now = time.perf_counter()
        if self.tty and now - self.shown >= PROGRESS_EVERY_S:
            self.shown = now
            print(f"\r{self.prefix}  step {step}/{self.steps}  {self.line()}", end="", flush=True)

    def train_loss(self) -> float:
        return self.loss_sum / self.loss_rows if self.loss_rows else float("nan")

    def line(self) -> str:
        elapsed = max(time.perf_counter() - self.start, 1e-9)
        return f"loss {self.train_loss():.4f}  {self.samples / elapsed:.0f} samples/s"

    def finish(self, validation) -> None:
        val = (f"val loss {validation['loss']:.4f}  val accuracy {validation['accuracy']:.4f}"
               if validation else "val -")
        elapsed = time.perf_counter() - self.start
        print(f"{chr(13) if self.tty else ''}{self.prefix}  train loss {self.train_loss():.4f}  {val}  "
              f"{self.samples / max(elapsed, 1e-9):.0f} samples/s  {elapsed:.1f} s", flush=True)


def _full_batches(x, y, batch: int, what: str) -> tuple:
    keep = len(y) // batch * batch
    if keep == 0:
        raise ValueError(f"{what}: {len(y)} rows make no full batch of {batch} (the model's batch dim is fixed)")
    return x[:keep], y[:keep]


def _save_model(path: Path, out, tuner) -> None:
    atomic_write_bytes(out, tuned_proto(read_model(path), tuner.weights()).SerializeToString())


def main(args) -> int:
    model_path = Path(args.model)
    if args.resume and not args.checkpoint_dir:
        raise ValueError("--resume needs --checkpoint-dir (where the checkpoint is)")
    if args.checkpoint_dir and not Path(args.checkpoint_dir).is_dir():
        Path(args.checkpoint_dir).mkdir(parents=True)
    for name, value in (("--lr", args.lr), ("--momentum", args.momentum), ("--weight-decay", args.weight_decay)):
        if not math.isfinite(value):
            raise ValueError(f"{name}: expected a finite number, got {value}")
    model = load(model_path, device=args.device)
    # A model exported with a fixed batch (often 1) is loaded at --batch-size and fed full batches
    # only; the saved file keeps the original batch (it is written from the file, not the load).
    fixed_batch = any(s.shape and isinstance(s.shape[0], int) and s.shape[0] != args.batch_size for s in model.inputs)
    if fixed_batch:
        model = load(model_path, batch_size=args.batch_size, device=args.device)
    x_train, y_train, x_val, y_val = load_training_data(args, model.inputs[0].shape, args.loss)
    if fixed_batch:
        x_train, y_train = _full_batches(x_train, y_train, args.batch_size, "--data")
        if x_val is not None:
            x_val, y_val = _full_batches(x_val, y_val, args.batch_size, "--val")
    steps_per_epoch = math.ceil(len(y_train) / args.batch_size)
    tuner = model.finetune(trainable=_trainable(args.trainable), loss=args.loss, lr=args.lr, momentum=args.momentum,
                           nesterov=args.nesterov, weight_decay=args.weight_decay, schedule=args.schedule,
                           seed=args.seed, total_steps=args.epochs * steps_per_epoch)
    settings = _settings(args, model_path)
    epoch, skip = 0, 0
    if args.resume:
        epoch, skip = _checkpoint.load(args.checkpoint_dir, tuner, settings)
        print(f"resumed from {_checkpoint.path_in(args.checkpoint_dir)}: epoch {epoch + 1}, step {skip}")
    print(f"training {', '.join(tuner.parameters)} on {len(y_train)} samples, {steps_per_epoch} steps per epoch")
    with _StopFlag() as stop:
        while epoch < args.epochs and not stop.set:
            # The order of an epoch depends on the seed and the epoch alone: a resumed run sees the same.
            order = np.random.default_rng([args.seed, epoch]).permutation(len(y_train))
            progress = _Progress(epoch, args.epochs, steps_per_epoch)
            step = skip
            while step < steps_per_epoch and not stop.set:
                rows = order[step * args.batch_size:(step + 1) * args.batch_size]
                progress.add(tuner.step(x_train[rows], y_train[rows]), len(rows), step + 1)
                step += 1
            if stop.set and step < steps_per_epoch:
                if args.checkpoint_dir:
                    _checkpoint.save(args.checkpoint_dir, tuner, epoch, step, settings)
                break
            progress.finish(tuner.evaluate(x_val, y_val, batch_size=args.batch_size) if x_val is not None else None)
            epoch, skip = epoch + 1, 0
            if args.checkpoint_dir:
                _checkpoint.save(args.checkpoint_dir, tuner, epoch, 0, settings)
    _save_model(model_path, args.out, tuner)
    if stop.set:
        where = f"; checkpoint in {args.checkpoint_dir}" if args.checkpoint_dir else ""
        print(f"\ninterrupted after {tuner.steps} steps: wrote {args.out}{where}", file=sys.stderr)
        return INTERRUPTED
    print(f"wrote {args.out}")
    return 0
