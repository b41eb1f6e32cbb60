"""``dnnx finetune MODEL --data train.npz|digits --out tuned.onnx``: train the last layers of a model
with SGD (on the CPU, or on an NVIDIA GPU with --device cuda) and write the tuned ONNX file (the
original graph with new initializers).

Each epoch shows a progress bar (steps, loss, samples/s; on a terminal, on stderr) and ends with
one line holding the train loss and the validation loss and accuracy; --plot draws them per epoch.
With --checkpoint-dir a checkpoint is written (atomically) after every epoch; --resume continues
from it with the same data order, so the result is the same as a run that was never stopped, and
may raise --epochs (the learning-rate schedule is then recomputed over the new total). A folder
that holds another checkpoint is not written over without --overwrite. Ctrl-C finishes the step
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
from .._plot import require_matplotlib, training_curves
from .._progress import bar
from ..finetune import LABEL_LOSSES, LOSSES, atomic_write_bytes, tuned_proto
from ..model import load
from . import _checkpoint
from ._args import add_model, add_planning, planning_options, positive_int
from ._train_data import DIGITS, load_training_data

NAME = "finetune"
HELP = ("fine-tune the last layers of a model with SGD, on the CPU or (--device cuda) an NVIDIA GPU, and save the "
        "tuned ONNX file")
INTERRUPTED = 130      # the shell's status for SIGINT


def _float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"expected a number, got '{text}'") from None
    return value


def add_arguments(parser) -> None:
    add_model(parser)
    parser.add_argument("--data", required=True, metavar="FILE.npz|digits",
                        help=f"training data: an .npz with inputs and labels, or '{DIGITS}' (the 1,797 8x8 handwritten "
                             "digits scikit-learn bundles, shipped with dnnx, resized to the model's input and split "
                             "80/20 into train and validation)")
    parser.add_argument("--val", metavar="FILE.npz", help="validation data (same keys as --data)")
    parser.add_argument("--x-key", default="x", help="the inputs' key in the .npz files")
    parser.add_argument("--y-key", default="y", help="the labels' (or targets') key")
    parser.add_argument("--trainable", default="last:2",
                        help="'last:N' (the last N Conv/Gemm/MatMul/LSTM layers), 'all', or comma-separated "
                             "initializer names")
    parser.add_argument("--loss", default="cross_entropy", choices=LOSSES, help="the loss")
    parser.add_argument("--epochs", type=positive_int, default=5,
                        help="epochs of the whole run (with --resume: may be more than the checkpoint's run had)")
    parser.add_argument("--batch-size", type=positive_int, default=64, help="rows per step")
    parser.add_argument("--lr", type=float, default=0.01, help="learning rate")
    parser.add_argument("--momentum", type=float, default=0.9, help="SGD momentum")
    parser.add_argument("--nesterov", action="store_true", help="Nesterov momentum")
    parser.add_argument("--weight-decay", type=float, default=0.0, help="L2 weight decay")
    parser.add_argument("--schedule", choices=["step", "cosine"],
                        help="learning-rate schedule over the whole run (default: constant)")
    parser.add_argument("--device", default="cpu", help="where to train: cpu, cuda or cuda:N")
    add_planning(parser)
    parser.add_argument("--out", required=True, metavar="FILE.onnx", help="the tuned model")
    parser.add_argument("--seed", type=int, default=0, help="the data order (and the digits split)")
    parser.add_argument("--checkpoint-dir", metavar="DIR", help="write a checkpoint here after every epoch")
    parser.add_argument("--resume", action="store_true", help="continue from the checkpoint in --checkpoint-dir")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace a checkpoint already in --checkpoint-dir (without it, such a folder is an error)")
    parser.add_argument("--plot", metavar="FILE.png",
                        help="draw train/validation loss and accuracy per epoch (needs matplotlib: dnnx[plot]; the "
                             "train accuracy costs one forward pass over the training data per epoch)")


def _trainable(text: str):
    return text if text == "all" or text.startswith("last:") else [t.strip() for t in text.split(",") if t.strip()]


def _settings(args, model_path: Path) -> dict:
    """What a resumed run must share with the one that wrote the checkpoint (not the epoch count:
    a resumed run may be longer)."""
    digest = hashlib.sha256(model_path.read_bytes()).hexdigest()
    return {"model_sha256": digest, "data": str(args.data), "trainable": args.trainable, "loss": args.loss,
            "batch_size": args.batch_size, "lr": args.lr, "momentum": args.momentum, "nesterov": args.nesterov,
            "weight_decay": args.weight_decay, "schedule": args.schedule, "seed": args.seed}


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


class _Epoch:
    """One epoch's progress bar (dnnx._progress: on a terminal, on stderr) and its running train
    loss; ``finish`` prints the epoch's line (always, on stdout) and returns its history entry."""

    def __init__(self, epoch: int, epochs: int, steps: int, done: int):
        self.epoch, self.epochs = epoch, epochs
        self.prefix = f"epoch {epoch + 1}/{epochs}"
        self.start = time.perf_counter()
        self.samples = 0
        self.loss_sum = 0.0
        self.trained_s = None  # the steps' time, without the evaluation after them
        self.bar = bar(steps, desc=self.prefix, unit="step")
        self.bar.update(done)  # a resumed epoch starts where it stopped

    def add(self, loss: float, rows: int) -> None:
        self.samples += rows
        self.loss_sum += loss * rows
        elapsed = max(time.perf_counter() - self.start, 1e-9)
        self.bar.set_postfix_str(f"loss {self.train_loss():.4f}, {self.samples / elapsed:.0f} samples/s", refresh=False)
        self.bar.update()

    def train_loss(self) -> float:
        return self.loss_sum / self.samples if self.samples else float("nan")

    def close(self) -> None:
        if self.trained_s is None:
            self.trained_s = time.perf_counter() - self.start
        self.bar.close()

    def finish(self, validation, train_accuracy=None) -> dict:
        """Call ``close`` when the steps are done (before evaluating): samples/s counts the steps alone."""
        self.close()
        elapsed = self.trained_s
        entry = {"epoch": self.epoch + 1, "train_loss": self.train_loss()}
        text = f"{self.prefix}  train loss {entry['train_loss']:.4f}"
        if train_accuracy is not None:
            entry["train_accuracy"] = train_accuracy
            text += f"  train accuracy {train_accuracy:.4f}"
        if validation:
            entry.update(val_loss=validation["loss"], val_accuracy=validation.get("accuracy"))
            text += f"  val loss {validation['loss']:.4f}"
            if validation.get("accuracy") is not None:
                text += f"  val accuracy {validation['accuracy']:.4f}"
        else:
            text += "  val -"
        print(f"{text}  {self.samples / max(elapsed, 1e-9):.0f} samples/s  {elapsed:.1f} s", flush=True)
        return entry


