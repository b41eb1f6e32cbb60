"""Where two engines part on one model: every node output made a graph output, the model run by
dnnx and by onnxruntime (graph optimizations off, so that every value is the file's own), and the
first nodes whose outputs differ listed with how far and in how many elements. Used on the
quantized population (bench/sweep_quant.py): the transformers' int8 outputs part from
onnxruntime's after float ops that differ in the last bit (LayerNormalization, Tanh) move a few
elements across a QuantizeLinear's rounding tie.

    DNNX_DEV_BUILD=build/dev PYTHONPATH=python python bench/probes/probe_first_difference.py \\
        zoo2/gpt2.onnx [--quantize qop_u8s8_pc] [--batch 2] [--show 12] [--min-rel 1e-3]

--quantize CONFIG: first quantize the float model as bench/sweep_quant.py does (its CONFIGS).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import _external_models as ext  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("--quantize")
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--show", type=int, default=12)
    ap.add_argument("--min-rel", type=float, default=0.0,
                    help="list only outputs whose largest difference exceeds this share of their largest |value|")
    args = ap.parse_args()
    import onnx
    import onnxruntime as ort
    from onnx import shape_inference

    import dnnx

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.onnx"
        onnx.save(ext.read_model(args.model), str(path))
        if args.quantize:
            import sweep_quant

            quantized = Path(tmp) / "quantized.onnx"
            sweep_quant.quantize(path, quantized, args.quantize, args.model)
            path = quantized
        model = shape_inference.infer_shapes(onnx.load(str(path)))
    feeds, _ = ext.make_inputs(args.model, model, args.batch if ext.batch_dim(ext.declared_inputs(model)) else None)
    typed = {vi.name: vi for vi in list(model.graph.value_info)}
    outputs = {o.name for o in model.graph.output}
    model.graph.output.extend(typed[o] for n in model.graph.node for o in n.output if o in typed and o not in outputs)
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    want = dict(zip(names, sess.run(names, feeds)))
    got = dnnx.load(model).run_dict(feeds)
    shown = 0
    for node in model.graph.node:
        for name in node.output:
            if name not in want or name not in got or shown >= args.show:
                continue
            a, b = got[name].astype(np.float64), want[name].astype(np.float64)
            if a.shape != b.shape:
                print(f"{node.op_type:24s} {name[:60]:60s} shapes {a.shape} / {b.shape}")
                shown += 1
                continue
            d = np.abs(a - b)
            if d.size and d.max() > args.min_rel * max(np.abs(b).max(), np.finfo(np.float32).tiny):
                print(f"{node.op_type:24s} {name[:60]:60s} max diff {d.max():.3g} in {(d > 0).sum()} of {d.size} "
                      f"(largest |value| {np.abs(b).max():.3g})")
                shown += 1
    if shown == 0:
        print("every node output the same")
    return 0


if __name__ == "__main__":
    sys.exit(main())
