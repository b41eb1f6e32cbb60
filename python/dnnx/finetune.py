"""Fine-tuning: ``Model.finetune()`` returns a ``Tuner`` that trains the last layers of a model
with SGD on the model's device, the CPU or CUDA (engine/train), and ``Model.save()`` writes the
tuned weights back into the original ONNX graph.

How a step runs: the layers before the first trainable one form a frozen head, run as plain
inference (rewrite passes on, activations reused by liveness: nothing is kept for backward).
The rest, the tail, runs without the rewrite passes that change parameters, so that every
trained parameter is the model's own initializer (a BatchNormalization after a trainable Conv is
not folded into it, and a trainable MatMul is not fused with its Add): what is trained is exactly
what is saved; only Gemm -> Relu becomes one Gemm+Relu, which keeps its parameters. The tail
keeps its activations, the loss seeds its gradient, backward runs over the tail only, and SGD
updates the parameters in place. The one rewrite the tail does take is the stacking of LSTM layers
(fuse_lstm_stack, on CUDA): the stack reads each layer's own initializers, and trains as one
multi-layer cuDNN RNN.

On CUDA every buffer of a step (the head's arena, the tail's activations and gradients, the
parameters and momentum buffers) is GPU memory, the batch is copied in once per step and the
loss comes back as one scalar; from a batch shape's second step on the whole step is replayed
as one CUDA graph (``cuda_graph=False`` on the model turns that off; ``Tuner.graphs()`` shows
it). ``weights()`` and ``Model.save()`` copy the parameters back on demand.
"""
from __future__ import annotations

import math
import os
import tempfile
from pathlib import Path

import numpy as np

from ._native import core
from ._tensors import dtype_named
from .errors import UnsupportedModelError
from .plan import PlanTable
from .profile import ProfileTable, profile_table

NonFiniteLossError = core.NonFiniteLossError  # also a FloatingPointError

LOSSES = ("cross_entropy", "softmax_cross_entropy", "nll", "mse")
LABEL_LOSSES = ("cross_entropy", "softmax_cross_entropy", "nll")  # integer class labels [N]
SCHEDULES = (None, "step", "cosine")
STEP_DECAY = 0.1      # "step": the lr is multiplied by this ...
STEP_DECAY_PHASES = 3  # ... at each third of total_steps
EVAL_BATCH = 256       # evaluate() runs the data in chunks of this many rows


def _on_device(a) -> bool:
    """A GPU array Model.run would read in place: a dnnx.DeviceArray, a DLPack producer on a CUDA
    device (torch, CuPy, JAX) or an object with __cuda_array_interface__."""
    if isinstance(a, core.DeviceArray) or hasattr(a, "__cuda_array_interface__"):
        return True
    try:
        return hasattr(a, "__dlpack_device__") and a.__dlpack_device__()[0] in (2, 13)  # kDLCUDA, kDLCUDAManaged
    except Exception:  # noqa: BLE001 - a producer that cannot say is read as a host array
        return False


def _check_number(value, what: str, low: float, low_inclusive: bool = True, high=None) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{what}: expected a finite number, got {value!r}")
    if value < low or (not low_inclusive and value == low) or (high is not None and value >= high):
        bound = f"{'>=' if low_inclusive else '>'} {low}" + (f" and < {high}" if high is not None else "")
        raise ValueError(f"{what}: expected a value {bound}, got {value!r}")
    return float(value)


