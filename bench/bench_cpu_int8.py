"""QDQ int8 ResNet on the CPU: dnnx (fuse_qdq_int8: Int8Conv layers, Note [qdq int8]) against
onnxruntime on the same file, and dnnx with the pass off (float between the QDQ pairs), batch 1,
one thread by default (issue #37, CPU half). The QDQ file is made here by onnxruntime's own
tool: quant_pre_process, then quantize_static (QDQ, per-channel int8 weights, uint8
activations: its defaults), calibrated on `--calibration` seeded standard-normal batches; the
float model is ../shared/external/zoo/resnet18.onnx (zoo_models.materialized: seeded weights)
or bench/resnet50.py's ResNet-50 (seeded weights). --quantizer dnnx makes the file with
dnnx.quantize instead (QDQ on the inputs of each Conv/Gemm and at the residual joins, Note [int8
residual join]; the accuracy guard at its default or --int8-tolerance). Timing: dnnx.cli.timing (the engines take
turns in blocks of calls after the process's threads have gone idle, Note [settled turns];
medians). Appends a section to bench/RESULTS.md.

    python bench/bench_cpu_int8.py [--model resnet18|resnet50] [--quantizer onnxruntime|dnnx] [--threads 1]
                                   [--iters 30] [--warmup 3]
    python bench/bench_cpu_int8.py --zoo2 q_qdq_regnety_002 [--threads 1] [--iters 30]

--zoo2 NAME times ../shared/external/zoo2/NAME.onnx instead (the quantized files onnxruntime's
tool wrote: q_qdq_* QDQ, q_qop_* QOperator, q_dyn_* dynamic), fed as its PROVENANCE.md says
(bench/_external_models.py), batch 1, dnnx against onnxruntime on the same file.
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import shlex
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_cpu import cpu_name, versions  # noqa: E402

import dnnx  # noqa: E402
from dnnx.cli.timing import available_cores, ort_session, random_inputs, time_interleaved  # noqa: E402
from dnnx.threads import set_num_threads  # noqa: E402

ZOO = Path(__file__).resolve().parents[1] / ".." / "shared" / "external" / "zoo"


def float_model(name: str) -> onnx.ModelProto:
    if name == "resnet18":
        sys.path.insert(0, str(ZOO))
        from zoo_models import materialized

        return materialized(str(ZOO / "resnet18.onnx"))
    from resnet50 import build_resnet50

    return build_resnet50(seed=0)


def qdq_file(model: onnx.ModelProto, tmp: Path, samples: int) -> Path:
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    src, pre, dst = tmp / "float.onnx", tmp / "pre.onnx", tmp / "qdq.onnx"
    onnx.save(model, src)
    quant_pre_process(str(src), str(pre), skip_symbolic_shape=True)
    name = model.graph.input[0].name

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter(range(samples))

        def get_next(self):
            s = next(self.it, None)
            return None if s is None else {name: np.random.default_rng(100 + s).standard_normal((1, 3, 224, 224), np.float32)}

    quantize_static(str(pre), str(dst), Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
    return dst


def dnnx_qdq_file(model: onnx.ModelProto, tmp: Path, samples: int, tolerance=None) -> Path:
    """dnnx.quantize's QDQ file of `model`, calibrated on the same seeded batches as qdq_file;
    `tolerance`: its int8_tolerance (None: the default)."""
    x = np.concatenate([np.random.default_rng(100 + s).standard_normal((1, 3, 224, 224), np.float32)
                        for s in range(samples)])
    dst = tmp / "dnnx_qdq.onnx"
    options = {} if tolerance is None else {"int8_tolerance": tolerance}
    report = dnnx.quantize(model, dst, calibration=x, show_progress=False, **options)
    print(next(line for line in str(report).splitlines() if "layer(s) int8" in line))  # the guard's count
    return dst


def zoo2_main(args, command: str, load: float) -> int:
    """--zoo2: one quantized zoo2 file, dnnx against onnxruntime (no float-between-QDQ row: the
    QOperator and dynamic files have no QDQ pairs)."""
    from _external_models import EXTERNAL, make_inputs, read_model

    name = f"zoo2/{args.zoo2}.onnx"
    model = read_model(name, EXTERNAL)
    feeds, _ = make_inputs(name, model, 1)
    ours = dnnx.load(model, batch_size=1)
    plan = str(ours.plan())
    int8_layers = sum(1 for line in plan.splitlines() if "int32 accumulation" in line)
    session = ort_session(model, args.threads)
    runners = {"dnnx": lambda: ours.run_dict(feeds), "onnxruntime": lambda: session.run(None, feeds)}
    seconds = time_interleaved(runners, args.warmup, args.iters)
    cpu = cpu_times(runners, args.iters)
    want = session.run(None, feeds)[0]
    got = list(ours.run_dict(feeds).values())[0]
    rel = float(np.max(np.abs(got.astype(np.float64) - want))) / max(float(np.max(np.abs(want))), 1e-30)
    med = {k: 1e3 * float(np.median(v)) for k, v in seconds.items()}
    cpu_med = {k: 1e3 * float(np.median(v)) for k, v in cpu.items()}
    for k in med:
        print(f"{k:12s} median {med[k]:8.2f} ms  cpu-time median {cpu_med[k]:8.2f} ms")
    print(f"{int8_layers} layers with int32 accumulation in dnnx's plan; rel diff vs ort {rel:.3g}")
    lines = [
        "",
        f"# zoo2 {args.zoo2} (onnxruntime's quantized file) on the CPU: dnnx vs onnxruntime, {args.threads} "
        "thread(s) (bench/bench_cpu_int8.py --zoo2)",
        "",
        f"- date: {datetime.datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z')}",
        f"- machine: {cpu_name()}, {available_cores()} cores available, {platform.system()} {platform.release()}",
        f"- load average (1 min): {load:.2f} when the run began, {os.getloadavg()[0]:.2f} at its end",
        f"- threads: {args.threads} per engine; versions: {versions()}",
        f"- command: `{command}`",
        f"- batch 1, inputs as zoo2/PROVENANCE.md says; {int8_layers} layers with int32 accumulation in dnnx's "
        f"plan; rel diff (max abs diff / max |ort|) vs onnxruntime {rel:.3g}",
        f"- method: dnnx.cli.timing.time_interleaved, {args.warmup} warm-up + {args.iters} timed calls each",
        "",
        "| engine | median ms | / onnxruntime | cpu ms (median) | / onnxruntime |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for k in med:
        lines.append(f"| {k} | {med[k]:.2f} | {med[k] / med['onnxruntime']:.2f} | {cpu_med[k]:.2f} | "
                     f"{cpu_med[k] / cpu_med['onnxruntime']:.2f} |")
    append_section(args.out, lines)
    return 0


def append_section(path: str, lines: list) -> None:
    """The section's markdown lines, appended to `path` (bench/RESULTS.md by default)."""
    with open(path, "a") as f:
        f.write("\n".join(lines) + "\n")
    print(f"appended to {path}")


