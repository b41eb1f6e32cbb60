"""``dnnx run MODEL --input DIR_OR_GLOB --output DIR [--workers N] [--ray ADDRESS|local]``: every
.npy/.npz/.parquet file through the model, each output written as DIR/<input's stem>.npz (keyed
by output name, as ``--output FILE.npz`` writes one).

- where: in this process (``--workers 1``), in N worker processes (``--workers N``), or as Ray
  tasks (``--ray local`` starts a Ray instance here, or joins the one this process already has;
  ``--ray ADDRESS`` joins a cluster), at most N in flight (default: the cluster's CPUs, or GPUs
  on CUDA; each task asks for one). The model is read once, here, and shipped as bytes (Ray: put
  into the object store once); each worker loads it once and keeps it for its later files;
- a bad file (unreadable, wrong keys or dtype, a shape the model refuses) is reported on stderr
  and skipped; the others go on; the exit status is then 2;
- a model that cannot load in a worker stops the run with one error naming the worker and why
  (dnnx.WorkerLoadError), not a hang;
- a worker process that dies stops a local run (``--workers N``) with one error; every output
  already written is whole (on Ray, see the next item);
- each output is written atomically (a temporary file renamed over it) and is named after its
  input alone, so a file written twice is the same file: a Ray task whose worker was killed is
  retried by Ray (up to 3 times) and rewrites its files, neither losing nor duplicating one;
  temporaries a killed worker left behind are removed at the end.
"""
from __future__ import annotations

import glob
import hashlib
import os
import signal
import sys
from pathlib import Path
from typing import List, Optional, Tuple

from .. import _pickle
from .._progress import bar
from ..errors import WorkerLoadError
from ._files import read_feeds, write_npz
from ._parquet import read_parquet_feeds

SUFFIXES = (".npy", ".npz", ".parquet")
GROUP = 8             # files per task at most: a retried task redoes few files, the bar moves often
KILL_ONCE = "DNNX_RUN_KILL_ONCE"  # fault injection for tests: a marker path; see _maybe_die

_WORKER = {"key": None, "model": None}  # the model a worker process keeps between its tasks


def is_many(text: str) -> bool:
    """Whether ``--input`` names many files: a folder, or a glob pattern."""
    return Path(text).is_dir() or glob.has_magic(text)


def input_files(text: str) -> List[Path]:
    """The .npy/.npz/.parquet files of a folder (not its subfolders) or of a glob ('**' recurses), sorted."""
    folder = Path(text)
    found = folder.iterdir() if folder.is_dir() else (Path(p) for p in glob.glob(text, recursive=True))
    files = sorted(p for p in found if p.suffix in SUFFIXES and p.is_file())
    if not files:
        raise ValueError(f"--input {text}: no {', '.join(SUFFIXES)} files there")
    return files


def jobs(files: List[Path], out_dir: Path) -> List[Tuple[str, str]]:
    """[(input, output)]: DIR/<stem>.npz per input; two inputs of one stem are refused up front."""
    seen = {}
    for path in files:
        other = seen.setdefault(path.stem, path)
        if other != path:
            raise ValueError(f"{other} and {path} would both be written to {out_dir / (path.stem + '.npz')}: "
                             f"rename one, or run them separately")
    return [(str(path), str(out_dir / (path.stem + ".npz"))) for path in files]


def _feeds(path: str, specs) -> dict:
    return read_parquet_feeds(path, specs) if path.endswith(".parquet") else read_feeds(path, specs)


def _maybe_die(marker: Optional[str]) -> None:
    """Fault injection (tests/test_ray_data.py): the first worker to create ``marker`` kills itself
    with SIGKILL, as an out-of-memory killer or a lost node would."""
    if marker:
        try:
            os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return
        os.kill(os.getpid(), signal.SIGKILL)


def process_group(key: str, state: dict, group: list, chunk: Optional[int], threads: Optional[int] = None,
                  kill_once: Optional[str] = None) -> list:
    """Runs in a worker: [(input, None or why it was skipped)] for ``group`` [(input, output)];
    [("", "load: " + message)] when the model cannot load here."""
    if _WORKER["key"] != key:
        if threads:
            from .. import threads as _threads
            _threads.set_num_threads(threads)
        try:
            _WORKER["model"], _WORKER["key"] = _pickle.load_in_worker(state), key
        except WorkerLoadError as e:
            return [("", f"load: {e}")]
    model = _WORKER["model"]
    results = []
    for i, (source, target) in enumerate(group):
        try:
            write_npz(target, model.run_dict(_feeds(source, model.inputs), chunk_size=chunk))
            results.append((source, None))
        except Exception as e:  # a bad file is reported and skipped, whatever it is
            results.append((source, f"{type(e).__name__}: {' '.join(str(e).split())}"))
        if i == 0:
            _maybe_die(kill_once)
    return results


