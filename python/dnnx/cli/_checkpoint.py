"""``dnnx finetune`` checkpoints: one .npz per run folder (written atomically, so a crash leaves the
previous one), holding the tuner's weights and momentum buffers, where the run stands (epoch and
step within it) and the settings that must match for --resume to continue the same run."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ._files import _load_array_file, write_npz

FILE = "checkpoint.npz"
WEIGHT, VELOCITY = "weight/", "velocity/"
META = "meta"


def path_in(folder) -> Path:
    return Path(folder) / FILE


def save(folder, tuner, epoch: int, step_in_epoch: int, settings: dict) -> Path:
    """Writes the state after `step_in_epoch` steps of epoch `epoch` (0-based)."""
    state = tuner.state_dict()
    arrays = {WEIGHT + k: v for k, v in state["weights"].items()}
    arrays.update({VELOCITY + k: v for k, v in state["velocity"].items()})
    meta = {"epoch": epoch, "step_in_epoch": step_in_epoch, "steps": state["steps"], "settings": settings}
    arrays[META] = np.frombuffer(json.dumps(meta, sort_keys=True).encode(), dtype=np.uint8)
    path = path_in(folder)
    write_npz(path, arrays)
    return path


def load(folder, tuner, settings: dict) -> tuple:
    """Restores the tuner; returns (epoch, step_in_epoch) to continue from. ValueError when there
    is no checkpoint or it was made with other settings (naming them)."""
    path = path_in(folder)
    if not path.is_file():
        raise ValueError(f"--resume: no checkpoint in {folder} (expected {FILE})")
    with _load_array_file(path) as npz:
        arrays = {k: npz[k] for k in npz.files}
    if META not in arrays:
        raise ValueError(f"--resume: {path} is not a dnnx finetune checkpoint")
    meta = json.loads(arrays[META].tobytes().decode())
    differ = [f"{k} {meta['settings'].get(k)!r} (now {v!r})" for k, v in settings.items() if meta["settings"].get(k) != v]
    if differ:
        raise ValueError(f"--resume: {path} was made with other settings: {', '.join(differ)}")
    tuner.load_state_dict({
        "weights": {k[len(WEIGHT):]: v for k, v in arrays.items() if k.startswith(WEIGHT)},
        "velocity": {k[len(VELOCITY):]: v for k, v in arrays.items() if k.startswith(VELOCITY)},
        "steps": meta["steps"],
    })
    return meta["epoch"], meta["step_in_epoch"]
