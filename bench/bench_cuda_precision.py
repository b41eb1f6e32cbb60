"""dnnx's precisions on CUDA (fp32, tf32, fp16, bf16) against PyTorch's and onnxruntime-gpu's on
the same GPU: LeNet (dnnx.examples) at batch 1 and 1024; prints a markdown section (and writes it
to --out). The issue's target: a reduced precision is never slower than fp32.

    python bench/bench_cuda_precision.py [--batches 1,1024] [--iters K] [--warmup W] [--out FILE]

Every row has its input and output on the GPU and runs with CUDA graphs; times are wall-clock
medians over K calls after W warm-up calls, each call complete when it returns (bench/_timing.py):
- dnnx: dnnx.load(path, device="cuda", batch_size=b, precision=p) for p in fp32 (no TF32), tf32,
  fp16 and bf16 (half storage, tensor ops, fp32 accumulation; the float32 input and output
  converted on the GPU inside the run); fp16 and bf16 also with measure_precision=False (by
  default the engine times each segment of half layers against fp32 at load and keeps fp32 where
  that is faster; False forces half storage everywhere). Timed: model.run(x_dev, output="device")
  on x_dev = model.to_device(x), one CUDA graph replay. Per row also the plan's count of half and
  fp32 layers and the load's "precision_choice" seconds (load_profile()).
- PyTorch (its own process, `--worker torch`: it loads its own cuDNN, and only one libcudnn.so.9
  can live in a process): the same LeNet built as bench/bench_cuda.py builds it (functional ops on
  the ONNX initialisers), cudnn.benchmark = True; fp32 (TF32 off), tf32 (TF32 on for cuDNN and
  matmul), fp16 and bf16 (weights and input converted before timing, so these rows exclude the
  input and output conversions that dnnx's include); one CUDA graph replay + synchronize.
- onnxruntime-gpu (its own process, `--worker ort`, the same reason; ORT_GPU_PATH, where the
  carried onnxruntime-gpu lies (../shared/GPU.md), is put first on sys.path): the CUDA execution
  provider with enable_cuda_graph=1, cudnn_conv_algo_search=EXHAUSTIVE and use_tf32 0 (fp32) or
  1 (tf32); IO binding of an input OrtValue on the GPU and a preallocated output OrtValue there,
  session.run_with_iobinding + synchronize_outputs (bench/_ort_worker.py). fp16: the model
  converted by onnxruntime's own converter (float32 input and output kept, as dnnx's), NCHW and
  with prefer_nhwc=1. Without onnxruntime-gpu (or its CUDA provider) its rows say why.
Correctness: the max abs diff of each row's output (read back after the timed replays) against
dnnx fp32's at the same batch.
"""
from __future__ import annotations

import argparse
import json
import shlex
import sys
import tempfile
import time
import traceback
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import median_us, time_calls  # noqa: E402
from _ort_worker import ort_case, ort_cell, ort_worker, run_ort_worker, short_error  # noqa: E402
from _torch_worker import add_worker_arguments, machine_lines, run_torch_worker, torch_lenet  # noqa: E402

# (row label, dnnx.load options beyond device and batch_size)
DNNX_CASES = (
    ("fp32", {"precision": "fp32"}),
    ("tf32", {"precision": "tf32"}),
    ("fp16", {"precision": "fp16"}),
    ("fp16, measure_precision=False", {"precision": "fp16", "measure_precision": False}),
    ("bf16", {"precision": "bf16"}),
    ("bf16, measure_precision=False", {"precision": "bf16", "measure_precision": False}),
)
# (row label, TF32 on, torch dtype name)
TORCH_CASES = (("fp32", False, "float32"), ("tf32", True, "float32"), ("fp16", True, "float16"),
               ("bf16", True, "bfloat16"))
# (row label, _ort_worker.ort_case options)
ORT_CASES = (("fp32", {"use_tf32": 0}), ("tf32", {"use_tf32": 1}), ("fp16", {"use_tf32": 1, "fp16": True}),
             ("fp16 NHWC", {"use_tf32": 1, "fp16": True, "nhwc": True}))
