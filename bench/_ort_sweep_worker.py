"""The onnxruntime-gpu side of the CUDA speed sweep (bench/sweep_cuda_speed.py), one model per
process (onnxruntime-gpu loads its own cuDNN: never in dnnx's process). The protocol is
bench/_speed_child.py's; onnxruntime is found as bench/_ort_worker.py finds it (ORT_GPU_PATH,
preload_dlls).

bench/_ort_worker.py's setup, for any number of inputs and outputs of any dtype: one session per
case with the CUDA execution provider, enable_cuda_graph=1, cudnn_conv_algo_search=EXHAUSTIVE,
use_tf32=1 for tf32 only, prefer_nhwc=1 for fp16; IO binding of every input (copied to the GPU
once) and every output on the GPU: an output whose shape is known from the declared one (the
batch dim bound) gets a preallocated buffer (a CUDA graph replays on the addresses it captured),
any other output is bound to the device for onnxruntime to allocate. A case whose session or
graph capture fails runs again without CUDA graphs (all outputs device-bound) and says so.
Each call is run_with_iobinding + synchronize_outputs; timing as dnnx's (_timing.time_for).

fp16 runs onnxruntime's float16 converter (onnxruntime.transformers.float16, float32 inputs and
outputs kept: the conversions run inside the timed call, as dnnx's do). bf16: onnxruntime-gpu has
no bfloat16 converter, so a bf16 case times the fp16 model (the report says so). fp32 and tf32 run
the float32 model. On --device cpu: CPUExecutionProvider, numpy in and out, no binding.
"""
from __future__ import annotations

import gc
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _external_models as ext  # noqa: E402
from _ort_worker import import_onnxruntime  # noqa: E402
from _speed_child import (Reporter, arguments, case_key, inject, parse_cases, report_unreadable, run_cases,  # noqa: E402
                          short_error)
from _timing import median_ms, time_for  # noqa: E402

# onnxruntime's NodeArg.type -> numpy dtype (the tensor types an output can have)
ORT_TYPES = {"tensor(float)": np.float32, "tensor(float16)": np.float16, "tensor(double)": np.float64,
             "tensor(int64)": np.int64, "tensor(int32)": np.int32, "tensor(int8)": np.int8,
             "tensor(uint8)": np.uint8, "tensor(bool)": np.bool_, "tensor(int16)": np.int16}


class Models:
    """The serialized float32 model and, once asked for, its float16 conversion (or why not)."""

    def __init__(self, proto):
        self.proto = proto
        self.fp32 = proto.SerializeToString()
        self._fp16 = None

    def for_precision(self, precision: str) -> bytes:
        if precision in ("fp32", "tf32"):
            return self.fp32
        if self._fp16 is None:
            try:
                from onnxruntime.transformers.float16 import convert_float_to_float16

                import onnx

                copy = onnx.ModelProto()
                copy.CopyFrom(self.proto)
                self._fp16 = convert_float_to_float16(copy, keep_io_types=True).SerializeToString()
            except Exception as e:  # noqa: BLE001 - the fp16 and bf16 cells say why
                self._fp16 = RuntimeError(f"float16 conversion failed: {short_error(e)}")
        if isinstance(self._fp16, Exception):
            raise self._fp16
        return self._fp16


def output_shapes(proto, batch_name, batch) -> dict:
    """{output name: its declared shape with the batch dim bound, or None where the shape or any
    dim is unknown} from the ONNX graph (onnxruntime's NodeArg shows an unknown shape as [], a
    scalar's)."""
    shapes = {}
    for value in proto.graph.output:
        t = value.type.tensor_type
        shape = [] if t.HasField("shape") else None
        for d in t.shape.dim if shape is not None else []:
            if d.HasField("dim_value"):
                shape.append(d.dim_value)
            elif batch is not None and d.HasField("dim_param") and d.dim_param == batch_name:
                shape.append(batch)
            else:
                shape = None
                break
        shapes[value.name] = shape
    return shapes


def cuda_session(ort, data: bytes, precision: str, graph: bool):
    options = {"device_id": "0", "cudnn_conv_algo_search": "EXHAUSTIVE",
               "use_tf32": "1" if precision == "tf32" else "0", "enable_cuda_graph": "1" if graph else "0",
               "prefer_nhwc": "1" if precision in ("fp16", "bf16") else "0"}
    session = ort.InferenceSession(data, ort.SessionOptions(), providers=[("CUDAExecutionProvider", options)])
    if session.get_providers()[0] != "CUDAExecutionProvider":  # it falls back to the CPU silently
        raise RuntimeError(f"the session runs on {session.get_providers()}, not CUDA")
    return session


