"""Note [background search]: ``algo_search="background"`` on CUDA.

``load`` returns at once with a plan from cuDNN's heuristics, or from the plan cache where it holds
exhaustive choices for a layer (the C++ policy AlgoSearch::Background: it reads the cache and times
nothing). A thread then searches on its own:

Every engine of the search has its stream at the device's lowest priority, the model's at its
highest: where both have work queued, the GPU's block scheduler starts the request's blocks first
(blocks already running finish; a kernel block takes microseconds). The search's thread is marked
(``core.set_search_thread``), so its runs are not counted as requests.

1. A *searcher* engine (the model's options with ``algo_search="exhaustive"``) plans each input
   shape the model has run, timing every candidate and writing its choices to the plan cache as
   it goes. A timing waits until no request has work on the device (a request counts from its
   first kernel to its outputs' arrival, not while its host inputs cross the bus), and one that a
   request overlapped is taken again, a few times at most (``DeviceOptions.runs_in_flight``,
   ``runs_started``, kRetakes in device_timing.cc; then the lowest disturbed take stands, which
   can only overstate a candidate): requests never wait for a timing. A device that is never idle
   (requests back to back with their data on it) still gets searched: each wait gives up after a
   bound, and the timing then runs beside the requests at its lower priority
   (``quiet_waits_given_up``).
2. Once a shape is searched, a *candidate* engine and a *baseline* are built: the candidate with
   the model's options (its plans read the choices just cached), the baseline before the search
   (its plans read what the model's engine read at load: the same plans). The candidate plans
   every shape the model has served and records their CUDA graphs (two runs each) off the request
   path.
3. The candidate and the baseline are timed on the searched shape, taking turns (``profile``: CUDA
   events over a replayed graph; the median of the sums), never the model's own engine (a profile
   holds an engine's turn, which would stall a request). The candidate replaces the model's engine
   only if it is faster: its stream is raised to the highest priority, and the exchange is one
   assignment, so a run holds the engine it started with to its end, and the next run takes the
   new one. Plans are never changed in place.

The search stops when every shape seen is searched and the budget (seconds, ``search_budget``) is
spent or no shape is left; a shape's exhaustive planning is not cut short inside. A model with
``deterministic=True`` never swaps (its plans are the reproducible heuristic ones), and neither does
one being fine-tuned. Without a plan-cache file (``plan_cache=False``) the search writes to a
private temporary one. ``Model.search_status()`` reports progress and ``Model.wait_search()`` waits.
"""
from __future__ import annotations

import atexit
import os
import tempfile
import threading
import time
import weakref
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ._native import core

# The time the search may take after load, by default (seconds): a ResNet-50 at batch 256 searches
# in about 5 s on an H200 (bench/RESULTS_CUDA.md), and a model rarely has more than a few shapes.
DEFAULT_BUDGET_S = 60.0
_PROFILE_TURNS = 5  # replays per engine, taking turns, when the candidate is timed against the baseline
_SERVED_KEPT = 16     # the most recent shapes a candidate plans and records before it is swapped in
_QUIET_WAIT_S = 0.1   # the longest a turn waits for an idle device
# Note [search after the first run]: the search's thread starts its first shape once a request's
# run has returned, or after this long: a model with fixed shapes queues them at load, and a
# searcher planning beside the first run slowed it (97 ms against 60-75 for ResNet-50 at batch
# 256, H100, 2026-12-06) and kept load + first run above the other policies'.
_FIRST_RUN_WAIT_S = 2.0


def plan_cache_for(plan_cache):
    """The plan-cache argument the search's engines use: the model's, or a private temporary file
    when the model has none (the searcher hands its choices over through a cache)."""
    if plan_cache not in (False, None):
        return plan_cache
    fd, path = tempfile.mkstemp(prefix="dnnx-background-", suffix=".json")
    os.close(fd)
    os.unlink(path)  # the cache writes it atomically on its first store
    return path


_LIVE = weakref.WeakSet()  # the searches of this process, stopped and joined at exit


@atexit.register
def _stop_all() -> None:
    """Interpreter exit: a search thread must not be inside CUDA while Python tears down (the
    process would die with a segfault after its work is done). Each is stopped and waited for:
    at most the shape it is searching."""
    for search in list(_LIVE):
        search.stop("the process is exiting")
        thread = search._thread
        if thread is not None and thread.is_alive():
            thread.join()