# the target, checked per batch on the default rows (measure_precision on)
TARGET_ROWS = ("fp16", "bf16", "tf32")


def inputs_for(batch: int) -> np.ndarray:
    return np.random.default_rng(batch).standard_normal((batch, 1, 28, 28)).astype(np.float32)


# --- the PyTorch worker (its own process) ------------------------------------------------------
def torch_worker(model_path: str, out_dir: str, batches: list, warmup: int, iters: int) -> None:
    import torch

    torch.backends.cudnn.benchmark = True
    w32 = {t.name: torch.from_numpy(numpy_helper.to_array(t).copy()).cuda()
           for t in onnx.load(model_path).graph.initializer}

    lenet = torch_lenet  # bench_cuda.py's LeNet, on the weights w

    results = {"torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
               "gpu": torch.cuda.get_device_name(0), "cases": {}}
    with torch.inference_mode():
        for batch in batches:
            cases = results["cases"][str(batch)] = {}
            for name, tf32, dtype_name in TORCH_CASES:
                try:
                    # set before the warm-up and capture: the captured kernels keep the math chosen then
                    torch.backends.cudnn.allow_tf32 = tf32
                    torch.backends.cuda.matmul.allow_tf32 = tf32
                    dtype = getattr(torch, dtype_name)
                    w = {k: v.to(dtype) for k, v in w32.items()}  # what model.half() / .to(bf16) does
                    static_x = torch.from_numpy(inputs_for(batch)).cuda().to(dtype)
                    # warm up on a side stream (cudnn.benchmark picks its algorithms here), then capture
                    stream = torch.cuda.Stream()
                    stream.wait_stream(torch.cuda.current_stream())
                    with torch.cuda.stream(stream):
                        for _ in range(3):
                            lenet(static_x, w)
                    torch.cuda.current_stream().wait_stream(stream)
                    graph = torch.cuda.CUDAGraph()
                    with torch.cuda.graph(graph):
                        static_out = lenet(static_x, w)

                    def replay():
                        graph.replay()
                        torch.cuda.synchronize()

                    cases[name] = {"seconds": time_calls(replay, warmup, iters)}
                    np.save(Path(out_dir) / f"torch_{batch}_{name}.npy", static_out.float().cpu().numpy())
                    del graph, static_out, static_x, w
                except Exception as e:  # one failed case must not lose the others
                    traceback.print_exc()
                    cases[name] = {"error": short_error(e)}
    (Path(out_dir) / "torch.json").write_text(json.dumps(results))


# --- the onnxruntime-gpu worker (its own process: bench/_ort_worker.py) -----------------------
def ort_cases(model_path: str, batches: list) -> list:
    return [ort_case(f"{batch} {name}", model_path, inputs_for(batch), (batch, 10), **options)
            for batch in batches for name, options in ORT_CASES]


# --- dnnx and the report (the main process: never imports torch or onnxruntime) ----------------
def layer_counts(plan) -> tuple:
    """(half, fp32, conversions) among the plan's rows: "fp16 ..."/"bf16 ..." math is half storage,
    "float32 -> float16 ..." the converts at a half segment's edges, everything else fp32."""
    maths = [r.get("math") or "" for r in plan]
    half = sum(m.startswith(("fp16", "bf16")) for m in maths)
    convert = sum(" -> " in m for m in maths)
    return half, len(maths) - half - convert, convert


# The dnnx rows are timed in ROUNDS alternating rounds (each model iters/ROUNDS calls per round,
# medians over all of them): a near tie such as fp16-kept-in-fp32 against fp32 (the same kernels)
# is then not decided by which row ran while the GPU clocks drifted.
ROUNDS = 5