def bound_call(ort, session, feeds: dict, shapes: dict, graph: bool, device: str = "cuda"):
    """(the timed call, a call returning the first output) of an IO-bound session: every input on
    `device`, every output too (preallocated where its shape is known and a CUDA graph replays)."""
    binding = session.io_binding()
    keep = []  # the OrtValues must outlive the binding
    for arg in session.get_inputs():
        value = ort.OrtValue.ortvalue_from_numpy(np.ascontiguousarray(feeds[arg.name]), device, 0)
        keep.append(value)
        binding.bind_ortvalue_input(arg.name, value)
    for arg in session.get_outputs():
        shape = shapes.get(arg.name) if graph else None
        dtype = ORT_TYPES.get(arg.type)
        if shape is None or dtype is None:
            binding.bind_output(arg.name, device)
        else:
            value = ort.OrtValue.ortvalue_from_shape_and_type(shape, dtype, device, 0)
            keep.append(value)
            binding.bind_ortvalue_output(arg.name, value)

    def call():
        session.run_with_iobinding(binding)
        binding.synchronize_outputs()

    def first():
        call()
        return np.asarray(binding.copy_outputs_to_cpu()[0])

    call.keep = keep
    return call, first


def run_bound(ort, make_session, feeds: dict, shapes: dict, seconds: float, device: str = "cuda"):
    """(seconds list, first output, load seconds, note) of make_session(graph) IO-bound: with a
    CUDA graph, else (the session or its capture failed) without, and the note says why."""
    why = ""
    for graph in (True, False):
        try:
            start = time.perf_counter()
            session = make_session(graph)
            load_s = time.perf_counter() - start
            call, first = bound_call(ort, session, feeds, shapes, graph, device)
            times = time_for(call, seconds)  # the first calls capture the graph, the rest replay it
            return times, first(), load_s, ("" if graph else f"without CUDA graph ({why[:100]})")
        except Exception as e:  # noqa: BLE001 - the graph attempt's error is kept for the note
            if not graph:
                raise
            why = short_error(e)
            gc.collect()


def run_cpu(ort, data: bytes, feeds: dict, seconds: float):
    start = time.perf_counter()
    session = ort.InferenceSession(data, ort.SessionOptions(), providers=["CPUExecutionProvider"])
    load_s = time.perf_counter() - start
    times = time_for(lambda: session.run(None, feeds), seconds)
    return times, np.asarray(session.run(None, feeds)[0]), load_s, ""


def main() -> int:
    args = arguments(__doc__)
    report = Reporter(args.results, "ort", args.outputs)
    cases = parse_cases(args.cases)
    if args.device == "cuda":
        ort, why = import_onnxruntime()
    else:
        try:
            import onnxruntime as ort
            why = None
        except Exception as e:  # noqa: BLE001
            ort, why = None, f"import onnxruntime failed ({short_error(e)})"
    if ort is None:
        for batch, precision in cases:
            report.write({"case": case_key(batch, precision), "error": why})
        return 0
    report.write({"meta": {"onnxruntime": f"{ort.__version__} ({Path(ort.__file__).parent})",
                           "providers": ort.get_available_providers()}})
    try:
        proto = ext.read_model(args.model)
        batch_name = ext.batch_dim(ext.declared_inputs(proto))
        models = Models(proto)
    except Exception as e:  # noqa: BLE001
        report_unreadable(report, cases, e)
        return 0

    def run_one(batch, precision) -> dict:
        inject(args.inject, "ort", precision)
        feeds, _ = ext.make_inputs(args.model, proto, batch)
        data = models.for_precision(precision)
        if args.device == "cuda":
            times, out, load_s, note = run_bound(ort, lambda graph: cuda_session(ort, data, precision, graph),
                                                 feeds, output_shapes(proto, batch_name, batch), args.seconds)
        else:
            times, out, load_s, note = run_cpu(ort, data, feeds, args.seconds)
        key = case_key(batch, precision)
        return {"ms": median_ms(times), "calls": len(times), "load_s": load_s,
                "output": report.save_output(key, out), "note": note}

    run_cases(report, cases, args.deadline, run_one)
    return 0


if __name__ == "__main__":
    sys.exit(main())