class BackgroundSearch:
    """The search thread of one model (Note [background search]). ``build_engine(searcher)``
    builds a searcher, or a twin of the model's engine (a candidate or a baseline);
    ``swap(engine)`` makes an engine the model's (False where the model refuses it now)."""

    def __init__(self, *, build_engine, swap, budget_s: float, value_indices=(), enabled: bool = True,
                 why_off: str = ""):
        self._build_engine = build_engine  # build_engine(searcher: bool) -> core.Engine
        self._value_indices = set(value_indices)
        self._swap = swap
        self._budget_s = float(budget_s)
        self._lock = threading.Lock()
        self._pending = []          # shape sets (lists of arrays) seen and not searched yet
        self._keys = set()          # their signatures, searched or pending
        self._served = []           # the shape sets the model ran last (the candidate plans them all)
        self._start = time.perf_counter()
        self._searcher = None
        self._state = "waiting for a run" if enabled else "off"
        self._why_off = why_off
        self._shapes_searched = 0
        self._swaps = 0
        self._first_ms = None       # the load plan's time on the first searched shape
        self._best_ms = None        # the current plan's time there
        self._error = ""
        self._stopped = False
        self._done = threading.Event()
        self._done.set()   # until a shape is queued
        self._thread = None
        self._finishing = False  # the thread found the queue empty and is ending
        self._enabled = enabled
        self._first_run = threading.Event()
        self._data = {}  # _Seeded -> its array, made once on the search's thread
        _LIVE.add(self)

    def _start_thread(self) -> None:
        """(lock held) A thread for the queued shapes; the last one may still be ending."""
        previous = self._thread
        self._state = "searching"
        self._finishing = False
        self._done.clear()
        self._thread = threading.Thread(target=self._work, args=(previous,), name="dnnx-background-search",
                                        daemon=True)
        self._thread.start()

    # --- what runs tell it ------------------------------------------------------------------------
    def saw(self, arrays: list) -> None:
        """A run's inputs (the engine's arrays, host or device): a new shape set joins the queue, as
        seeded random data of its shapes (timing on zeros can flatter a kernel), with the values of
        ``value_inputs`` as given (they decide shapes; a device one is copied back)."""
        if not self._enabled:
            return
        try:  # any array the engine takes: numpy, DeviceArray, torch, a raw CUDA pointer with no dtype
            key = tuple((tuple(a.shape), np.dtype(_dtype_name(a.dtype)).name) for a in arrays)
        except (AttributeError, TypeError):
            return  # a shape or dtype this search cannot read: the run goes on, unsearched
        if key in self._keys:
            return
        try:  # the data itself is made on the search's thread (_materialized), not on the request's
            feeds = [_value(a) if i in self._value_indices else _Seeded(shape, np.dtype(dtype))
                     for i, (a, (shape, dtype)) in enumerate(zip(arrays, key))]
        except (AttributeError, TypeError, ValueError):
            return
        with self._lock:
            if key in self._keys or self._stopped:
                return
            self._keys.add(key)
            self._pending.append(feeds)
            self._served = self._served[-(_SERVED_KEPT - 1):] + [feeds]
            if self._budget_s - (time.perf_counter() - self._start) <= 0:
                self._state = "budget spent"
                return
            if self._thread is None or not self._thread.is_alive() or self._finishing:
                self._start_thread()

    def ran(self) -> None:
        """A request's run has returned: the search may start (Note [search after the first run]).
        Called after every run: a set Event is only read."""
        if not self._first_run.is_set():
            self._first_run.set()

    def stop(self, why: str) -> None:
        """No more searches or swaps (a tuner changes the weights)."""
        with self._lock:
            if self._stopped or not self._enabled:
                return
            self._stopped = True
            self._state = "stopped"
            self._why_off = why

    # --- what users see -------------------------------------------------------------------------
    def status(self) -> dict:
        with self._lock:
            searcher = self._searcher
            elapsed = time.perf_counter() - self._start
            report = {
                "state": self._state,
                "shapes_searched": self._shapes_searched,
                "shapes_pending": len(self._pending),
                "layers_searched": 0,
                "seconds": round(elapsed, 3),
                "time_left_s": round(max(0.0, self._budget_s - elapsed), 3) if self._state == "searching" else 0.0,
                "swaps": self._swaps,
                "speedup": (round(self._first_ms / self._best_ms, 4)
                            if self._first_ms and self._best_ms else 1.0),
            }
            if self._why_off:
                report["why"] = self._why_off
            if self._error:
                report["error"] = self._error
        if searcher is not None:
            stats = searcher.planner_report()
            report["layers_searched"] = int(stats.get("timing_runs", 0)) + int(stats.get("cache_hits", 0))
            report["search_seconds"] = float(stats.get("search_seconds", 0.0))
            report["timings_retaken"] = int(stats.get("timings_retaken", 0))
            report["quiet_waits_given_up"] = int(stats.get("quiet_waits_given_up", 0))
        return report

    def wait(self, timeout) -> bool:
        return self._done.wait(timeout)

    # --- the thread -------------------------------------------------------------------------------
    def _next(self):
        """The next shape set to search, or None when the search is over for now."""
        with self._lock:
            if self._stopped:
                return None
            if not self._pending:
                self._finishing = True  # done until a run brings a new shape (saw starts a thread)
                return None
            if self._budget_s - (time.perf_counter() - self._start) <= 0:
                self._state = "budget spent"
                return None
            return self._pending.pop(0)

    def _work(self, previous) -> None:
        if previous is not None:
            previous.join()  # one search at a time
        core.set_search_thread(True)  # this thread's runs are the search's, not requests
        self._first_run.wait(_FIRST_RUN_WAIT_S)
        try:
            while True:
                feeds = self._next()
                if feeds is None:
                    break
                self._search(feeds)
        except Exception as e:  # the search is an optimization: the model keeps its plan
            with self._lock:
                self._state = "failed"
                self._error = f"{type(e).__name__}: {e}"
                self._enabled = False
        finally:
            with self._lock:
                if self._state == "searching":
                    self._state = "done"
                if self._thread is threading.current_thread():
                    self._done.set()

    def _materialized(self, feeds: list) -> list:
        """``feeds`` with each _Seeded entry made into its array (once per shape and dtype)."""
        out = []
        for f in feeds:
            if isinstance(f, _Seeded):
                if f not in self._data:
                    self._data[f] = _search_data(f.shape, f.dtype)
                f = self._data[f]
            out.append(f)
        return out

    def _search(self, feeds: list) -> None:
        feeds = self._materialized(feeds)
        baseline = self._build_engine(searcher=False)  # before the search writes: the model's plans
        baseline.plan(inputs=feeds)
        timed_before = 0  # a new searcher's constructor plans (and times) the declared shapes
        if self._searcher is None:
            searcher = self._build_engine(searcher=True)
            with self._lock:
                self._searcher = searcher
        else:
            timed_before = self._searcher.planner_report().get("timing_runs", 0)
        self._searcher.plan(inputs=feeds)  # the exhaustive search of this shape: its choices cached
        if self._stopped:
            return
        if self._searcher.planner_report().get("timing_runs", 0) == timed_before:
            with self._lock:  # every choice came from the cache, as the model's own plan did
                self._shapes_searched += 1
            return
        candidate = self._build_engine(searcher=False)  # reads them
        for served in map(self._materialized, list(self._served)):  # plans and CUDA graphs off the request path
            candidate.plan(inputs=served)
            for _ in range(2):
                candidate.run(served, "device")
        now_ms, new_ms = _turns_ms(baseline, candidate, feeds)
        del baseline
        with self._lock:
            self._shapes_searched += 1
            if self._first_ms is None:
                self._first_ms = now_ms
            keep = new_ms < now_ms and not self._stopped
            self._best_ms = new_ms if keep else (self._best_ms or now_ms)
        if keep and self._swap(candidate):
            with self._lock:
                self._swaps += 1


