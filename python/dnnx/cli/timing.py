"""Latency of dnnx, and of onnxruntime beside it, on one model with the same inputs and threads.
Used by ``dnnx bench`` and by bench/bench_cpu.py.

    report = measure("lenet.onnx", batch=64, threads=2, compare=True)
    print(format_report(report))

``dnnx bench`` prints the header (``format_header``) as soon as the model is loaded, through
``measure``'s ``announce``, and shows a progress bar over the calls (dnnx._progress) meanwhile.
"""
from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from .._progress import bar
from .._tensors import dtype_named
from ..model import load
from ..threads import set_num_threads

ORT = "onnxruntime"


@dataclass
class Timing:
    """Wall-clock seconds of every timed call of one engine."""

    engine: str
    seconds: list
    samples: int  # per call

    @property
    def median_s(self) -> float:
        return float(np.median(self.seconds))

    @property
    def p90_s(self) -> float:
        return float(np.percentile(self.seconds, 90))

    @property
    def samples_per_s(self) -> float:
        return self.samples / self.median_s


@dataclass
class Report:
    model: str
    batch: int
    samples: int
    threads: int
    warmup: int
    iters: int
    timings: list = field(default_factory=list)
    max_abs_diff: dict = field(default_factory=dict)  # output name -> |dnnx - onnxruntime| max
    notes: list = field(default_factory=list)
    load_profile: dict = field(default_factory=dict)  # Model.load_profile() of dnnx's load

    def timing(self, engine: str):
        return next((t for t in self.timings if t.engine == engine), None)

    @property
    def ratio(self):
        """dnnx's median over onnxruntime's (below 1: dnnx is faster); None without onnxruntime."""
        ours, theirs = self.timing("dnnx"), self.timing(ORT)
        return ours.median_s / theirs.median_s if ours and theirs else None


def available_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def random_inputs(specs, batch: int, seed: int = 0) -> tuple:
    """({name: array}, samples per call). Symbolic dims become ``batch``; floats are standard normal
    (zeros would hide wrong weights and let a kernel skip work), integers small and non-negative."""
    rng = np.random.default_rng(seed)
    feeds, symbolic = {}, False
    for spec in specs:
        shape = []
        for d in spec.shape:
            symbolic |= isinstance(d, str)
            shape.append(batch if isinstance(d, str) else d)
        if dtype_named(spec.dtype).kind in "fV":  # V: ml_dtypes floats (and int4: normal values cast)
            feeds[spec.name] = rng.standard_normal(shape).astype(dtype_named(spec.dtype))
        else:
            feeds[spec.name] = rng.integers(0, 4, size=shape).astype(dtype_named(spec.dtype))
    first = next(iter(feeds.values()), None)
    fixed = not symbolic and first is not None and batch not in first.shape
    samples = (first.shape[0] if first.ndim else 1) if fixed else batch
    return feeds, samples


