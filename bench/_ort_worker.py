"""The onnxruntime-gpu side of the CUDA benches, run in its own process: onnxruntime-gpu loads its
own cuDNN, and only one libcudnn.so.9 can live in a process. A script re-runs itself with
`--worker ort`; the worker times each case it is given and writes ort.json (and each case's
output as ort_<i>.npy) to the folder it is handed. The main process never imports onnxruntime.

onnxruntime-gpu is not on the GPU machine's image: it is carried there (../shared/GPU.md) and
ORT_GPU_PATH names the folder it was unpacked in. Without it, or without its CUDA provider, every
row says why instead of failing the bench.

Each case runs the way onnxruntime documents as its fastest path: the CUDA execution provider with
enable_cuda_graph=1 and cudnn_conv_algo_search=EXHAUSTIVE, use_tf32 as the case asks, IO binding of
an input and a preallocated output on the GPU (a CUDA graph replays on the addresses it was
captured with), run_with_iobinding + synchronize_outputs per call. fp16 cases convert the model
with onnxruntime's own converter (onnxruntime.transformers.float16, float32 input and output kept,
so the conversions run inside the timed call as dnnx's do); prefer_nhwc=1 is the provider's NHWC
option. A case whose graph capture fails is timed again without CUDA graphs and says so.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import traceback
from pathlib import Path

import numpy as np

from _timing import time_calls


def short_error(e: BaseException) -> str:
    """One line for a table cell: the exception's first line, without the table's separator."""
    text = (str(e).strip().splitlines() or [""])[0]
    return f"{type(e).__name__}: {text}"[:200].replace("|", "/")


def ort_case(name: str, model: str, x: np.ndarray, out_shape, *, use_tf32: int = 0, fp16: bool = False,
             nhwc: bool = False) -> dict:
    """One case for ort_worker: `model` a float32 ONNX file, `x` its one input, `out_shape` its one
    output's shape (fixed: the output buffer is allocated before the graph capture)."""
    return {"name": name, "model": model, "x": x, "out_shape": list(out_shape), "use_tf32": use_tf32,
            "fp16": fp16, "nhwc": nhwc}


def import_onnxruntime():
    """(module, None) or (None, why not): onnxruntime with a usable CUDA provider."""
    carried = os.environ.get("ORT_GPU_PATH")
    if carried:
        sys.path.insert(0, carried)  # before the machine's CPU-only onnxruntime
    try:
        import onnxruntime as ort
    except Exception as e:
        return None, f"import onnxruntime failed ({short_error(e)}; ORT_GPU_PATH={carried!r})"
    if hasattr(ort, "preload_dlls"):
        ort.preload_dlls()  # onnxruntime-gpu's documented way to find the CUDA wheels' libraries
    if "CUDAExecutionProvider" not in ort.get_available_providers():
        return None, (f"onnxruntime {ort.__version__} from {Path(ort.__file__).parent} has no "
                      f"CUDAExecutionProvider (ORT_GPU_PATH={carried!r})")
    return ort, None


def float16_copy(model: str) -> str:
    """`model` converted by onnxruntime's float16 converter, float32 input and output kept."""
    import onnx
    from onnxruntime.transformers.float16 import convert_float_to_float16

    path = str(Path(model).with_suffix(".fp16.onnx"))
    if not Path(path).exists():
        onnx.save(convert_float_to_float16(onnx.load(model), keep_io_types=True), path)
    return path


def time_case(ort, case: dict, graph: bool, warmup: int, iters: int) -> tuple:
    """(seconds per call, output) of one session, IO-bound on the GPU."""
    options = {"device_id": "0", "cudnn_conv_algo_search": "EXHAUSTIVE", "use_tf32": str(case["use_tf32"]),
               "enable_cuda_graph": "1" if graph else "0", "prefer_nhwc": "1" if case["nhwc"] else "0"}
    model = float16_copy(case["model"]) if case["fp16"] else case["model"]
    session = ort.InferenceSession(model, ort.SessionOptions(), providers=[("CUDAExecutionProvider", options)])
    if session.get_providers()[0] != "CUDAExecutionProvider":  # it falls back to the CPU silently
        raise RuntimeError(f"the session runs on {session.get_providers()}, not CUDA")
    (inp,), (out,) = session.get_inputs(), session.get_outputs()
    x = ort.OrtValue.ortvalue_from_numpy(case["x"], "cuda", 0)
    y = ort.OrtValue.ortvalue_from_shape_and_type(case["out_shape"], np.float32, "cuda", 0)
    binding = session.io_binding()
    binding.bind_ortvalue_input(inp.name, x)
    binding.bind_ortvalue_output(out.name, y)

    def call():
        session.run_with_iobinding(binding)
        binding.synchronize_outputs()

    seconds = time_calls(call, warmup, iters)  # the first runs capture the graph, the rest replay it
    return seconds, np.asarray(binding.copy_outputs_to_cpu()[0], dtype=np.float32)


def ort_worker(out_dir: str, cases: list, warmup: int, iters: int) -> None:
    """Time `cases` (ort_case dicts) and write ort.json: {"version" or "error", "cases": {name:
    {"seconds", "graph"} or {"error"}}}; case i's output goes to ort_<i>.npy."""
    results = {"cases": {}}
    ort, why = import_onnxruntime()
    if ort is None:
        results["error"] = why
    else:
        results["version"] = f"onnxruntime {ort.__version__} ({Path(ort.__file__).parent})"
        for i, case in enumerate(cases):
            row = results["cases"][case["name"]] = {}
            for graph in (True, False):
                try:
                    seconds, out = time_case(ort, case, graph, warmup, iters)
                    row.update(seconds=seconds, graph=graph)
                    np.save(Path(out_dir) / f"ort_{i}.npy", out)
                    break
                except Exception as e:  # one failed case must not lose the others
                    traceback.print_exc()
                    row.setdefault("error", short_error(e))  # the CUDA-graph attempt's error
    (Path(out_dir) / "ort.json").write_text(json.dumps(results))


def run_ort_worker(script: str, out_dir: str, *args: str) -> dict:
    """`python script --worker ort --dir out_dir args...` and its ort.json. A worker that died (e.g. a
    crash in its CUDA libraries) gives {"error": ...} instead of failing the bench: its rows are
    optional. Each case's "out" is its saved output (or None)."""
    proc = subprocess.run([sys.executable, script, "--worker", "ort", "--dir", out_dir, *args],
                          stderr=subprocess.PIPE, text=True)
    sys.stderr.write(proc.stderr)  # into the bench's log as well
    path = Path(out_dir) / "ort.json"
    if not path.exists():
        tail = [line for line in proc.stderr.splitlines() if line.strip()][-1:] or [""]
        return {"error": f"the worker exited with {proc.returncode}: {tail[0][:200]}", "cases": {}}
    results = json.loads(path.read_text())
    for i, row in enumerate(results["cases"].values()):
        saved = Path(out_dir) / f"ort_{i}.npy"
        row["out"] = np.load(saved) if "seconds" in row and saved.exists() else None
    return results


def ort_cell(results: dict, name: str) -> tuple:
    """(seconds or None, note) of one case: note says why there is no time, or that no CUDA graph ran."""
    if "error" in results:
        return None, f"not available: {results['error']}"
    row = results["cases"].get(name)
    if row is None:
        return None, "not run"
    if "seconds" not in row:
        return None, row.get("error", "?")
    return row["seconds"], ("" if row["graph"] else f"without CUDA graph (capture: {row.get('error', '')})")
