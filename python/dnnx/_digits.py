"""The handwritten digits that scikit-learn bundles (1,797 images of 8x8 pixels, labels 0-9),
shipped with dnnx as _data/digits.npz (45 KB; source and licence in _data/README.md), resized to
a model's [C, H, W] input and split into train and validation sets: the data of
``dnnx finetune --data digits`` and of the fine-tuning tests. Needs neither scikit-learn nor a
download."""
from __future__ import annotations

from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent / "_data" / "digits.npz"

PIXEL_MAX = 16.0        # the digits' pixel values run from 0 to 16
VALIDATION_SHARE = 0.2


def bilinear_matrix(size_out: int, size_in: int) -> np.ndarray:
    """[size_out, size_in]: row i interpolates the input at (i + 0.5) * size_in / size_out - 0.5
    (pixel centres aligned, as most image libraries resize), clamped at the borders."""
    pos = np.clip((np.arange(size_out) + 0.5) * size_in / size_out - 0.5, 0, size_in - 1)
    lo = np.floor(pos).astype(int)
    hi = np.minimum(lo + 1, size_in - 1)
    frac = pos - lo
    m = np.zeros((size_out, size_in))
    m[np.arange(size_out), lo] += 1 - frac
    m[np.arange(size_out), hi] += frac
    return m


def resize_images(images: np.ndarray, height: int, width: int) -> np.ndarray:
    """images [N, h, w] -> [N, height, width], bilinear."""
    rows = bilinear_matrix(height, images.shape[1])
    cols = bilinear_matrix(width, images.shape[2])
    return np.einsum("hi,nij,wj->nhw", rows, images, cols)


def digit_images() -> tuple:
    """(images float64 [1797, 8, 8] with values 0..16, labels int64 [1797]): scikit-learn's
    ``load_digits().images`` and ``.target``, the same values in the same order."""
    if not DATA.is_file():
        raise FileNotFoundError(f"the digits data is missing from this dnnx installation (expected {DATA})")
    with np.load(DATA) as npz:
        return npz["images"].astype(np.float64), npz["target"].astype(np.int64)


def load_digits(input_shape, seed: int = 0, validation_share: float = VALIDATION_SHARE) -> tuple:
    """(x_train, y_train, x_val, y_val) for a model input [N, C, H, W]: pixels scaled to [0, 1],
    resized to H x W, repeated over C channels; a seeded random split."""
    shape = list(input_shape)
    if len(shape) != 4 or not all(isinstance(d, int) and d > 0 for d in shape[1:]):
        raise ValueError(f"--data digits needs a model input [N, C, H, W] with fixed C, H, W; the model's is {shape}")
    _, channels, height, width = shape
    raw_images, labels = digit_images()
    images = resize_images(raw_images / PIXEL_MAX, height, width).astype(np.float32)
    x = np.repeat(images[:, None], channels, axis=1)
    y = labels.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(y))
    n_val = int(round(len(y) * validation_share))
    val, train = order[:n_val], order[n_val:]
    return x[train], y[train], x[val], y[val]