def _groups(items: list, workers: int) -> list:
    size = max(1, min(GROUP, len(items) // (4 * workers)))
    return [items[i:i + size] for i in range(0, len(items), size)]


def _state_key(state: dict) -> str:
    digest = hashlib.sha256(state["onnx"])
    digest.update(repr(sorted(state["options"].items())).encode())
    return digest.hexdigest()


def run_many(args, load_options: dict) -> int:
    """The multi-file mode of ``dnnx run``; returns the exit status."""
    if not args.output:
        raise ValueError("--input names many files: give --output DIR for their outputs")
    out_dir = Path(args.output)
    if out_dir.exists() and not out_dir.is_dir():
        raise ValueError(f"--output {out_dir}: expected a folder for the outputs of many inputs, got a file")
    todo = jobs(input_files(args.input), out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    state = _pickle.as_state(args.model, **load_options)
    if args.ray is None:
        skipped = _run_local(state, todo, args)
    else:
        skipped = _run_ray(state, todo, args, load_options.get("device", "cpu"))
    _remove_temporaries(todo)
    for source, why in skipped:
        print(f"dnnx run: skipped {source}: {why}", file=sys.stderr)
    print(f"{len(todo) - len(skipped)} of {len(todo)} file(s) written to {out_dir}" +
          (f"; {len(skipped)} skipped" if skipped else ""))
    return 2 if skipped else 0


def _collect(results: list, skipped: list, progress) -> None:
    for source, why in results:
        if source == "" and why.startswith("load: "):
            raise WorkerLoadError(why[len("load: "):])
        if why is not None:
            skipped.append((source, why))
    progress.update(len(results))


def _run_local(state: dict, todo: list, args) -> list:
    key, skipped = _state_key(state), []
    workers = args.workers or 1
    kill_once = os.environ.get(KILL_ONCE)
    with bar(total=len(todo), desc="run", unit="file") as progress:
        if workers == 1:
            try:
                for group in _groups(todo, 1):
                    _collect(process_group(key, state, group, args.chunk, None, kill_once), skipped, progress)
            finally:
                _WORKER.update(key=None, model=None)  # this process is no worker: keep no model
            return skipped
        import concurrent.futures as futures
        import multiprocessing

        threads = max(1, (os.cpu_count() or 1) // workers)
        # spawn: a fresh interpreter per worker, not a fork of this one's thread pools
        with futures.ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
            pending = [pool.submit(process_group, key, state, group, args.chunk, threads, kill_once)
                       for group in _groups(todo, workers)]
            try:
                for done in futures.as_completed(pending):
                    _collect(done.result(), skipped, progress)
            except futures.process.BrokenProcessPool:
                raise ChildProcessError("a worker process died (killed, or out of memory); the outputs written are "
                                        "complete, and a second run rewrites them all (--ray retries killed "
                                        "workers)") from None
            except BaseException:
                for f in pending:
                    f.cancel()
                raise
    return skipped


def _ray_module():
    try:
        import ray
    except ImportError:
        raise ValueError('--ray needs Ray: pip install "dnnx[ray]" (or "ray")') from None
    return ray


def _run_ray(state: dict, todo: list, args, device: str) -> list:
    ray = _ray_module()
    started = not ray.is_initialized()
    if started:
        import logging

        ray.init(address=None if args.ray == "local" else args.ray, logging_level=logging.WARNING,
                 log_to_driver=False, include_dashboard=False)
    try:
        on_gpu = str(device).startswith("cuda")
        resources = ray.cluster_resources()
        workers = args.workers or max(1, int(resources.get("GPU" if on_gpu else "CPU", 1)))
        task = ray.remote(process_group).options(num_cpus=0 if on_gpu else 1, num_gpus=1 if on_gpu else 0,
                                                 max_retries=3)
        threads = None if on_gpu else 1  # one CPU per task, as it asks of Ray
        key, ref, kill_once, skipped = _state_key(state), ray.put(state), os.environ.get(KILL_ONCE), []
        waiting, running = _groups(todo, workers), []
        with bar(total=len(todo), desc="run", unit="file") as progress:
            while waiting or running:
                while waiting and len(running) < workers:  # at most `workers` tasks in flight
                    running.append(task.remote(key, ref, waiting.pop(0), args.chunk, threads, kill_once))
                done, running = ray.wait(running, num_returns=1)
                _collect(ray.get(done[0]), skipped, progress)
        return skipped
    finally:
        if started:
            ray.shutdown()


def _remove_temporaries(todo: list) -> None:
    """The ``.<name>.*.tmp`` files a killed worker left beside its outputs (atomic_write's)."""
    for _, target in todo:
        target = Path(target)
        for tmp in target.parent.glob(f".{glob.escape(target.name)}.*.tmp"):
            tmp.unlink(missing_ok=True)
