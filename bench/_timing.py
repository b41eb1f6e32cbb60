"""Wall-clock timing shared by the bench scripts: K timed calls after W warm-up calls, and their
median. (Imported as `_timing`: the scripts run as `python bench/<script>.py`, so bench/ is
sys.path[0].)"""
from __future__ import annotations

import time

import numpy as np


def time_calls(fn, warmup: int, iters: int) -> list:
    """Seconds of each of `iters` calls of fn(), after `warmup` untimed calls."""
    for _ in range(warmup):
        fn()
    seconds = []
    for _ in range(iters):
        start = time.perf_counter()
        fn()
        seconds.append(time.perf_counter() - start)
    return seconds


def median_us(seconds) -> float:
    return 1e6 * float(np.median(seconds))


def median_ms(seconds) -> float:
    return 1e3 * float(np.median(seconds))
