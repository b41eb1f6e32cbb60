"""One timed cold start, run by bench_load.py in a new process per repetition: import the engine,
load the model, run it once at the given batch; prints one JSON line of seconds per phase.

    python bench/_load_worker.py ENGINE MODEL DEVICE BATCH
    ENGINE: dnnx | onnxruntime | floor (CUDA only: context + cuDNN + cuBLAS handles, no model)

The clock starts at the top of this file, before any import (the interpreter's own start, the
same for every engine, is left out; bench_load.py also reports the process's wall time).
"""
import time

START = time.perf_counter()

import json  # noqa: E402
import sys  # noqa: E402

THREADS = 1  # the CPU rows: one thread for each engine


def feeds_for(inputs, batch: int) -> dict:
    """Seeded standard-normal float32 feeds; a symbolic dim (a str, or None/0) becomes ``batch``."""
    import numpy as np

    rng = np.random.default_rng(0)
    feeds = {}
    for name, shape in inputs:
        dims = [d if isinstance(d, int) and d > 0 else batch for d in shape]
        if dims and dims[0] == 1:
            dims[0] = batch
        feeds[name] = rng.standard_normal(dims).astype(np.float32)
    return feeds


def run_dnnx(path: str, device: str, batch: int) -> dict:
    import dnnx

    imported = time.perf_counter()
    if device == "cpu":
        dnnx.threads.set_num_threads(THREADS)
        model = dnnx.load(path, batch_size=batch)
    else:
        model = dnnx.load(path, batch_size=batch, device=device, precision="tf32")
    loaded = time.perf_counter()
    model.run(feeds_for([(s.name, s.shape) for s in model.inputs], batch))
    done = time.perf_counter()
    profile = model.load_profile() if hasattr(model, "load_profile") else {}
    return {"phases": {"import": imported - START, "load": loaded - imported, "first run": done - loaded},
            "total": done - START, "load_profile": profile}


def run_onnxruntime(path: str, device: str, batch: int) -> dict:
    import onnxruntime as ort

    if device != "cpu" and hasattr(ort, "preload_dlls"):
        ort.preload_dlls()  # onnxruntime-gpu's documented way to find the CUDA wheels' libraries
    imported = time.perf_counter()
    options = ort.SessionOptions()
    if device == "cpu":
        options.intra_op_num_threads = THREADS
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        providers = ["CPUExecutionProvider"]
    else:
        if "CUDAExecutionProvider" not in ort.get_available_providers():
            return {"error": f"onnxruntime {ort.__version__} has no CUDAExecutionProvider here"}
        providers = [("CUDAExecutionProvider", {"use_tf32": 1})]
    session = ort.InferenceSession(path, options, providers=providers)
    loaded = time.perf_counter()
    session.run(None, feeds_for([(i.name, i.shape) for i in session.get_inputs()], batch))
    done = time.perf_counter()
    return {"phases": {"import": imported - START, "load": loaded - imported, "first run": done - loaded},
            "total": done - START}


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
    loaded = time.perf_counter()
    if cudart.cudaFree(ctypes.c_void_p(0)) != 0:
        return {"error": "cudaFree(0) failed: no usable GPU"}
    context = time.perf_counter()
    handle, blas = ctypes.c_void_p(), ctypes.c_void_p()
    if cudnn.cudnnCreate(ctypes.byref(handle)) != 0:
        return {"error": "cudnnCreate failed"}
    if cublas.cublasCreate_v2(ctypes.byref(blas)) != 0:
        return {"error": "cublasCreate failed"}
    done = time.perf_counter()
    return {"phases": {"load libraries": loaded - START, "context": context - loaded, "handles": done - context},
            "total": done - START}


def main() -> int:
    engine, path, device, batch = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    if engine == "dnnx":
        result = run_dnnx(path, device, batch)
    elif engine == "onnxruntime":
        result = run_onnxruntime(path, device, batch)
    else:
        result = run_floor()
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
