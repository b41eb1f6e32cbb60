"""One timed cold start, run by bench_load.py in a new process per repetition: import the engine,
load the model, run it once at the given batch; prints one JSON line of seconds per phase.

    python bench/_load_worker.py ENGINE MODEL DEVICE BATCH [--precision P] [--algo-search S]
                                 [--data FILE.npy] [--seconds N]
    ENGINE: dnnx | onnxruntime | floor (CUDA only: context + cuDNN + cuBLAS handles, no model)

The clock starts at the top of this file, before any import (the interpreter's own start, the
same for every engine, is left out; bench_load.py also reports the process's wall time). With
--data the input is read from that file (the same bytes for every engine) and the reading is
left out of the total ("data" is reported apart); without it, seeded normal data are made
inside the clock. With --seconds N (CUDA) the model then runs back to back for N seconds, each run
timed from call to return ("runs": (seconds since start, ms) pairs), with --io device its input and
output in GPU memory (dnnx: Model.to_device and output="device"; onnxruntime: IO binding), with
--io numpy numpy in and out (a request that brings its data from the host).
--precision (fp32, tf32, fp16, bf16) and --algo-search (dnnx's policy; onnxruntime's
cudnn_conv_algo_search is EXHAUSTIVE, its own default, at any policy) apply on CUDA.
"""
import time

START = time.perf_counter()

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402

THREADS = 1  # the CPU rows: one thread for each engine
EXCLUDED = 0.0  # seconds of data reading inside the clock, left out of every phase after it


def now() -> float:
    """Seconds since the worker's first line, the data reading left out."""
    return time.perf_counter() - START - EXCLUDED


def feeds_for(inputs, batch: int, data) -> dict:
    """The --data array for the first input, else seeded standard-normal float32 feeds (a symbolic
    dim, a str or None/0, becomes ``batch``)."""
    import numpy as np

    if data is not None:
        return {inputs[0][0]: data}
    rng = np.random.default_rng(0)
    feeds = {}
    for name, shape in inputs:
        dims = [d if isinstance(d, int) and d > 0 else batch for d in shape]
        if dims and dims[0] == 1:
            dims[0] = batch
        feeds[name] = rng.standard_normal(dims).astype(np.float32)
    return feeds


def timed_runs(run_once, seconds: float) -> list:
    """(seconds since start, ms) of each run, back to back for ``seconds``."""
    runs = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        t = time.perf_counter()
        run_once()
        runs.append((now() - (time.perf_counter() - t), (time.perf_counter() - t) * 1e3))
    return runs


def run_dnnx(args, data) -> dict:
    import dnnx

    imported = now()
    if args.device == "cpu":
        dnnx.threads.set_num_threads(THREADS)
        model = dnnx.load(args.model, batch_size=args.batch)
    else:
        options = {} if args.algo_search is None else {"algo_search": args.algo_search}
        model = dnnx.load(args.model, batch_size=args.batch, device=args.device, precision=args.precision, **options)
    loaded = now()
    feeds = feeds_for([(s.name, s.shape) for s in model.inputs], args.batch, data)
    model.run(feeds)
    done = now()
    result = {"phases": {"import": imported, "load": loaded - imported, "first run": done - loaded},
              "total": done, "load_profile": model.load_profile()}
    if args.device != "cpu":
        stats = model.planner_stats()
        result["load_profile"]["search"] = stats.get("search_seconds", 0.0)
        result["load_profile"].update({f"search {k.split(': ', 1)[1]}": v for k, v in stats.items()
                                       if k.startswith("search_seconds: ")})
        planning = sorted(((k.split(": ", 1)[1], v) for k, v in stats.items() if k.startswith("plan_seconds: ")),
                          key=lambda kv: -kv[1])
        result["load_profile"].update({f"plan {op}": s for op, s in planning[:3]})
    if args.seconds > 0:
        if args.io == "device":
            on_device = {name: model.to_device(x) for name, x in feeds.items()}
            result["runs"] = timed_runs(lambda: model.run_dict(on_device, output="device"), args.seconds)
        else:
            result["runs"] = timed_runs(lambda: model.run_dict(feeds), args.seconds)
        result["search"] = model.search_status()
    return result


