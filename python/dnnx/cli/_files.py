"""Files the CLI reads and writes: input arrays in, outputs and models out (always atomically)."""
from __future__ import annotations

import os
import tempfile
import zipfile
from pathlib import Path

import numpy as np

from .._tensors import dtype_named


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write(path, write) -> None:
    """Calls ``write(binary_file)`` on a temporary file in ``path``'s folder and renames it over
    ``path``: a reader never sees half a file, and a failure leaves an existing file as it was."""
    path = Path(path)
    folder = path.parent
    if not folder.is_dir():
        raise FileNotFoundError(f"output folder not found: {folder}")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        # mkstemp makes the file private (0600); give it the permissions a plain open() would.
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_npz(path, arrays: dict) -> None:
    atomic_write(path, lambda f: np.savez(f, **arrays))


def check_output_npz(path) -> Path:
    """``--output FILE.npz`` as ``write_npz`` will need it, checked before any model is loaded or
    run: an .npz name, in a folder that exists and that this process may write, not a folder."""
    path = Path(path)
    if path.suffix != ".npz":
        raise ValueError(f"--output {path}: expected a file name ending in .npz (the outputs are saved with "
                         f"np.savez, keyed by output name)")
    if path.is_dir():
        raise ValueError(f"--output {path}: is a folder; expected an .npz file name")
    folder = path.parent
    if not folder.is_dir():
        raise FileNotFoundError(f"--output {path}: folder {folder} not found (create it first)")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise PermissionError(f"--output {path}: folder {folder} is not writable")
    return path


NPY_MAGIC = b"\x93NUMPY"  # how every .npy file starts (numpy's format.MAGIC_PREFIX)
ZIP_MAGIC = b"PK\x03\x04"  # an .npz is a zip archive


def _load_array_file(path: Path):
    """An .npy's array or an .npz's NpzFile. A file that is neither (by its first bytes) is
    refused before numpy reads it: numpy would take it for a pickle and suggest
    allow_pickle=True, which is not the fix."""
    if not path.is_file():
        raise FileNotFoundError(f"input file not found: {path}")
    kind, save = ("an .npy array file", "np.save") if path.suffix == ".npy" else ("an .npz archive", "np.savez")
    try:
        with open(path, "rb") as f:
            head = f.read(max(len(NPY_MAGIC), len(ZIP_MAGIC)))
    except OSError as e:
        raise OSError(f"{path}: cannot read it ({e.strerror or e})") from None
    if not (head.startswith(NPY_MAGIC) or head.startswith(ZIP_MAGIC)):
        raise ValueError(f"{path} is not {kind}: it does not start with numpy's header "
                         f"(write it with {save}; text or pickled data is not read)")
    try:
        return np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as e:
        raise ValueError(f"{path} is not a readable .npy/.npz file ({e})") from None


def _as_input(array: np.ndarray, spec, path: Path) -> np.ndarray:
    """The array as it is: dnnx's input rule (dnnx/_inputs.py) converts no arrays, here as in
    Model.run, so a file of another dtype than the input's is refused with the file's name."""
    want = dtype_named(spec.dtype)
    if array.dtype != want:
        raise ValueError(f"{path}: input '{spec.name}': expected dtype {want}, got {array.dtype} (dnnx converts "
                         f"no arrays: save it as {want}, e.g. np.save(path, x.astype(np.{want})))")
    return array


def read_feeds(path, specs) -> dict:
    """{input name: array} from an .npy (the model's single input) or an .npz whose keys are input
    names, or arr_0, arr_1, ... (np.savez's positional names) in graph-input order."""
    path = Path(path)
    names = [s.name for s in specs]
    if path.suffix == ".npy":
        if len(names) != 1:
            raise ValueError(f"{path}: an .npy file feeds one input, but the model has {len(names)} "
                             f"({', '.join(names)}); pass an .npz keyed by input name")
        arrays = {names[0]: _load_array_file(path)}
    elif path.suffix == ".npz":
        with _load_array_file(path) as npz:
            arrays = _match_npz_keys({k: npz[k] for k in npz.files}, names, path)
    else:
        raise ValueError(f"{path}: expected an .npy or .npz file")
    return {s.name: _as_input(arrays[s.name], s, path) for s in specs}


def _match_npz_keys(arrays: dict, names: list, path: Path) -> dict:
    keys = list(arrays)
    if set(keys) == set(names):
        return arrays
    positional = [f"arr_{i}" for i in range(len(names))]
    if set(keys) == set(positional):
        return {name: arrays[key] for name, key in zip(names, positional)}
    raise ValueError(f"{path}: keys {keys} do not match the model's inputs {names} "
                     f"(use the input names, or arr_0..arr_{len(names) - 1} in input order)")
