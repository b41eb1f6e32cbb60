"""Calibration ranges for dnnx's own int8 (docs/precision.md, "int8"): from the values one
activation took on the calibration data, the range [low, high] that its uint8 quantization maps
onto 0..255 (numpy only; the values come from dnnx's own fp32 run: _quantize.py).

- ``minmax``: the smallest and largest value seen.
- ``percentile``: the PERCENTILE-th and (100 - PERCENTILE)-th percentiles (99.99 %): a few
  outliers no longer stretch the step that every other value pays for.
- ``entropy``: TensorRT's KL-divergence calibration (Note [entropy calibration]).

Every range contains 0, so that 0 (zero padding, a ReLU's floor) is exactly representable."""
from __future__ import annotations

from typing import Tuple

import numpy as np

METHODS = ("minmax", "percentile", "entropy")
PERCENTILE = 99.99
HIST_BINS = 2048      # the histogram of |x| that entropy calibration searches
THRESHOLD_STEP = 8    # candidate thresholds every 8 bins (the search costs 1/8 with no visible loss)


def value_range(values: np.ndarray, method: str) -> Tuple[float, float]:
    """[low, high] (low <= 0 <= high) for the float values `values` under `method`."""
    x = np.asarray(values, dtype=np.float32).ravel()
    x = x[np.isfinite(x)]
    if x.size == 0:
        return 0.0, 0.0
    if method == "minmax":
        low, high = float(x.min()), float(x.max())
    elif method == "percentile":
        low, high = (float(v) for v in np.percentile(x, [100.0 - PERCENTILE, PERCENTILE]))
    elif method == "entropy":
        threshold = entropy_threshold(x)
        low, high = max(float(x.min()), -threshold), min(float(x.max()), threshold)
    else:
        raise ValueError(f"calibration_method: expected one of {', '.join(METHODS)}, got {method!r}")
    return min(low, 0.0), max(high, 0.0)


def _kl(p: np.ndarray, q: np.ndarray) -> float:
    mask = p > 0
    q = np.where(q > 0, q, 1e-12)
    return float(np.sum(p[mask] * np.log(p[mask] / q[mask])))


def entropy_threshold(x: np.ndarray) -> float:
    """Note [entropy calibration]: the threshold T on |x| whose quantization of [0, T] loses the
    least information (TensorRT's calibrator, "8-bit inference with TensorRT", Migacz 2017). The
    |x| histogram has HIST_BINS bins up to max |x|; for each candidate T (a bin edge), P is the
    histogram up to T with everything beyond folded into its last bin, Q is P squeezed into
    `levels` bins and expanded back (each level's mass spread evenly over its nonzero source
    bins); T minimises KL(P || Q). `levels` is 256 for a non-negative tensor (uint8's 256 steps
    cover [0, T]) and 128 otherwise (one side of a signed range). Values that are exactly 0 are
    left out of the histogram: 0 is exact at any threshold, and after a ReLU half the values are 0,
    a spike whose spreading in Q would otherwise make every wide threshold look lossy (it clipped
    ResNet-18's activations to 10 % error)."""
    magnitude = np.abs(x)
    magnitude = magnitude[magnitude > 0]  # exact zeros (a ReLU's floor) stay exact at any threshold
    peak = float(magnitude.max()) if magnitude.size else 0.0
    if peak == 0.0:
        return 0.0
    levels = 256 if float(x.min()) >= 0.0 else 128
    hist, edges = np.histogram(magnitude, bins=HIST_BINS, range=(0.0, peak))
    hist = hist.astype(np.float64)
    best_kl, best_bins = np.inf, HIST_BINS
    for bins in range(levels, HIST_BINS + 1, THRESHOLD_STEP):
        p = hist[:bins].copy()
        p[-1] += hist[bins:].sum()
        # Q: the first `bins` bins merged into `levels` groups, then spread back over the bins
        # of each group that were not empty.
        groups = np.minimum((np.arange(bins) * levels) // bins, levels - 1)
        src = hist[:bins]
        nonzero = (src > 0).astype(np.float64)
        mass = np.bincount(groups, weights=src, minlength=levels)
        count = np.bincount(groups, weights=nonzero, minlength=levels)
        share = np.divide(mass, count, out=np.zeros_like(mass), where=count > 0)
        q = share[groups] * nonzero
        total_p, total_q = p.sum(), q.sum()
        if total_q == 0:
            continue
        kl = _kl(p / total_p, q / total_q)
        if kl < best_kl:
            best_kl, best_bins = kl, bins
    return float(edges[best_bins])


def uint8_params(low: float, high: float) -> Tuple[np.float32, np.uint8]:
    """(scale, zero point) of the asymmetric uint8 quantization of [low, high] (low <= 0 <= high),
    as onnxruntime's quantize_static computes them: scale = (high - low) / 255, zero point =
    round(-low / scale); a range of width 0 takes scale 1 (every value is 0)."""
    scale = (high - low) / 255.0
    if scale <= 0.0 or not np.isfinite(scale):
        return np.float32(1.0), np.uint8(0)
    zero_point = int(np.clip(np.round(-low / scale), 0, 255))
    return np.float32(scale), np.uint8(zero_point)


def int8_weight_params(weight: np.ndarray, axis: int) -> np.ndarray:
    """Per-channel scales (float32 [weight.shape[axis]]) of the symmetric int8 quantization of
    `weight` along `axis`: max |w| of the channel / 127 (zero point 0; a channel of zeros takes 1).
    (A search over clipped scales, min sum((w - q(w))^2), was tried: on the zoo's and the MNIST
    models' weights it gained nothing.)"""
    w = np.moveaxis(np.asarray(weight, dtype=np.float32), axis, 0).reshape(weight.shape[axis], -1)
    peak = np.abs(w).max(axis=1) if w.shape[1] else np.zeros(w.shape[0], np.float32)
    scale = peak / 127.0
    return np.where(scale > 0, scale, 1.0).astype(np.float32)


def quantize_int8(weight: np.ndarray, scales: np.ndarray, axis: int) -> np.ndarray:
    """round-half-even(w / scale) saturated to int8, scales broadcast along `axis`."""
    shape = [1] * weight.ndim
    shape[axis] = -1
    q = np.round(np.asarray(weight, np.float32) / scales.reshape(shape))
    return np.clip(q, -127, 127).astype(np.int8)