def _full_batches(x, y, batch: int, what: str) -> tuple:
    keep = len(y) // batch * batch
    if keep == 0:
        raise ValueError(f"{what}: {len(y)} rows make no full batch of {batch} (the model's batch dim is fixed)")
    return x[:keep], y[:keep]


def _save_model(path: Path, out, tuner) -> None:
    atomic_write_bytes(out, tuned_proto(read_model(path), tuner.weights()).SerializeToString())


def _check_checkpoint_dir(args) -> None:
    """--resume needs a folder; a folder holding a checkpoint is only written over with --overwrite."""
    if args.resume and not args.checkpoint_dir:
        raise ValueError("--resume needs --checkpoint-dir (where the checkpoint is)")
    if args.resume and args.overwrite:
        raise ValueError("--resume continues the checkpoint and --overwrite replaces it: pass one of them")
    if not args.checkpoint_dir:
        return
    folder = Path(args.checkpoint_dir)
    if not folder.is_dir():
        folder.mkdir(parents=True)
    elif not args.resume and not args.overwrite:
        meta = _checkpoint.peek(folder)
        if meta is not None:
            raise ValueError(f"--checkpoint-dir {folder} already holds a checkpoint ({meta.describe()}): "
                             f"--resume continues it, --overwrite starts over and replaces it")


def _check_output_folder(option: str, path) -> None:
    folder = Path(path).parent
    if not folder.is_dir():
        raise FileNotFoundError(f"{option} {path}: output folder not found: {folder}")