def time_dnnx(model_path: str, batch: int, warmup: int, iters: int) -> dict:
    """{row label: {"seconds", "out", "layers", "choice_s"} or {"error"}} for DNNX_CASES."""
    import dnnx

    x = inputs_for(batch)
    rows, runs = {}, {}
    for label, options in DNNX_CASES:
        try:
            model = dnnx.load(model_path, device="cuda", batch_size=batch, **options)
            x_dev = model.to_device(x)
            runs[label] = (lambda m=model, xd=x_dev: m.run(xd, output="device"))
            time_calls(runs[label], warmup, 0)
            rows[label] = {"seconds": [], "out": runs[label]().numpy(),  # a replay, as timed
                           "layers": layer_counts(model.plan(batch_size=batch)),
                           "choice_s": model.load_profile().get("precision_choice")}
        except Exception as e:  # a new precision that fails must not lose the other rows
            traceback.print_exc()
            rows[label] = {"error": short_error(e)}
            runs.pop(label, None)
    for _ in range(ROUNDS):
        for label, run in runs.items():
            rows[label]["seconds"] += time_calls(run, 2, max(1, iters // ROUNDS))
    return rows


def diff_cell(out, ref) -> str:
    if ref is None:
        return "no dnnx fp32 reference"
    if out is None:
        return ""
    if out.shape != ref.shape:
        return f"shape {out.shape} vs {ref.shape}"
    return f"{float(np.max(np.abs(out.astype(np.float32) - ref))):.2g}"


def table_rows(batch: int, dnnx_rows: dict, torch_cases: dict, ort_results: dict, tmp: Path) -> list:
    """(batch, engine, precision, µs or error, layers cell, choice cell, output) per row."""
    rows = []
    for label, r in dnnx_rows.items():
        layers = choice = ""
        if "layers" in r:
            half, fp32, convert = r["layers"]
            layers = f"{half} / {fp32}" + (f" (+{convert} conversions)" if convert else "")
            choice = "" if r["choice_s"] is None else f"{r['choice_s']:.2f}"
        rows.append(("dnnx", label, r, layers, choice, r.get("out")))
    for name, _, _ in TORCH_CASES:
        r = torch_cases.get(name, {"error": "not run"})
        rows.append(("torch", name, r, "", "", saved_output(r, tmp / f"torch_{batch}_{name}.npy")))
    for name, _ in ORT_CASES:
        seconds, note = ort_cell(ort_results, f"{batch} {name}")
        r = {"error": note} if seconds is None else {"seconds": seconds}
        label = name if not note or seconds is None else f"{name}, {note}"
        rows.append(("onnxruntime-gpu", label, r, "", "", ort_results["cases"].get(f"{batch} {name}", {}).get("out")))
    return rows


def saved_output(row: dict, path: Path):
    """A worker's output for a row that ran (the worker saves it after timing), else None."""
    return np.load(path) if "seconds" in row and path.exists() else None


def target_line(batch: int, dnnx_rows: dict) -> str:
    ref = dnnx_rows["fp32"]
    parts = []
    for p in TARGET_ROWS:
        r = dnnx_rows[p]
        if "seconds" not in r or "seconds" not in ref:
            parts.append(f"dnnx {p} <= dnnx fp32: n/a ({r.get('error') or ref.get('error')})")
            continue
        ours, base = median_us(r["seconds"]), median_us(ref["seconds"])
        verdict = "holds" if ours <= base else "does NOT hold"
        # A row whose plan stores nothing in half runs the fp32 plan's kernels: a miss there is the
        # run-to-run spread of one plan (0.99-1.03x on an H200), which the reader should see.
        same = ", the fp32 plan's kernels (0 half layers)" if r["layers"][0] == 0 else ""
        parts.append(f"dnnx {p} <= dnnx fp32: {verdict} ({ours:.1f} vs {base:.1f} us, {ours / base:.2f}x{same})")
    return f"- targets, batch {batch}: " + "; ".join(parts)


def report(batches, dnnx_all, torch_results, ort_results, tmp, status, command, warmup, iters) -> str:
    ort_line = ort_results.get("version") or f"not available: {ort_results.get('error')}"
    lines = [
        "# Precision on CUDA: LeNet, dnnx vs PyTorch and onnxruntime-gpu",
        "",
        *machine_lines(torch_results, status, ", in its own process, cudnn.benchmark = True"),
        f"- onnxruntime-gpu: {ort_line}, in its own process",
        f"- command: `{command}`",
        f"- method: wall-clock median of {iters} calls after {warmup} warm-up calls (dnnx rows: in {ROUNDS} alternating rounds), input and output on the "
        "GPU, CUDA graphs on, each call complete when it returns (dnnx: run(x_dev, output=\"device\"); torch: "
        "graph replay + synchronize; onnxruntime: run_with_iobinding + synchronize_outputs); same weights and "
        "seeded inputs (see bench/bench_cuda_precision.py)",
        "- dnnx: default (heuristic) algorithm choice; fp16/bf16 take the float32 input and give the float32 "
        "output, converted on the GPU inside the timed run (torch's half rows are converted before timing); "
        "fp16/bf16 with measure_precision (the default) keep fp32 where the load measured it faster",
        "- torch: cudnn.benchmark = True; onnxruntime: CUDA provider, enable_cuda_graph=1, "
        "cudnn_conv_algo_search=EXHAUSTIVE, use_tf32 0/1; its fp16 rows run the model as "
        "onnxruntime.transformers.float16 converts it (float32 input and output kept), NCHW and prefer_nhwc=1",
        "- half / fp32 layers: the plan's rows with fp16/bf16 math against the rest (the float32<->half "
        "conversions counted apart); precision choice s: load_profile()['precision_choice']",
        *[target_line(b, dnnx_all[b]) for b in batches],
        "",
        "| batch | engine | precision | µs per call | vs dnnx fp32 | half / fp32 layers | precision choice s | "
        "max abs diff vs dnnx fp32 |",
        "| ---: | --- | --- | ---: | ---: | --- | ---: | ---: |",
    ]
    for batch in batches:
        ref_row = dnnx_all[batch]["fp32"]
        ref_out = ref_row.get("out")
        base = median_us(ref_row["seconds"]) if "seconds" in ref_row else None
        for engine, label, r, layers, choice, out in table_rows(batch, dnnx_all[batch],
                                                                torch_results["cases"].get(str(batch), {}),
                                                                ort_results, tmp):
            if "seconds" in r:
                us = median_us(r["seconds"])
                time_cell, ratio = f"{us:.1f}", (f"{us / base:.2f}" if base else "")
            else:
                time_cell, ratio = str(r.get("error", "?")).replace("|", "/"), ""  # one cell
            lines.append(f"| {batch} | {engine} | {label} | {time_cell} | {ratio} | {layers} | {choice} | "
                         f"{diff_cell(out, ref_out)} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batches", default="1,1024", help="comma-separated batch sizes (default 1,1024)")
    parser.add_argument("--iters", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--out", help="also write the markdown section to this file (replacing it)")
    add_worker_arguments(parser, "--model", "--dir")
    args = parser.parse_args()
    batches = [int(b) for b in args.batches.split(",") if b.strip()]
    if args.worker == "torch":
        torch_worker(args.model, args.dir, batches, args.warmup, args.iters)
        return 0
    if args.worker == "ort":
        ort_worker(args.dir, ort_cases(args.model, batches), args.warmup, args.iters)
        return 0

    import dnnx
    from dnnx.examples import build

    with tempfile.TemporaryDirectory() as tmp:
        model_path = str(Path(tmp) / "lenet.onnx")
        onnx.save(build("lenet", seed=0), model_path)
        worker_args = ("--model", model_path, "--batches", ",".join(map(str, batches)),
                       "--warmup", str(args.warmup), "--iters", str(args.iters))
        start = time.perf_counter()
        run_torch_worker(__file__, "--dir", tmp, *worker_args)
        ort_results = run_ort_worker(__file__, tmp, *worker_args)
        print(f"workers done in {time.perf_counter() - start:.0f} s", file=sys.stderr)
        torch_results = json.loads((Path(tmp) / "torch.json").read_text())
        dnnx_all = {batch: time_dnnx(model_path, batch, args.warmup, args.iters) for batch in batches}
        text = report(batches, dnnx_all, torch_results, ort_results, Path(tmp), dnnx.cuda_status(),
                      shlex.join(["python", *sys.argv]), args.warmup, args.iters)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