def ort_session(proto, threads: int):
    """An onnxruntime CPU session on ``threads`` intra-op threads, one inter-op thread (dnnx runs
    layers one after another, so that is the comparable setting), default graph optimizations."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    return ort.InferenceSession(proto.SerializeToString(), options, providers=["CPUExecutionProvider"])


# The engines take turns in blocks: BLOCK timed calls each, after the process has settled
# (settle()) and one untimed call. Turn by turn, load from other processes on a shared machine
# falls on both alike. Blocks, not single calls: onnxruntime's intra-op threads spin for a while
# after each of its runs, holding a core, so call-by-call turns timed that spinning into dnnx's
# calls (LeNet at batch 64 on 2 threads, on this project's 2-core CI machine: dnnx 9.3 ms
# interleaved call by call against 3.8-4.7 ms alone).
#
# Note [settled turns]
# A fixed pause between turns did not let the spinning end: with onnxruntime's default spinning
# (kept: it is what its users run) its worker kept one of the 2 cores busy through dnnx's timed
# LSTM block (bench/probes/probe_spin_cpu_time.py: 600 ms of the worker's CPU time in 615 ms of
# wall time after a 20 ms pause: it spins for 40-80 ms after a run), so dnnx's 2-thread rows
# were timed on one free core. Neither engine's settings change; instead, before each block,
# settle() waits until no thread of the process but the caller is running: on Linux, none is
# in state R in /proc/self/task/*/stat for SETTLE_POLLS polls SETTLE_S apart (a spinning thread
# is R; one blocked on a futex is S). The process's CPU time is no good here: for threads on
# other cores it is accounted at scheduler ticks, so a 5 ms window could read idle while a
# thread spun (the probe caught settle returning after 11 ms with the worker still spinning).
# Elsewhere, settle waits until time.process_time grows by less than SETTLE_BUSY of a 20 ms
# window. At most SETTLE_MAX_S either way. The engine about to be timed starts with the cores
# to itself, whichever engine ran before; its own threads' spinning between its own calls stays
# in its times.
BLOCK = 10
SETTLE_S = 0.002
SETTLE_POLLS = 5
SETTLE_BUSY = 0.05
SETTLE_MAX_S = 2.0


def _running_threads():
    """How many of this process's threads other than the caller are running or runnable now
    (state R), or None where /proc is not there."""
    me = threading.get_native_id()
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        return None
    running = 0
    for tid in tids:
        if int(tid) == me:
            continue
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                stat = f.read()
        except OSError:  # it ended
            continue
        running += stat[stat.rindex(")") + 2] == "R"  # the state follows "(comm) "
    return running


def settle() -> float:
    """Sleeps until this process's other threads are idle (Note [settled turns]); returns the
    seconds waited (SETTLE_MAX_S at most: a thread that never rests does not hang the bench)."""
    start = time.perf_counter()
    quiet = 0
    while quiet < SETTLE_POLLS and time.perf_counter() - start < SETTLE_MAX_S:
        running = _running_threads()
        if running is None:  # no /proc: the process's CPU time over a longer window
            cpu, wall = time.process_time(), time.perf_counter()
            time.sleep(10 * SETTLE_S)
            busy = (time.process_time() - cpu) / (time.perf_counter() - wall)
            quiet = SETTLE_POLLS if busy < SETTLE_BUSY else 0
            continue
        quiet = quiet + 1 if running == 0 else 0
        if quiet < SETTLE_POLLS:
            time.sleep(SETTLE_S)
    return time.perf_counter() - start


def time_interleaved(runners: dict, warmup: int, iters: int, progress: bool = False) -> dict:
    """{name: [seconds]} (``iters`` each): the engines take turns, BLOCK timed calls at a time,
    each block after settle() and one untimed call. ``progress`` shows a bar over the
    calls (on a terminal; its update falls outside the timed calls)."""
    with bar(warmup + iters, desc="warm-up", unit="round", show=progress) as shown:
        for _ in range(warmup):
            for run in runners.values():
                run()
            shown.update()
        shown.set_description_str(" vs ".join(runners))
        seconds = {name: [] for name in runners}
        done = 0
        while done < iters:
            block = min(BLOCK, iters - done)
            for name, run in runners.items():
                settle()
                run()
                for _ in range(block):
                    start = time.perf_counter()
                    run()
                    seconds[name].append(time.perf_counter() - start)
            done += block
            shown.update(block)
    return seconds


def measure(path, batch: int, threads=None, warmup: int = 10, iters: int = 100, compare: bool = False,
            seed: int = 0, announce=None, progress: bool = False) -> Report:
    """Times dnnx (and onnxruntime when ``compare``) on one model and compares their outputs.
    ``announce(report)`` is called once the model is loaded, before any call is timed (the report
    then has its settings, no timings); ``progress`` shows a bar over the calls."""
    threads = threads or available_cores()
    set_num_threads(threads)  # before load: the CPU kernels are split for the threads at plan time
    model = load(path, batch_size=batch)
    feeds, samples = random_inputs(model.inputs, batch, seed)
    report = Report(str(path), batch, samples, threads, warmup, iters, load_profile=model.load_profile())
    if samples != batch:
        report.notes.append(f"the model's batch is fixed at {samples}; --batch {batch} does not apply")
    if announce is not None:
        announce(report)
    runners = {"dnnx": lambda: model.run_dict(feeds)}
    session = None
    if compare:
        try:
            session = ort_session(model.proto, threads)  # the same (batch-adjusted) graph dnnx runs
        except ImportError:
            report.notes.append("onnxruntime is not installed: dnnx timed alone")
        else:
            runners[ORT] = lambda: session.run(None, feeds)
    seconds = time_interleaved(runners, warmup, iters, progress=progress)
    report.timings = [Timing(name, s, samples) for name, s in seconds.items()]
    if session is not None:
        ours = model.run_dict(feeds)
        theirs = dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds)))
        report.max_abs_diff = {name: float(np.max(np.abs(ours[name] - theirs[name]), initial=0.0))
                               for name in ours}
    return report


def format_header(report: Report) -> str:
    return (f"model {report.model}: batch {report.batch} ({report.samples} samples per call), "
            f"{report.threads} thread(s), {report.warmup} warm-up + {report.iters} timed calls each")


def format_report(report: Report, header: bool = True) -> str:
    """The whole report; ``header=False`` leaves out the first line (printed earlier by ``dnnx bench``)."""
    lines = [format_header(report)] if header else []
    rows = [("engine", "median ms", "p90 ms", "samples/s")]
    rows += [(t.engine, f"{1e3 * t.median_s:.3f}", f"{1e3 * t.p90_s:.3f}", f"{t.samples_per_s:,.0f}")
             for t in report.timings]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    for row in rows:
        lines.append("  ".join([row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:], widths[1:])]))
    if report.ratio is not None:
        lines.append(f"dnnx / {ORT} median time: {report.ratio:.2f}x")
    if report.max_abs_diff:
        name, diff = max(report.max_abs_diff.items(), key=lambda kv: kv[1])
        lines.append(f"outputs: max abs diff dnnx vs {ORT} {diff:.3g} ({name})")
    if report.load_profile:
        phases = ", ".join(f"{k} {1e3 * v:.1f}" for k, v in report.load_profile.items())
        lines.append(f"dnnx load: {1e3 * sum(report.load_profile.values()):.1f} ms ({phases} ms)")
    lines += [f"note: {n}" for n in report.notes]
    return "\n".join(lines)