def main(args) -> int:
    model_path = Path(args.model)
    _check_checkpoint_dir(args)
    for name, value in (("--lr", args.lr), ("--momentum", args.momentum), ("--weight-decay", args.weight_decay)):
        if not math.isfinite(value):
            raise ValueError(f"{name}: expected a finite number, got {value}")
    _check_output_folder("--out", args.out)
    if args.plot:
        require_matplotlib()  # before training: a missing extra fails at once, not after the run
        _check_output_folder("--plot", args.plot)
    model = load(model_path, **planning_options(args))
    # A model exported with a fixed batch (often 1) is loaded at --batch-size and fed full batches
    # only; the saved file keeps the original batch (it is written from the file, not the load).
    fixed_batch = any(s.shape and isinstance(s.shape[0], int) and s.shape[0] != args.batch_size for s in model.inputs)
    if fixed_batch:
        model = load(model_path, batch_size=args.batch_size, **planning_options(args))
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
    epoch, skip, history = 0, 0, []
    if args.resume:
        meta = _checkpoint.load(args.checkpoint_dir, tuner, settings)
        epoch, skip, history = meta.epoch, meta.step_in_epoch, list(meta.history)
        done = f"epoch {epoch + 1}, step {skip}" if epoch < args.epochs else f"{epoch} epoch(s) done"
        print(f"resumed from {_checkpoint.path_in(args.checkpoint_dir)}: {done}")
        if epoch > args.epochs or (epoch == args.epochs and skip > 0):
            raise ValueError(f"--epochs {args.epochs}: the checkpoint is already past it ({meta.describe()}); "
                             f"pass --epochs {epoch + (1 if skip else 0)} or more")
        if meta.epochs is not None and meta.epochs != args.epochs and args.schedule:
            print(f"the run now has {args.epochs} epochs (the checkpoint's had {meta.epochs}): the {args.schedule} "
                  f"learning-rate schedule is recomputed over {args.epochs * steps_per_epoch} steps")
    if epoch >= args.epochs:
        _save_model(model_path, args.out, tuner)
        print(f"nothing was trained: the checkpoint's run already holds all {args.epochs} epoch(s) (pass a larger "
              f"--epochs to train more); wrote {args.out} with its weights")
        _plot(args, history, model_path)
        return 0
    print(f"training {', '.join(tuner.parameters)} on {len(y_train)} samples, {steps_per_epoch} steps per epoch")
    with _StopFlag() as stop:
        while epoch < args.epochs and not stop.set:
            # The order of an epoch depends on the seed and the epoch alone: a resumed run sees the same.
            order = np.random.default_rng([args.seed, epoch]).permutation(len(y_train))
            progress = _Epoch(epoch, args.epochs, steps_per_epoch, skip)
            step = skip
            try:
                while step < steps_per_epoch and not stop.set:
                    rows = order[step * args.batch_size:(step + 1) * args.batch_size]
                    progress.add(tuner.step(x_train[rows], y_train[rows]), len(rows))
                    step += 1
            finally:
                progress.close()  # the bar goes before anything else prints (an error's line too)
            if stop.set and step < steps_per_epoch:
                progress.close()
                if args.checkpoint_dir:
                    _checkpoint.save(args.checkpoint_dir, tuner, epoch, step, settings, args.epochs, history)
                break
            validation = tuner.evaluate(x_val, y_val, batch_size=args.batch_size) if x_val is not None else None
            train_accuracy = None
            if args.plot and args.loss in LABEL_LOSSES:
                train_accuracy = tuner.evaluate(x_train, y_train, batch_size=args.batch_size)["accuracy"]
            history.append(progress.finish(validation, train_accuracy))
            epoch, skip = epoch + 1, 0
            if args.checkpoint_dir:
                _checkpoint.save(args.checkpoint_dir, tuner, epoch, 0, settings, args.epochs, history)
    _save_model(model_path, args.out, tuner)
    if stop.set:
        where = f"; checkpoint in {args.checkpoint_dir}" if args.checkpoint_dir else ""
        print(f"interrupted after {tuner.steps} steps: wrote {args.out}{where}", file=sys.stderr)
    else:
        print(f"wrote {args.out}")
    _plot(args, history, model_path)  # the epochs complete so far, also after Ctrl-C
    return INTERRUPTED if stop.set else 0


def _plot(args, history: list, model_path: Path) -> None:
    if not args.plot:
        return
    if not history:
        print(f"--plot: no epoch is complete, nothing to draw ({args.plot} not written)", file=sys.stderr)
        return
    training_curves(history, args.plot, title=f"{model_path.name}: fine-tuning {args.trainable}, lr {args.lr}, "
                                                 f"batch {args.batch_size}")
    print(f"wrote {args.plot}")
