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


def time_for(fn, seconds: float, min_calls: int = 5, max_calls: int = 200, warmup: int = 3) -> list:
    """Seconds of each timed call of fn(): `warmup` untimed calls, one more that sizes the run,
    then as many calls as fit in about `seconds` (at least min_calls, at most max_calls)."""
    for _ in range(warmup):
        fn()
    start = time.perf_counter()
    fn()
    one = max(time.perf_counter() - start, 1e-7)
    return time_calls(fn, 0, max(min_calls, min(max_calls, int(seconds / one))))
