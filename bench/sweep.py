"""The crash sweep (issue #34): every model in ../shared/external (zoo/, zoo2/, models/, and any
other .onnx there) loaded and run by dnnx on each device and precision asked for, at batch 1 and
3 (and 0) where the batch is symbolic, each model in a child process, against onnxruntime (CPU).

    python bench/sweep.py                                   # the CPU, fp32, batches 1,3,0
    python bench/sweep.py --device cpu,cuda --precision fp32,tf32,fp16,bf16 --jobs 8 \\
        --timeout 300 --budget 900 --report sweep.md        # CUDA too, all four precisions

Per case (model x device x precision x batch) the outcome is one of:
- ok: it ran, and every output is within the precision's bound of onnxruntime's
  (Note [sweep tolerances] in bench/_sweep_worker.py);
- crash: the child died (a signal, an abort) while dnnx loaded, ran or planned it;
- hang: no answer within --timeout seconds (the child is killed);
- refusal: dnnx raised at load, run or plan (a refusal is a failure: onnxruntime runs these);
- mismatch: it ran, and an output's shape or values are not onnxruntime's;
- onnxruntime-fails: onnxruntime (the reference) cannot run it, and dnnx ran it or refused it as well: not dnnx's failure;
- not run: the --budget ran out before the case started;
- sweep error: the harness itself failed (reading the file, drawing the inputs).

A child runs one model on one device at one precision, its batches in turn (one load); after a
crash or a hang in a batch's run, another child takes the batches left (a crash or hang at load
is every batch's). CUDA at any precision and the CPU at fp32 are the cases (the CPU runs fp32
only). The inputs follow each file's provenance (bench/_external_models.py: Note [sweep inputs]).

Output: one summary line per device and precision and one for the whole sweep (printed last), a
table of the failures, and with --report a markdown (.md) or JSON (any other name) file of every
case. The exit status is 1 when a case failed (crash, hang, refusal, mismatch, sweep error).
tests/test_crash_sweep.py runs the CPU half in CI; scripts/gpu-check.sh runs the CUDA half.
"""
from __future__ import annotations

import argparse
import datetime
import fnmatch
import json
import os
import platform
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _external_models as ext  # noqa: E402
import _sweep_worker  # noqa: E402
from _sweep_report import FAILURES, PRECISIONS, batch_label, failure_table, summary_lines, write_report  # noqa: E402

WORKER = HERE / "_sweep_worker.py"


@dataclass
class Job:
    """One model on one device at one precision: the batches still to report."""

    model: str
    device: str
    precision: str
    batches: List[Optional[int]]
    weight: int = 0


@dataclass
class Child:
    job: Job
    proc: subprocess.Popen
    stderr: object
    deadline: float
    batch: Optional[int] = None
    stage: str = "start"
    pending: bytes = b""


def device_precisions(devices: List[str], precisions: List[str]) -> List[tuple]:
    """(device, precision) pairs: CUDA at each precision, the CPU at fp32 alone."""
    pairs = []
    for device in devices:
        for precision in precisions:
            if device.startswith("cuda") or precision == "fp32":
                pairs.append((device, precision))
    return pairs


def plan_jobs(root: Path, devices: List[str], precisions: List[str], batches: List[int],
              patterns: Optional[List[str]] = None) -> List[Job]:
    """Every (model, device, precision) of the sweep, heaviest first (the longest jobs start first,
    so that the workers finish together). A model with a symbolic batch gets `batches`, a fixed
    one its declared shape (batch None)."""
    import onnx

    jobs = []
    for name in ext.find_models(root):
        if patterns and not any(fnmatch.fnmatch(name, p) for p in patterns):
            continue
        header = onnx.load(str(root / name), load_external_data=False)
        symbolic = ext.batch_dim(ext.declared_inputs(header)) is not None
        weight = ext.weight_count(header)
        for device, precision in device_precisions(devices, precisions):
            jobs.append(Job(name, device, precision, list(batches) if symbolic else [None], weight))
    jobs.sort(key=lambda j: (-j.weight, j.model, j.device, PRECISIONS.index(j.precision)))
    return jobs


