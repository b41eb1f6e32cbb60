"""ResNet-50 in int8 on CUDA (issue #37's GPU bench row): bench/resnet50.py's model (seeded
weights) quantized by dnnx.quantize (per-channel int8 weights, uint8 activations, minmax over
--calibration seeded standard-normal images, the accuracy guard at its default), then timed by the
CUDA speed sweep's children (bench/sweep_cuda_speed.py: each engine in processes of its own,
inputs and outputs on the GPU, medians) at --batches:

- the QDQ file at fp32: dnnx's fused int8 layers on int8 tensor cores (Note [int8 on tensor
  cores]), the layers the guard kept float at fp32, beside onnxruntime-gpu on the same file;
- the QDQ file at fp16: the same int8 layers, the float layers in half (onnxruntime's float16
  converter on a QDQ file: its row says whether it runs);
- the float model at fp32 and fp16, beside onnxruntime-gpu: dnnx fp16 is the issue's yardstick
  (int8 at batch 256 <= 0.5x dnnx's fp16, and <= 0.5x onnxruntime-gpu on the same QDQ file).

    python bench/bench_cuda_int8.py [--batches 1,256] [--calibration 16] [--qdq FILE] [--out FILE]
    ORT_GPU_PATH=/tmp/carried python bench/bench_cuda_int8.py --out int8.md   (the onnxruntime rows)

--qdq FILE: a QDQ file made before (e.g. here, by this script with --write-qdq FILE and no GPU),
so that the GPU call does not spend its time calibrating; it must come from the same float model
(bench/resnet50.py, seed 0). The sweep's sanity column compares dnnx's first output with
onnxruntime's on the same file and precision.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def quantized(float_path: Path, out: Path, samples: int) -> None:
    import dnnx

    calibration = np.random.default_rng(0).standard_normal((samples, 3, 224, 224)).astype(np.float32)
    start = time.perf_counter()
    report = dnnx.quantize(str(float_path), str(out), calibration=calibration, show_progress=False)
    joins = [row for row in report.layers if row.op == "Add"]  # residual joins: Note [int8 residual join]
    layers = [row for row in report.layers if row.op != "Add"]
    print(f"dnnx.quantize: {time.perf_counter() - start:.1f} s, {sum(r.precision == 'int8' for r in layers)} of "
          f"{len(layers)} layers and {sum(r.precision == 'int8' for r in joins)} of {len(joins)} residual joins in "
          f"int8 ({samples} calibration images)", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batches", default="1,256")
    parser.add_argument("--calibration", type=int, default=16, help="seeded calibration images")
    parser.add_argument("--qdq", help="a QDQ file of bench/resnet50.py's model made before")
    parser.add_argument("--write-qdq", help="only write the QDQ file here (no timing, no GPU)")
    parser.add_argument("--budget", type=float, default=300, help="the sweep's seconds in all")
    parser.add_argument("--seconds-per-case", type=float, default=0.5)
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"), help="cpu: a dry run of the flow")
    parser.add_argument("--out", help="the markdown section (replacing the file)")
    args = parser.parse_args()
    from resnet50 import build_resnet50

    with tempfile.TemporaryDirectory(prefix="int8-bench-") as tmp:
        float_path = Path(tmp) / "resnet50_float.onnx"
        onnx.save(build_resnet50(seed=0), str(float_path))
        if args.write_qdq:
            quantized(float_path, Path(args.write_qdq), args.calibration)
            return 0
        qdq_path = Path(args.qdq) if args.qdq else Path(tmp) / "resnet50_int8_qdq.onnx"
        if not args.qdq:
            quantized(float_path, qdq_path, args.calibration)
        command = [sys.executable, str(HERE / "sweep_cuda_speed.py"), "--models", str(qdq_path), str(float_path),
                   "--batches", args.batches, "--precisions", "fp32,fp16", "--budget", str(args.budget),
                   "--seconds-per-case", str(args.seconds_per_case), "--profile-worst", "0", "--device", args.device]
        if args.out:
            command += ["--out", args.out]
        print("$ " + " ".join(command), flush=True)
        return subprocess.call(command, env=os.environ.copy())


if __name__ == "__main__":
    sys.exit(main())
