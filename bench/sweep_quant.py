"""The quantized population (issue #37: "every quantized model that onnxruntime's tool writes loads
and matches"): float models of ../shared/external quantized here by onnxruntime's own tool in
each of its common configurations, then run by dnnx and by onnxruntime on the CPU, each model in
a child process with a timeout. A row per (model, configuration): ok (the first output within
the tolerance below), mismatch, refused (dnnx raised), crashed or hung, and the relative error.

    python bench/sweep_quant.py [--models 'zoo/resnet18*' ...] [--configs qdq_u8s8_pc ...]
        [--timeout 300] [--jobs 2] [--out FILE]

Configurations (onnxruntime.quantization; static ones calibrated on 2 seeded batches of the
model's own inputs, MinMax):
  qdq_u8s8_pc    QDQ, uint8 activations, int8 weights per channel (quantize_static's defaults + per_channel)
  qdq_s8s8       QDQ, int8 activations (symmetric), int8 weights per tensor
  qdq_u8u8       QDQ, uint8 activations and weights (weights with zero points)
  qop_u8s8_pc    QOperator (QLinearConv, com.microsoft QLinear ops), int8 weights per channel
  qop_u8u8_rr    QOperator, uint8 weights per tensor, reduce_range
  dyn_s8         quantize_dynamic, int8 weights (MatMulInteger, DynamicQuantizeLinear, ConvInteger)
  dyn_u8         quantize_dynamic, uint8 weights
Which onnxruntime: a QDQ file means its graph's ONNX semantics, which onnxruntime computes with
its graph optimizations off (each QuantizeLinear and DequantizeLinear as written); with them on
(its default) it fuses the pairs into its own int8 kernels, whose outputs depart from its
unoptimized run by up to 17% of the largest output on some of these files (SqueezeNet 1.1,
MobileNetV3-Small; bench/RESULTS.md, session 13). A row is ok when dnnx is within the tolerance
of either run (where onnxruntime's two runs are two steps apart, as on ResNet-18 with int8
activations, dnnx can sit a step from each); both errors are reported, and onnxruntime's own gap.
Tolerance: the error relative to onnxruntime's largest output magnitude, at most 2 / 127: two
steps of an int8 output's quantization (a rounding tie taken the other way in one layer moves a
later one by a step; the last Q/DQ pair then shows it as one whole step of its own). A model onnxruntime's tool or onnxruntime itself cannot run is "skipped".
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import fnmatch
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

MODELS = ["zoo/resnet18.onnx", "zoo/mobilenet_v2.onnx", "zoo/squeezenet1_1.onnx", "zoo/efficientnet_b0.onnx",
          "zoo/mobilenet_v3_small.onnx", "zoo/shufflenet_v2_x1_0.onnx", "zoo/googlenet.onnx", "zoo/densenet121.onnx",
          "zoo/lstm_bi.onnx", "zoo2/bert.onnx", "zoo2/gpt2.onnx", "zoo2/vit_tiny_patch16_224_ts.onnx",
          "zoo2/speech_gru.onnx", "zoo2/crnn.onnx", "zoo2/conv_lstm_har.onnx", "zoo2/levit_128s.onnx",
          "models/mnist-8/model.onnx", "models/lenet5_mnist_b10.onnx"]
CONFIGS = ["qdq_u8s8_pc", "qdq_s8s8", "qdq_u8u8", "qop_u8s8_pc", "qop_u8u8_rr", "dyn_s8", "dyn_u8"]
TOLERANCE = 2.0 / 127.0


def quantize(src: Path, dst: Path, config: str, name: str) -> None:
    import numpy as np
    import onnx
    from onnxruntime import quantization as q

    import _external_models as ext

    model = onnx.load(str(src))
    if config.startswith("dyn"):
        q.quantize_dynamic(str(src), str(dst), weight_type=q.QuantType.QInt8 if config == "dyn_s8" else q.QuantType.QUInt8)
        return

    class Reader(q.CalibrationDataReader):
        def __init__(self):
            self.batches = [ext.make_inputs(name, model, b)[0] for b in (1, 2)]

        def get_next(self):
            return self.batches.pop() if self.batches else None

    fmt = q.QuantFormat.QDQ if config.startswith("qdq") else q.QuantFormat.QOperator
    act = q.QuantType.QInt8 if config == "qdq_s8s8" else q.QuantType.QUInt8
    weight = q.QuantType.QUInt8 if config in ("qdq_u8u8", "qop_u8u8_rr") else q.QuantType.QInt8
    extra = {"ActivationSymmetric": True} if config == "qdq_s8s8" else {}
    q.quantize_static(str(src), str(dst), Reader(), quant_format=fmt, activation_type=act, weight_type=weight,
                      per_channel=config.endswith("_pc"), reduce_range=config.endswith("_rr"), extra_options=extra)


def child(name: str, config: str) -> dict:
    """In a child process: quantize, run both engines, compare."""
    import numpy as np
    import onnx
    import onnxruntime as ort

    import _external_models as ext
    import dnnx

    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "float.onnx"
        onnx.save(ext.read_model(name), str(src))
        dst = Path(tmp) / "q.onnx"
        try:
            quantize(src, dst, config, name)
        except Exception as e:  # the tool's own limits
            return {"status": "skipped", "why": f"quantizer: {type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"}
        model = onnx.load(str(dst))
        feeds, _ = ext.make_inputs(name, model, 2 if ext.batch_dim(ext.declared_inputs(model)) else None)
        try:
            runs = []
            for level in (ort.GraphOptimizationLevel.ORT_DISABLE_ALL, ort.GraphOptimizationLevel.ORT_ENABLE_ALL):
                so = ort.SessionOptions()
                so.graph_optimization_level = level
                sess = ort.InferenceSession(str(dst), so, providers=["CPUExecutionProvider"])
                first = sess.get_outputs()[0].name
                runs.append(sess.run([first], feeds)[0])
            want, optimized = runs
        except Exception as e:
            return {"status": "skipped", "why": f"onnxruntime: {type(e).__name__}: {str(e).splitlines()[0][:160]}"}
        ops = sorted({f"{n.domain + '.' if n.domain else ''}{n.op_type}" for n in model.graph.node
                      if n.op_type.startswith(("QLinear", "Quantize", "Dequantize", "Dynamic", "MatMulInteger",
                                               "ConvInteger", "QGemm", "QAttention"))})
        try:
            got = dnnx.load(str(dst)).run_dict(feeds)[first]
        except Exception as e:
            return {"status": "refused", "why": f"{type(e).__name__}: {str(e).splitlines()[0][:200]}", "ops": ops}
        scale = float(np.max(np.abs(want))) or 1.0

        def rel(a, b):
            return float(np.max(np.abs(a.astype(np.float64) - b))) / scale if b.size else 0.0

        err, err_opt = rel(got, want), rel(got, optimized)
        return {"status": "ok" if min(err, err_opt) <= TOLERANCE else "mismatch", "err": err, "err_opt": err_opt,
                "ort_gap": rel(optimized, want), "ops": ops}


def run_one(name: str, config: str, timeout: float) -> dict:
    t0 = time.time()
    cmd = [sys.executable, __file__, "--child", name, config]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"model": name, "config": config, "status": "hung", "seconds": timeout}
    row = {"model": name, "config": config, "seconds": round(time.time() - t0, 1)}
    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
    if p.returncode != 0 or not lines:
        row.update(status="crashed", why=f"rc {p.returncode}: {p.stderr.strip().splitlines()[-1][:200] if p.stderr.strip() else ''}")
        return row
    row.update(json.loads(lines[-1]))
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--child", nargs=2)
    ap.add_argument("--models", nargs="*", default=[])
    ap.add_argument("--configs", nargs="*", default=CONFIGS)
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out")
    args = ap.parse_args()
    if args.child:
        os.environ.setdefault("OMP_NUM_THREADS", "1")
        print(json.dumps(child(*args.child)), flush=True)
        return 0
    import _external_models as ext

    models = [m for m in MODELS if (ext.EXTERNAL / m).exists() and (not args.models or any(fnmatch.fnmatch(m, p) for p in args.models))]
    jobs = [(m, c) for m in models for c in args.configs]
    rows = []
    with cf.ThreadPoolExecutor(args.jobs) as pool:
        for row in pool.map(lambda j: run_one(*j, args.timeout), jobs):
            rows.append(row)
            err = f"{row['err']:.4f} {row['err_opt']:.4f} {row['ort_gap']:.4f}" if "err" in row else ""
            print(f"{row['model']:40s} {row['config']:12s} {row['status']:9s} {err:22s} {row.get('why', '')[:150]}", flush=True)
    counts = {s: sum(r["status"] == s for r in rows) for s in ("ok", "mismatch", "refused", "crashed", "hung", "skipped")}
    summary = f"quantized population: {len(rows)} files, " + ", ".join(f"{v} {k}" for k, v in counts.items())
    print(summary)
    if args.out:
        lines = [f"# {summary}", "", "rel err: dnnx against onnxruntime unoptimized; opt: against onnxruntime's default "
                 "(optimized) run; ort gap: onnxruntime optimized against unoptimized.", "",
                 "| model | config | status | rel err | opt | ort gap | ops / why |", "| --- | --- | --- | ---: | ---: | ---: | --- |"]
        for r in rows:
            errs = f"{r['err']:.2g} | {r['err_opt']:.2g} | {r['ort_gap']:.2g}" if "err" in r else " | | "
            lines.append(f"| {r['model']} | {r['config']} | {r['status']} | {errs} | {r.get('why') or ', '.join(r.get('ops', []))} |")
        Path(args.out).write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