class Sweep:
    """Runs jobs over `jobs` child processes; `results` holds one dict per case."""

    def __init__(self, root: Path, jobs: int, timeout: float, budget: float, threads: int,
                 ref_dir: Path, on_result=None, worker: Path = WORKER):
        self.root, self.jobs, self.timeout, self.threads = root, max(1, jobs), timeout, threads
        self.worker = worker
        self.ref_dir = ref_dir
        self.stop_wall = time.time() + budget
        self.stop_mono = time.monotonic() + budget
        self.results: List[dict] = []
        self.on_result = on_result or (lambda r: None)
        self.selector = selectors.DefaultSelector()
        self.env = dict(os.environ)
        self.env.setdefault("OMP_NUM_THREADS", str(threads))
        self.env.setdefault("OPENBLAS_NUM_THREADS", str(threads))
        self.env["PYTHONUNBUFFERED"] = "1"
        self.dev_build = bool(self.env.get("DNNX_DEV_BUILD"))

    # -- results
    def record(self, job: Job, batch, outcome: str, detail: str, **extra) -> None:
        r = {"model": job.model, "device": job.device, "precision": job.precision, "batch": batch,
             "outcome": outcome, "detail": detail, **extra}
        self.results.append(r)
        if batch in job.batches:
            job.batches.remove(batch)
        self.on_result(r)

    # -- children
    def start(self, job: Job) -> Child:
        case = {"model": job.model, "root": str(self.root), "device": job.device, "precision": job.precision,
                "batches": job.batches, "ref_dir": str(self.ref_dir), "stop_at": self.stop_wall,
                "threads": self.threads, "dev_build": self.dev_build}
        stderr = tempfile.TemporaryFile()
        proc = subprocess.Popen([sys.executable, str(self.worker), json.dumps(case)], stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=stderr, env=self.env)
        os.set_blocking(proc.stdout.fileno(), False)
        child = Child(job, proc, stderr, deadline=time.monotonic() + self.timeout, batch=job.batches[0])
        self.selector.register(proc.stdout, selectors.EVENT_READ, child)
        return child

    def handle(self, child: Child, message: dict) -> None:
        batch = message.get("batch")
        if "outcome" in message:
            message = dict(message)
            outcome, detail = message.pop("outcome"), message.pop("detail", "")
            message.pop("batch", None)
            self.record(child.job, batch, outcome, detail, **message)
            child.deadline = time.monotonic() + self.timeout  # the next batch has its own time
            child.batch, child.stage = (child.job.batches[0] if child.job.batches else None), "between batches"
        else:
            child.batch, child.stage = batch, message.get("stage", child.stage)

    def read(self, child: Child) -> bool:
        """Reads what the child wrote; False once it has closed its end (exited)."""
        try:
            chunk = os.read(child.proc.stdout.fileno(), 1 << 16)
        except BlockingIOError:
            return True
        if not chunk:
            return False
        child.pending += chunk
        *lines, child.pending = child.pending.split(b"\n")
        for line in lines:
            try:
                self.handle(child, json.loads(line))
            except ValueError:
                pass
        return True

    @staticmethod
    def stderr_tail(child: Child) -> str:
        """The last lines the child wrote to stderr (an abort's message, a traceback's last line)."""
        child.stderr.seek(0)
        text = child.stderr.read().decode(errors="replace").strip().splitlines()
        return " | ".join(line.strip() for line in text[-3:])[-500:]

    def finish(self, child: Child, killed_for_hang: bool) -> Optional[Job]:
        """Records what the child's end means for its batch; the job to restart, if any."""
        self.selector.unregister(child.proc.stdout)
        if killed_for_hang:
            child.proc.kill()
        code = child.proc.wait()
        tail = self.stderr_tail(child)
        child.proc.stdout.close()
        child.stderr.close()
        job = child.job
        if not job.batches:
            return None
        batch, stage = child.batch if child.batch in job.batches else job.batches[0], child.stage
        if killed_for_hang:
            what, how = "hang", f"no answer in {self.timeout:.0f} s (stage {stage})"
        else:
            what = "crash"
            how = (f"signal {signal.Signals(-code).name}" if code < 0 and -code in signal.Signals._value2member_map_
                   else f"exit code {code}") + f" (stage {stage})" + (f": {tail}" if tail else "")
        if stage == "reference":  # onnxruntime's own crash or hang: not dnnx's
            failed = Path(_sweep_worker.reference_stem(self.ref_dir, job.model, batch) + ".failed.txt")
            if not failed.exists():  # dnnx has not run this batch yet: a new child runs it without a reference
                failed.write_text(f"onnxruntime {what}: {how}")
                return job
            self.record(job, batch, "onnxruntime-fails", f"onnxruntime {what}: {how}")
        elif stage in ("run", "plan", "between batches"):
            self.record(job, batch, what, how)
        elif stage == "load":  # the load is every batch's: the batches left share its fate
            for b in list(job.batches):
                self.record(job, b, what, how + ("" if b == batch else " (the same load)"))
        else:  # start, import, read, compare: the harness's part
            for b in list(job.batches):
                self.record(job, b, "sweep error", f"{what}: {how}")
        return job if job.batches else None

    def run(self, jobs: List[Job]) -> List[dict]:
        queue = list(jobs)
        children: List[Child] = []
        while queue or children:
            while queue and len(children) < self.jobs and time.monotonic() < self.stop_mono:
                children.append(self.start(queue.pop(0)))
            if queue and time.monotonic() >= self.stop_mono:
                for job in queue:
                    for b in list(job.batches):
                        self.record(job, b, "not run", "the sweep's time budget ran out")
                queue.clear()
            if not children:
                continue
            for key, _ in self.selector.select(timeout=0.2):
                child = key.data
                if not self.read(child):
                    children.remove(child)
                    restart = self.finish(child, killed_for_hang=False)
                    if restart:
                        queue.insert(0, restart)
            now = time.monotonic()
            for child in list(children):
                if now > child.deadline:
                    children.remove(child)
                    restart = self.finish(child, killed_for_hang=True)
                    if restart:
                        queue.insert(0, restart)
        return self.results