def cpu_times(runners: dict, rounds: int) -> dict:
    """CPU seconds of each call (time.process_time, one thread: the work itself, not the time the
    process waited for a core on a loaded machine), the engines taking turns call by call."""
    out = {k: [] for k in runners}
    for _ in range(rounds):
        for name, run in runners.items():
            start = time.process_time()
            run()
            out[name].append(time.process_time() - start)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", choices=["resnet18", "resnet50"], default="resnet50")
    parser.add_argument("--quantizer", choices=["onnxruntime", "dnnx"], default="onnxruntime",
                        help="who writes the QDQ file: onnxruntime's quantize_static or dnnx.quantize")
    parser.add_argument("--zoo2", default=None, help="a quantized ../shared/external/zoo2 file's name "
                        "(q_qdq_regnety_002, q_qop_efficientnet_b0, q_dyn_bert) instead of --model")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--iters", type=int, default=30, help="timed calls per engine")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--calibration", type=int, default=4, help="calibration batches")
    parser.add_argument("--int8-tolerance", type=float, default=None,
                        help="--quantizer dnnx: dnnx.quantize's int8_tolerance (default: its own, 0.01)")
    parser.add_argument("--out", default=str(Path(__file__).with_name("RESULTS.md")), help="appended to")
    args = parser.parse_args()
    env = [f"{k}={os.environ[k]}" for k in ("DNNX_DEV_BUILD", "PYTHONPATH", "DNNX_INT8_AVX2") if os.environ.get(k)]
    command = shlex.join([*env, "python3", *sys.argv])
    load = os.getloadavg()[0]
    set_num_threads(args.threads)
    if args.zoo2:
        return zoo2_main(args, command, load)
    with tempfile.TemporaryDirectory() as tmp:
        if args.quantizer == "dnnx":
            path = dnnx_qdq_file(float_model(args.model), Path(tmp), args.calibration, args.int8_tolerance)
        else:
            path = qdq_file(float_model(args.model), Path(tmp), args.calibration)
        fused = dnnx.load(str(path), batch_size=1)
        unfused = dnnx.load(str(path), batch_size=1, passes={"fuse_qdq_int8": False})
        plan = str(fused.plan())
        int8_layers = sum(1 for line in plan.splitlines() if "int32 accumulation" in line)
        float_out = sum(1 for line in plan.splitlines() if "int32 accumulation, float output" in line)
        residual = sum(1 for line in plan.splitlines() if "int32 accumulation" in line and "residual add" in line)
        convs = sum(1 for n in onnx.load(str(path)).graph.node if n.op_type in ("Conv", "Gemm", "MatMul"))
        feeds, _ = random_inputs(fused.inputs, 1, 0)
        session = ort_session(fused.proto, args.threads)
        runners = {"dnnx int8": lambda: fused.run_dict(feeds), "onnxruntime": lambda: session.run(None, feeds),
                   "dnnx float-between-QDQ": lambda: unfused.run_dict(feeds)}
        seconds = time_interleaved(runners, args.warmup, args.iters)
        cpu = cpu_times(runners, args.iters)
        ort_out = session.run(None, feeds)[0]
        ours = list(fused.run_dict(feeds).values())[0]
        sim = list(unfused.run_dict(feeds).values())[0]
    scale = float(np.max(np.abs(ort_out)))
    med = {k: 1e3 * float(np.median(v)) for k, v in seconds.items()}
    p90 = {k: 1e3 * float(np.percentile(v, 90)) for k, v in seconds.items()}
    cpu_med = {k: 1e3 * float(np.median(v)) for k, v in cpu.items()}
    for k in med:
        print(f"{k:24s} median {med[k]:8.2f} ms  p90 {p90[k]:8.2f} ms  cpu-time median {cpu_med[k]:8.2f} ms")
    rel = float(np.max(np.abs(ours - ort_out))) / scale
    rel_sim = float(np.max(np.abs(sim - ort_out))) / scale
    agree = float(np.mean(ours.argmax(-1) == ort_out.argmax(-1)))
    print(f"int8 layers {int8_layers} ({float_out} with a float output, {residual} with a residual add) of {convs} "
          f"Conv/Gemm/MatMul; rel diff vs ort {rel:.3g} "
          f"(float-between-QDQ {rel_sim:.3g}); top-1 agreement {agree:.2f}")
    lines = [
        "",
        f"# QDQ int8 {args.model} ({args.quantizer}'s file) on the CPU: dnnx int8 layers vs onnxruntime "
        "(bench/bench_cpu_int8.py)",
        "",
        f"- date: {datetime.datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z')}",
        f"- machine: {cpu_name()}, {available_cores()} cores available, {platform.system()} {platform.release()}",
        f"- load average (1 min): {load:.2f} when the run began, {os.getloadavg()[0]:.2f} at its end "
        "(other processes share these cores: the numbers are noisy)",
        f"- threads: {args.threads} per engine; versions: {versions()}",
        f"- command: `{command}`",
        (f"- model: {args.model}, seeded weights, quant_pre_process + quantize_static (QDQ, per-channel int8 "
         f"weights, uint8 activations, {args.calibration} calibration batches); batch 1"
         if args.quantizer == "onnxruntime" else
         f"- model: {args.model}, seeded weights, dnnx.quantize (QDQ on Conv/Gemm inputs and residual joins, per-channel int8 "
         f"weights, uint8 activations, minmax on {args.calibration} calibration images, the guard at "
         f"{'its default' if args.int8_tolerance is None else f'int8_tolerance {args.int8_tolerance:g}'}); batch 1"),
        f"- dnnx ran {int8_layers} of {convs} Conv/Gemm/MatMul as int8 layers ({float_out} with a float "
        f"output, {residual} with a residual add); rel diff (max abs diff / "
        f"max |ort|) vs onnxruntime {rel:.3g}, float-between-QDQ {rel_sim:.3g}",
        f"- method: dnnx.cli.timing.time_interleaved, {args.warmup} warm-up + {args.iters} timed calls each",
        "",
        "- cpu ms: time.process_time per call (one thread: the work, without the waits for a core "
        f"on this loaded machine), {args.iters} calls each, the engines taking turns call by call",
        "",
        "| engine | median ms | p90 ms | / onnxruntime | cpu ms (median) | / onnxruntime |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for k in med:
        lines.append(f"| {k} | {med[k]:.2f} | {p90[k]:.2f} | {med[k] / med['onnxruntime']:.2f} | "
                     f"{cpu_med[k]:.2f} | {cpu_med[k] / cpu_med['onnxruntime']:.2f} |")
    append_section(args.out, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