def scheduled_lr(base: float, schedule, step: int, total_steps) -> float:
    """The learning rate of step ``step`` (0-based): constant (None); "step": multiplied by 0.1 at
    each third of ``total_steps``; "cosine": from ``base`` down to 0 over ``total_steps``."""
    if schedule is None:
        return base
    t = min(step, total_steps)
    if schedule == "step":
        phase = max(1, math.ceil(total_steps / STEP_DECAY_PHASES))
        return base * STEP_DECAY ** (t // phase)
    return base * 0.5 * (1.0 + math.cos(math.pi * t / total_steps))


def atomic_write_bytes(path, data: bytes) -> None:
    """Writes ``data`` to a temporary file in ``path``'s folder and renames it over ``path``."""
    path = Path(path)
    if not path.parent.is_dir():
        raise FileNotFoundError(f"output folder not found: {path.parent}")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def tuned_proto(proto, weights: dict):
    """A copy of the onnx.ModelProto ``proto`` whose initializers named in ``weights`` hold the new
    values; every other node, attribute, name and initializer is left as it was."""
    from onnx import helper, numpy_helper  # saving needs onnx's package; a load does not

    out = type(proto)()
    out.CopyFrom(proto)
    for tensor in out.graph.initializer:
        if tensor.name in weights:
            dtype = helper.tensor_dtype_to_np_dtype(tensor.data_type)
            value = np.asarray(weights[tensor.name]).astype(dtype, copy=False)
            tensor.CopyFrom(numpy_helper.from_array(value, tensor.name))
    return out


class Tuner:
    """Trains the selected parameters of a model; ``Model.finetune()`` makes one."""

    def __init__(self, model, trainable="last:2", loss="cross_entropy", lr=0.01, momentum=0.9, nesterov=False,
                 weight_decay=0.0, schedule=None, deterministic=False, seed=0, total_steps=None):
        if loss not in LOSSES:
            raise ValueError(f"loss: expected one of {', '.join(LOSSES)}, got {loss!r}")
        if schedule not in SCHEDULES:
            raise ValueError(f"schedule: expected None, 'step' or 'cosine', got {schedule!r}")
        if schedule is not None and (not isinstance(total_steps, int) or total_steps < 1):
            raise ValueError(f"schedule {schedule!r} needs total_steps (a positive int), got {total_steps!r}")
        if not isinstance(trainable, str):
            if isinstance(trainable, (bytes, dict)) or not all(isinstance(n, str) for n in trainable):
                raise ValueError(f"trainable: expected 'last:N', 'all' or a list of parameter names, got {trainable!r}")
            trainable = list(trainable)
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise ValueError(f"seed: expected an int, got {seed!r}")
        self.lr = _check_number(lr, "lr", 0.0, low_inclusive=False)
        sgd = {"momentum": _check_number(momentum, "momentum", 0.0, high=1.0),
               "weight_decay": _check_number(weight_decay, "weight_decay", 0.0), "nesterov": bool(nesterov)}
        self.loss = loss
        self.schedule = schedule
        self.total_steps = total_steps
        # The CPU kernels are deterministic already; on CUDA the trainer's backend then plans only
        # deterministic algorithms (whatever the model was loaded with).
        self.deterministic = bool(deterministic)
        self.seed = seed
        self.steps = 0
        self._model = model
        kind, options = model._backend
        if self.deterministic and "device_options" in options:
            options = dict(options, device_options=options["device_options"].with_deterministic(True))
        self._core = core.Trainer(model._ir, trainable, loss, sgd, model.passes, kind, options)
        self.parameters = list(self._core.parameters())
        self._check_initializers(model._proto)  # names only: the weights may still be in the file

    def _check_initializers(self, proto) -> None:
        names = {t.name for t in proto.graph.initializer}
        for name in self.parameters:
            if name not in names:
                raise UnsupportedModelError(
                    f"parameter '{name}' is computed at import (constant folding), not an initializer of the "
                    f"ONNX file, so a tuned value could not be saved; choose the initializers it is made from")

    # --- data --------------------------------------------------------------------------------
    def _inputs(self, x) -> list:
        arrays = list(x) if isinstance(x, (list, tuple)) else [x]
        specs = self._model.inputs
        if len(arrays) != len(specs):
            raise ValueError(f"x: the model has {len(specs)} input(s) ({', '.join(s.name for s in specs)}), "
                             f"got {len(arrays)} array(s)")
        out = []
        for a, spec in zip(arrays, specs):
            if _on_device(a):  # read in place on the GPU (checked by the trainer, as Model.run does)
                out.append(a)
                continue
            a = np.asarray(a)
            if a.dtype != dtype_named(spec.dtype) and np.can_cast(a.dtype, dtype_named(spec.dtype), casting="same_kind"):
                a = a.astype(dtype_named(spec.dtype))
            out.append(np.ascontiguousarray(a))
        return out

    def _target(self, y) -> np.ndarray:
        y = np.asarray(y)
        if self.loss in LABEL_LOSSES:
            if y.dtype.kind not in "iu":
                raise ValueError(f"y: {self.loss} takes integer class labels, got dtype {y.dtype}")
            return np.ascontiguousarray(y, dtype=np.int64)
        if y.dtype.kind not in "fiu":
            raise ValueError(f"y: mse takes float targets, got dtype {y.dtype}")
        return np.ascontiguousarray(y, dtype=np.float32)

    # --- training ----------------------------------------------------------------------------
    def current_lr(self) -> float:
        return scheduled_lr(self.lr, self.schedule, self.steps, self.total_steps)

    def step(self, x, y) -> float:
        """One SGD step on the batch (x, y); returns the batch loss before the update. ``x`` may be
        numpy arrays or, on a CUDA model, GPU arrays (as ``Model.run`` takes them: copied on the
        device, no host round trip); ``y`` is a host array.
        ``NonFiniteLossError`` when the loss or a gradient is not finite: nothing is updated."""
        loss = self._core.step(self._inputs(x), self._target(y), self.current_lr())
        self.steps += 1
        self._model._weights_changed(self)
        return loss

    def profile(self, x, y, repeat: int = 20) -> ProfileTable:
        """Where one step's time goes: rows (name, op, algorithm, median_ms) for every layer of the
        frozen head and of the tail's forward, the loss, every backward step ("<Op> backward"),
        the non-finite check and SGD, over ``repeat`` steps on (x, y) at the current lr. On CUDA,
        GPU times from CUDA events recorded between the parts of a step replayed as a graph of its
        own (see dnnx/profile.py); the copy of the batch in, made before the step, is not among
        them (the lr and targets are read, and the loss written, in page-locked host memory). On
        the CPU, host wall-clock times. The weights and momentum buffers are put back as they were,
        and ``steps`` does not count these."""
        result = self._core.profile(self._inputs(x), self._target(y), self.current_lr(), int(repeat))
        return profile_table(result, self._model.device, int(repeat))

    def gradients(self, x, y) -> tuple:
        """(loss, {parameter name: dLoss/dparameter}) for the batch, without an update."""
        return self._core.gradients(self._inputs(x), self._target(y))

    def evaluate(self, x, y, batch_size: int = EVAL_BATCH) -> dict:
        """{"loss": mean loss, "accuracy": share of rows whose highest score is the label (for mse:
        matches the target's argmax)}, forward only, in chunks of ``batch_size`` rows."""
        inputs = self._inputs(x)
        target = self._target(y)
        n = len(target)
        if n == 0:
            raise ValueError("y: no rows to evaluate")
        total, correct = 0.0, 0
        for start in range(0, n, batch_size):
            part = slice(start, start + batch_size)
            loss, right = self._core.evaluate([self._chunk(a, part, n, batch_size) for a in inputs], target[part])
            total += loss * len(target[part])
            correct += right
        return {"loss": total / n, "accuracy": correct / n}

    @staticmethod
    def _chunk(a, part: slice, n: int, batch_size: int):
        if n <= batch_size:
            return a  # one chunk: a GPU array is read whole, in place
        try:
            return a[part]
        except TypeError:
            raise ValueError(f"x: a {type(a).__name__} cannot be cut into chunks of {batch_size} rows; pass "
                             f"batch_size >= {n}, or a numpy or torch array") from None

    def weights(self) -> dict:
        """{parameter name: current value} (copies)."""
        return dict(self._core.weights())

    def layout(self) -> dict:
        """{"frozen": the head's node names, "trained": the tail's}."""
        return dict(self._core.layout())

    def plan(self, batch_size=None) -> PlanTable:
        """The layers of one step at ``batch_size`` (symbolic dims 1 when None), as ``Model.plan()``
        prints them: the frozen head's (forward only, rewrite passes on), the tail's forward
        layers, then the backward steps in run order (op "<Op> backward", each with the algorithm
        its gradient kernel planned); each row's ``stage`` is "frozen", "forward" or "backward"."""
        return PlanTable(self._core.plan(self._model._shapes(batch_size)))

    def graphs(self) -> list:
        """How each batch shape's steps run on CUDA: dicts with ``input_shapes``, ``state``
        ("pending": the first step was eager, the next records it; "captured": steps replay one
        CUDA graph; "off": ``cuda_graph=False`` on the model; "failed: why": eager for good) and the
        counts ``captures``, ``replays`` and ``eager_steps``. Empty on the CPU."""
        return list(self._core.graphs())

    def memory(self, batch_size=None) -> dict:
        """Bytes for one step at ``batch_size`` (symbolic dims 1 when None; device bytes on CUDA):
        the frozen head's arena,
        the tail's kept activations, gradients, workspace, what gradient kernels keep from their
        forward (``kept_bytes``: cuDNN's LSTM reserve space and packed weights; 0 on the CPU) and the
        optimizer state, against what keeping every activation of the model would cost;
        ``saved_bytes`` is the difference."""
        report = dict(self._core.memory(self._model._shapes(batch_size)))
        report["saved_bytes"] = max(0, report["keep_everything_bytes"] - report["tail_activation_bytes"])
        return report

    # --- checkpoints -------------------------------------------------------------------------
    def state_dict(self) -> dict:
        """Everything a resumed run needs: weights, momentum buffers and the step count."""
        return {"weights": self.weights(), "velocity": dict(self._core.velocity()), "steps": self.steps}

    def load_state_dict(self, state: dict) -> None:
        for key in ("weights", "velocity", "steps"):
            if key not in state:
                raise ValueError(f"state: missing {key!r}")
        for name in self.parameters:
            if name not in state["weights"] or name not in state["velocity"]:
                raise ValueError(f"state: no value for parameter '{name}'")
            self._core.set_weight(name, np.asarray(state["weights"][name], dtype=np.float32))
            self._core.set_velocity(name, np.asarray(state["velocity"][name], dtype=np.float32))
        self.steps = int(state["steps"])
        self._model._weights_changed(self)

    def __repr__(self) -> str:
        return (f"<dnnx.Tuner loss={self.loss} lr={self.lr} steps={self.steps} "
                f"parameters={self.parameters}>")