# ---------------------------------------------------------------------------------------------

def parse_list(text: str) -> List[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def sweep(root: Path = ext.EXTERNAL, devices=("cpu",), precisions=("fp32",), batches=(1, 3, 0),
          jobs: int = 0, timeout: float = 300.0, budget: float = 3600.0, patterns=None, progress: bool = False,
          log=None) -> List[dict]:
    """The sweep as a function (tests/test_crash_sweep.py): every case's result dict."""
    cuda = any(d.startswith("cuda") for d in devices)
    cpus = os.cpu_count() or 1
    jobs = jobs or (min(8, cpus) if cuda else cpus)
    threads = max(1, cpus // jobs)
    work = plan_jobs(root, list(devices), list(precisions), list(batches), patterns)
    total = sum(len(j.batches) for j in work)
    bar = None
    if progress:
        try:
            from tqdm import tqdm

            bar = tqdm(total=total, desc="sweep", unit="case", file=sys.stderr, leave=False)
        except ImportError:
            bar = None

    def on_result(r: dict) -> None:
        if bar is not None:
            bar.update()
            if r["outcome"] in FAILURES:
                bar.write(f"  {r['outcome']}: {r['model']} {r['device']} {r['precision']} batch "
                          f"{batch_label(r['batch'])}: {r['detail'][:150]}", file=sys.stderr)
        elif log is not None and r["outcome"] in FAILURES:
            log(f"  {r['outcome']}: {r['model']} {r['device']} {r['precision']} batch {batch_label(r['batch'])}: "
                f"{r['detail'][:150]}")

    with tempfile.TemporaryDirectory(prefix="dnnx-sweep-") as tmp:
        runner = Sweep(root, jobs, timeout, budget, threads, Path(tmp), on_result)
        results = runner.run(work)
    if bar is not None:
        bar.close()
    return results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     epilog="\n\n".join(__doc__.split("\n\n")[1:]),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=ext.EXTERNAL, help="the models' folder (default: %(default)s)")
    parser.add_argument("--device", default="cpu", help="comma-separated: cpu, cuda, cuda:N (default: cpu)")
    parser.add_argument("--precision", default="fp32",
                        help="comma-separated, of fp32, tf32, fp16, bf16 (CUDA; the CPU runs fp32 only); 'all' for "
                             "the four (default: fp32)")
    parser.add_argument("--batches", default="1,3,0",
                        help="batch sizes for models whose batch is symbolic (default: 1,3,0); a fixed one runs as declared")
    parser.add_argument("--models", nargs="*", help="only the files matching these patterns (e.g. 'zoo2/*' '*bert*')")
    parser.add_argument("--jobs", type=int, default=0,
                        help="child processes at a time (default: the CPU count; with CUDA, at most 8)")
    parser.add_argument("--timeout", type=float, default=300.0,
                        help="seconds a case may take before it is a hang (a child's load counts toward its first "
                             "batch; default: %(default)s)")
    parser.add_argument("--budget", type=float, default=3600.0,
                        help="seconds for the whole sweep: cases not started by then are reported as not run "
                             "(it ends within budget + timeout; default: %(default)s)")
    parser.add_argument("--report", type=Path, help="write every case there: markdown for .md, else JSON")
    args = parser.parse_args(argv)
    devices = parse_list(args.device)
    precisions = list(PRECISIONS) if args.precision == "all" else parse_list(args.precision)
    for p in precisions:
        if p not in PRECISIONS:
            parser.error(f"--precision: {p!r} is not one of {', '.join(PRECISIONS)}")
    for d in devices:
        if d != "cpu" and not (d == "cuda" or d.startswith("cuda:")):
            parser.error(f"--device: {d!r} is not cpu, cuda or cuda:N")
    if not device_precisions(devices, precisions):
        parser.error("no case: the CPU runs fp32 only (add fp32, or --device cuda)")
    try:
        batches = [int(b) for b in parse_list(args.batches)]
    except ValueError:
        parser.error(f"--batches: {args.batches!r} is not a comma-separated list of integers")
    if any(b < 0 for b in batches) or not batches:
        parser.error("--batches: sizes are integers of 0 or more")
    if not ext.find_models(args.root):
        print(f"sweep: no .onnx file under {args.root}", file=sys.stderr)
        return 2
    start = time.monotonic()
    cuda = any(d.startswith("cuda") for d in devices)
    jobs = args.jobs or (min(8, os.cpu_count() or 1) if cuda else (os.cpu_count() or 1))
    results = sweep(args.root, devices, precisions, batches, jobs, args.timeout, args.budget, args.models,
                    progress=sys.stderr.isatty(), log=lambda line: print(line, file=sys.stderr))
    seconds = time.monotonic() - start
    models = len({r["model"] for r in results})
    lines = summary_lines(results, f"{seconds:.0f} s, {jobs} workers, {models} models")
    print(failure_table(results))
    if args.report:
        meta = {"date": datetime.datetime.now().isoformat(timespec="seconds"),
                "command": " ".join(["python bench/sweep.py"] + (argv if argv is not None else sys.argv[1:])),
                "machine": f"{platform.node()}, {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs",
                "jobs": jobs, "timeout": args.timeout, "budget": args.budget, "seconds": seconds, "summary": lines,
                "tolerances": _tolerances()}
        write_report(args.report, results, meta)
        print(f"report: {args.report}")
    print("\n".join(lines))
    return 1 if any(r["outcome"] in FAILURES for r in results) else 0


def _tolerances() -> dict:
    return {"cpu fp32": _sweep_worker.CPU_FP32_TOLERANCE, **{f"cuda {p}": t for p, t in _sweep_worker.TOLERANCES.items()}}


if __name__ == "__main__":
    sys.exit(main())
