"""dnnx against onnxruntime on the CPU on the recurrent models of ../shared/external (the zoo's
LSTM classifier, zoo2's speech GRU, CRNN and conv-LSTM, the MNIST-rows LSTM), at 1 and 2 threads
and batch 1 and 16, in one process. Inputs are bench/_external_models.py's (the sweep's feeds);
the timing is dnnx.cli.timing's: the engines take turns in blocks of calls, each block after the
process's other threads have gone idle (Note [settled turns]). Prints a markdown table of
medians and ratios (dnnx/ort) for bench/RESULTS.md's "CPU recurrent models".

    python bench/bench_cpu_rnn.py [--threads 1 2] [--batches 1 16] [--rounds 12] [--models ...]
                                  [--profile]

A round is one block of dnnx calls and one of onnxruntime calls (BLOCK = 10 calls each); the
median is over every timed call. --profile prints dnnx's per-layer profile of each case.
"""
from __future__ import annotations

import argparse
import datetime
import os
import shlex
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _external_models as ext  # noqa: E402
from bench_cpu import cpu_name  # noqa: E402

import dnnx  # noqa: E402
from dnnx.cli.timing import BLOCK, ort_session, time_interleaved  # noqa: E402
from dnnx.threads import set_num_threads  # noqa: E402

MODELS = [
    "zoo/lstm_bi.onnx",
    "zoo2/speech_gru.onnx",
    "zoo2/crnn.onnx",
    "zoo2/conv_lstm_har.onnx",
    "models/lstm_mnist_rows_b128.onnx",
]


def run_case(name, proto_path, proto, threads, batch, rounds, warmup, profile):
    """(dnnx median ms, ort median ms, max abs diff, batch used) of one model at one thread count
    and batch."""
    set_num_threads(threads)  # before load: kernels are split for the threads at plan time
    fixed = ext.batch_dim(ext.declared_inputs(proto)) is None
    model = dnnx.load(str(proto_path), batch_size=None if fixed else batch)
    feeds, _ = ext.make_inputs(name, proto, None if fixed else batch)
    session = ort_session(model.proto, threads)
    runners = {"dnnx": lambda: model.run_dict(feeds), "onnxruntime": lambda: session.run(None, feeds)}
    seconds = time_interleaved(runners, warmup, rounds * BLOCK)
    ours = model.run_dict(feeds)
    theirs = session.run(None, feeds)
    diff = max(float(np.max(np.abs(ours[o.name] - t), initial=0.0))
               for o, t in zip(session.get_outputs(), theirs) if np.issubdtype(t.dtype, np.floating))
    if profile:
        print(model.profile(feeds, repeat=20), flush=True)
    used = next(iter(feeds.values())).shape if fixed else batch
    return 1e3 * np.median(seconds["dnnx"]), 1e3 * np.median(seconds["onnxruntime"]), diff, used


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 16])
    parser.add_argument("--rounds", type=int, default=12, help="interleaved blocks per engine")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--models", nargs="+", default=MODELS)
    parser.add_argument("--profile", action="store_true", help="print dnnx's per-layer profile of each case")
    args = parser.parse_args()
    env = [f"{k}={os.environ[k]}" for k in ("DNNX_DEV_BUILD", "PYTHONPATH", "DNNX_RNN_PORTABLE") if os.environ.get(k)]
    command = shlex.join([*env, "python", *sys.argv])
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models:
            if not (ext.EXTERNAL / name).exists():
                print(f"skip {name}: not in {ext.EXTERNAL}", flush=True)
                continue
            proto = ext.read_model(name)
            path = Path(tmp) / name.replace("/", "_")
            import onnx

            onnx.save(proto, str(path))
            fixed = ext.batch_dim(ext.declared_inputs(proto)) is None
            for batch in ([None] if fixed else args.batches):
                for threads in args.threads:
                    ours, theirs, diff, used = run_case(name, path, proto, threads, batch, args.rounds,
                                                        args.warmup, args.profile)
                    shown = f"fixed {tuple(used)}" if fixed else str(batch)
                    row = f"| {name} | {shown} | {threads} | {ours:.3f} | {theirs:.3f} | {ours / theirs:.2f} | {diff:.2g} |"
                    print(row, flush=True)
                    rows.append(row)
    print()
    print(f"- date: {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}")
    print(f"- machine: {cpu_name()}, load average {os.getloadavg()[0]:.2f}")
    print(f"- command: `{command}`")
    print(f"- {args.rounds} interleaved rounds of {BLOCK} calls per engine, {args.warmup} warm-up; medians")
    print()
    print("| model | batch | threads | dnnx ms | ort ms | dnnx/ort | max abs diff |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for row in rows:
        print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