def _wait_for_quiet(limit_s: float = _QUIET_WAIT_S) -> None:
    """Until no request has work on the device, or ``limit_s`` has passed (requests back to back
    with their data on the device leave no gap to find: the turns then run beside them, both
    plans alike; Note [background search] in device_timing.cc bounds the searcher's waits so)."""
    deadline = time.perf_counter() + limit_s
    while core.foreground_runs() > 0 and time.perf_counter() < deadline:
        time.sleep(0.0002)


def profile_turns(engines, feeds: list, turns: int, times: tuple, before_each=None) -> None:
    """Plans timed taking turns: each turn appends to times[k] one replayed graph of engines[k] on
    ``feeds`` (the sum of its layers' event times); ``before_each`` runs before each replay."""
    for _ in range(turns):
        for engine, out in zip(engines, times):
            if before_each is not None:
                before_each()
            layers = engine.profile(feeds, 1)["layers"]
            out.append(float(sum(layer["times_ms"][0] for layer in layers)))


def _turns_ms(baseline, candidate, feeds: list) -> tuple:
    """Each plan's time on ``feeds``, the two taking turns, each replay after no request has work
    on the device (or a bounded wait); the median per plan."""
    times = ([], [])
    profile_turns((baseline, candidate), feeds, _PROFILE_TURNS, times, _wait_for_quiet)
    return float(np.median(times[0])), float(np.median(times[1]))


def _dtype_name(dtype) -> str:
    """numpy's name for a dtype object of numpy, dnnx or torch ("torch.float32" -> "float32")."""
    return str(dtype).rsplit(".", 1)[-1]


@dataclass(frozen=True)
class _Seeded:
    """An input the search feeds with seeded data of this shape and dtype (_search_data)."""
    shape: tuple
    dtype: np.dtype


def _search_data(shape, dtype) -> np.ndarray:
    """Seeded data for timing: standard normal floats, zeros for other types (indices stay valid).
    The floats repeat one block of _BLOCK values: drawing a ResNet-50 batch of 256 (38.5 M values)
    took about 0.5 s of numpy, which a load with fixed shapes paid before it returned (the cold
    load bench, H100, 2026-12-06); filling it from the block is a copy."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return np.resize(_seeded_block(), tuple(shape)).astype(dtype, copy=False)
    return np.zeros(tuple(shape), dtype)


_BLOCK = 1 << 16


@lru_cache(maxsize=1)
def _seeded_block() -> np.ndarray:
    return np.random.default_rng(0).standard_normal(_BLOCK).astype(np.float32)


def _value(array) -> np.ndarray:
    """A value input's values on the host (a device array is copied back)."""
    return np.array(array) if isinstance(array, np.ndarray) else array.numpy()
