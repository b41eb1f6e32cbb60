"""The dnnx side of the CUDA speed sweep (bench/sweep_cuda_speed.py), one model per process (the
process loads dnnx's cuDNN; onnxruntime-gpu's runs in bench/_ort_sweep_worker.py). The protocol is
bench/_speed_child.py's.

Per case (batch, precision), in order: dnnx.load(model, device, precision=..., batch_size=...)
with the default algo_search (timed as the load seconds), the inputs copied to the GPU once
(Model.to_device) and every run output="device", so that a call is one copy into the arena, the
layers (a CUDA graph replay) and no copy back; then _timing.time_for: warm-up calls, then about
--seconds of calls, median. One more call's first output is copied back for the sanity column.
On --device cpu the same with numpy inputs and outputs. --profile N: Model.profile over N runs of
the one case given, the 8 slowest layers.
"""
from __future__ import annotations

import gc
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _external_models as ext  # noqa: E402
from _speed_child import (Reporter, arguments, case_key, first_output, inject, parse_cases,  # noqa: E402
                          report_unreadable, run_cases, short_error)
from _timing import median_ms, time_for  # noqa: E402

PROFILE_TOP = 8


def load(dnnx, model, device: str, batch, precision: str):
    """(Model, seconds, note): the note names the load's first warning (a host fallback, ...)."""
    kwargs = {} if batch is None else {"batch_size": batch}
    if device == "cuda" or precision != "fp32":  # the CPU backend refuses the other precisions itself
        kwargs["precision"] = precision
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.perf_counter()
        loaded = dnnx.load(model, device=device, **kwargs)
        seconds = time.perf_counter() - start
    note = ""
    if caught:
        note = f"{caught[0].category.__name__}: {str(caught[0].message).splitlines()[0][:100]}"
    return loaded, seconds, note


def runner(loaded, feeds: dict, device: str):
    """(the timed call, note): device inputs and outputs on CUDA; host ones where the engine
    refuses device inputs for this model (the note says why)."""
    if device != "cuda":
        return (lambda: loaded.run_dict(feeds)), ""
    try:
        on_device = {name: loaded.to_device(value) for name, value in feeds.items()}
        loaded.run_dict(on_device, output="device")
        return (lambda: loaded.run_dict(on_device, output="device")), ""
    except Exception as e:  # noqa: BLE001 - the case still runs, and says how
        return (lambda: loaded.run_dict(feeds, output="device")), f"host inputs (device inputs: {short_error(e)[:80]})"


def run_case(dnnx, model, name: str, batch, precision: str, args, report: Reporter) -> dict:
    key = case_key(batch, precision)
    inject(args.inject, "dnnx", precision)
    feeds, notes = ext.make_inputs(name, model, batch)
    loaded, load_s, note = load(dnnx, model, args.device, batch, precision)
    call, run_note = runner(loaded, feeds, args.device)
    seconds = time_for(call, args.seconds)
    out = first_output(call())
    record = {"case": key, "ms": median_ms(seconds), "calls": len(seconds), "load_s": load_s,
              "output": report.save_output(key, out),
              "note": "; ".join(filter(None, [note, run_note, *notes]))}
    if args.profile:
        table = loaded.profile(feeds, repeat=args.profile)
        top = sorted(table, key=lambda r: -r.median_ms)[:PROFILE_TOP]
        record["profile_total_ms"] = table.total_ms
        record["profile"] = [[r.name, r.op, r.algorithm, r.median_ms] for r in top]
    del loaded, call
    gc.collect()
    return record


def main() -> int:
    args = arguments(__doc__)
    report = Reporter(args.results, "dnnx", args.outputs)
    import dnnx

    status = dnnx.cuda_status() if args.device == "cuda" else "cpu"
    report.write({"meta": {"dnnx": dnnx.__version__, "cuda_status": str(status)}})
    cases = parse_cases(args.cases)
    try:
        model = ext.read_model(args.model)
    except Exception as e:  # noqa: BLE001 - every case says why
        report_unreadable(report, cases, e)
        return 0
    run_cases(report, cases, args.deadline,
              lambda batch, precision: run_case(dnnx, model, args.model, batch, precision, args, report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