def run_onnxruntime(args, data) -> dict:
    import onnxruntime as ort

    if args.device != "cpu" and hasattr(ort, "preload_dlls"):
        ort.preload_dlls()  # onnxruntime-gpu's documented way to find the CUDA wheels' libraries
    imported = now()
    options = ort.SessionOptions()
    if args.device == "cpu":
        options.intra_op_num_threads = THREADS
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        providers = ["CPUExecutionProvider"]
    else:
        if "CUDAExecutionProvider" not in ort.get_available_providers():
            return {"error": f"onnxruntime {ort.__version__} has no CUDAExecutionProvider here"}
        providers = [("CUDAExecutionProvider", {"use_tf32": int(args.precision == "tf32"),
                                                "cudnn_conv_algo_search": "EXHAUSTIVE"})]
    session = ort.InferenceSession(args.model, options, providers=providers)
    loaded = now()
    feeds = feeds_for([(i.name, i.shape) for i in session.get_inputs()], args.batch, data)
    session.run(None, feeds)
    done = now()
    result = {"phases": {"import": imported, "load": loaded - imported, "first run": done - loaded}, "total": done}
    if args.seconds > 0 and args.io == "numpy":
        result["runs"] = timed_runs(lambda: session.run(None, feeds), args.seconds)
    elif args.seconds > 0:
        binding = session.io_binding()
        for name, x in feeds.items():
            binding.bind_ortvalue_input(name, ort.OrtValue.ortvalue_from_numpy(x, "cuda", 0))
        for out in session.get_outputs():
            binding.bind_output(out.name, "cuda")

        def once():
            session.run_with_iobinding(binding)
            binding.synchronize_outputs()

        result["runs"] = timed_runs(once, args.seconds)
    return result


def _cuda_library(names: tuple, wheel_modules: tuple):
    """The first of ``names`` that loads: from the nvidia wheels' lib folders, the CUDA toolkit's,
    then the loader's search path."""
    import ctypes
    import importlib
    import os

    folders = []
    for module_name in wheel_modules:
        try:
            folders += [os.path.join(p, "lib") for p in importlib.import_module(module_name).__path__]
        except ImportError:
            pass
    folders += ["/usr/local/cuda/lib64", ""]
    for folder in folders:
        for name in names:
            try:
                return ctypes.CDLL(os.path.join(folder, name) if folder else name, mode=ctypes.RTLD_GLOBAL)
            except OSError:
                continue
    raise OSError(f"none of {names} loads")


def run_floor() -> dict:
    """A bare CUDA start: load cudart, cuBLAS and cuDNN (the wheels dnnx.cuda preloads, else the
    system's), create the context (cudaFree(0)), then one cuDNN and one cuBLAS handle."""
    import ctypes

    cudart = _cuda_library(("libcudart.so.13", "libcudart.so.12", "libcudart.so"), ("nvidia.cu13", "nvidia.cuda_runtime"))
    cublas = _cuda_library(("libcublas.so.13", "libcublas.so.12"), ("nvidia.cu13", "nvidia.cublas"))
    cudnn = _cuda_library(("libcudnn.so.9",), ("nvidia.cudnn",))
    loaded = now()
    if cudart.cudaFree(ctypes.c_void_p(0)) != 0:
        return {"error": "cudaFree(0) failed: no usable GPU"}
    context = now()
    handle, blas = ctypes.c_void_p(), ctypes.c_void_p()
    if cudnn.cudnnCreate(ctypes.byref(handle)) != 0:
        return {"error": "cudnnCreate failed"}
    if cublas.cublasCreate_v2(ctypes.byref(blas)) != 0:
        return {"error": "cublasCreate failed"}
    done = now()
    return {"phases": {"load libraries": loaded, "context": context - loaded, "handles": done - context},
            "total": done}


def main() -> int:
    global EXCLUDED
    parser = argparse.ArgumentParser()
    parser.add_argument("engine", choices=["dnnx", "onnxruntime", "floor"])
    parser.add_argument("model")
    parser.add_argument("device")
    parser.add_argument("batch", type=int)
    parser.add_argument("--precision", default="tf32")
    parser.add_argument("--algo-search", default=None)
    parser.add_argument("--data")
    parser.add_argument("--seconds", type=float, default=0.0)
    parser.add_argument("--io", choices=["device", "numpy"], default="device")
    args = parser.parse_args()
    data = None
    if args.data:
        import numpy as np

        t = time.perf_counter()
        data = np.load(args.data)
        EXCLUDED = time.perf_counter() - t
    if args.engine == "dnnx":
        result = run_dnnx(args, data)
    elif args.engine == "onnxruntime":
        result = run_onnxruntime(args, data)
    else:
        result = run_floor()
    result["data_s"] = EXCLUDED
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
