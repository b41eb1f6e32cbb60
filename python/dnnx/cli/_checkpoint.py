"""``dnnx finetune`` checkpoints: one .npz per run folder (written atomically, so a crash leaves the
previous one), holding the tuner's weights and momentum buffers, where the run stands (epoch and
step within it, out of how many epochs), the per-epoch history (losses, accuracies: what --plot
draws) and the settings that must match for --resume to continue the same run.

The number of epochs is not one of those settings: --resume may extend a run (the learning-rate
schedule is then recomputed over the new total)."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ._files import _load_array_file, write_npz

FILE = "checkpoint.npz"
WEIGHT, VELOCITY = "weight/", "velocity/"
META = "meta"


@dataclass
class Meta:
    """Where a checkpointed run stands. ``epoch`` epochs are complete and ``step_in_epoch`` steps of
    the next one; ``epochs`` is the run's total when it was written (None in checkpoints older than
    this field)."""

    epoch: int
    step_in_epoch: int
    steps: int
    epochs: int
    settings: dict
    history: list = field(default_factory=list)  # one dict per complete epoch

    @property
    def finished(self) -> bool:
        return self.epochs is not None and self.epoch >= self.epochs and self.step_in_epoch == 0

    def describe(self) -> str:
        if self.finished:
            return f"a finished run of {self.epochs} epoch(s)"
        total = f" of {self.epochs}" if self.epochs is not None else ""
        return f"a run stopped after epoch {self.epoch}{total}, step {self.step_in_epoch} of the next"

    def differences(self, settings: dict) -> list:
        """'name old (now new)' for every setting that differs from ``settings``."""
        return [f"{k} {self.settings.get(k)!r} (now {v!r})" for k, v in settings.items() if self.settings.get(k) != v]


def path_in(folder) -> Path:
    return Path(folder) / FILE


def save(folder, tuner, epoch: int, step_in_epoch: int, settings: dict, epochs: int, history: list) -> Path:
    """Writes the state after `step_in_epoch` steps of epoch `epoch` (0-based) of an `epochs` run."""
    state = tuner.state_dict()
    arrays = {WEIGHT + k: v for k, v in state["weights"].items()}
    arrays.update({VELOCITY + k: v for k, v in state["velocity"].items()})
    meta = {"epoch": epoch, "step_in_epoch": step_in_epoch, "steps": state["steps"], "epochs": epochs,
            "settings": settings, "history": history}
    arrays[META] = np.frombuffer(json.dumps(meta, sort_keys=True).encode(), dtype=np.uint8)
    path = path_in(folder)
    write_npz(path, arrays)
    return path


def _read(path: Path) -> tuple:
    with _load_array_file(path) as npz:
        arrays = {k: npz[k] for k in npz.files}
    if META not in arrays:
        raise ValueError(f"{path} is not a dnnx finetune checkpoint (it has no '{META}')")
    raw = json.loads(arrays[META].tobytes().decode())
    settings = dict(raw["settings"])
    # Older checkpoints kept the epoch count among the settings.
    epochs = raw.get("epochs", settings.pop("epochs", None))
    settings.pop("epochs", None)
    meta = Meta(raw["epoch"], raw["step_in_epoch"], raw["steps"], epochs, settings, raw.get("history", []))
    return meta, arrays


def peek(folder):
    """The Meta of the checkpoint in ``folder``, or None when there is none."""
    path = path_in(folder)
    return _read(path)[0] if path.is_file() else None


def load(folder, tuner, settings: dict) -> Meta:
    """Restores the tuner and returns where the run stands. ValueError when there is no checkpoint
    or it was made with other settings (naming them)."""
    path = path_in(folder)
    if not path.is_file():
        raise ValueError(f"--resume: no checkpoint in {folder} (expected {FILE})")
    meta, arrays = _read(path)
    differ = meta.differences(settings)
    if differ:
        raise ValueError(f"--resume: {path} was made with other settings: {', '.join(differ)}")
    tuner.load_state_dict({
        "weights": {k[len(WEIGHT):]: v for k, v in arrays.items() if k.startswith(WEIGHT)},
        "velocity": {k[len(VELOCITY):]: v for k, v in arrays.items() if k.startswith(VELOCITY)},
        "steps": meta.steps,
    })
    return meta
