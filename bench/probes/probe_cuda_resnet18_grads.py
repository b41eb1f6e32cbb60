"""ResNet-18 (../shared/external/zoo) trained whole: CUDA's gradients against the CPU's, per
parameter in graph order (relative L2 error, largest difference over the largest element), and
the tail's backward algorithms with their math: where along the ~20 layers the two backends part,
and whether any TF32 math ran in an fp32 plan. Run on the GPU machine with ../shared carried:
    python bench/probes/probe_cuda_resnet18_grads.py"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _external_models import read_model  # noqa: E402

import dnnx  # noqa: E402

model = read_model("zoo/resnet18.onnx")
x = np.random.default_rng(3).standard_normal((2, 3, 224, 224)).astype(np.float32)
labels = np.array([3, 7])
cpu_loss, want = dnnx.load(model).finetune(trainable="all", loss="cross_entropy").gradients(x, labels)
for search in ("heuristic", "auto"):
    tuner = dnnx.load(model, device="cuda", algo_search=search).finetune(trainable="all", loss="cross_entropy")
    loss, got = tuner.gradients(x, labels)
    print(f"== algo_search={search}: loss cuda {loss:.7g} cpu {cpu_loss:.7g}")
    order = [i.name for i in model.graph.initializer if i.name in want]
    for name in order:
        g, w = np.asarray(got[name], np.float64), np.asarray(want[name], np.float64)
        rel = np.linalg.norm(g - w) / max(np.linalg.norm(w), 1e-30)
        worst = np.abs(g - w).max() / max(np.abs(w).max(), 1e-30)
        print(f"{name:28s} {str(w.shape):20s} rel L2 {rel:.2e}  max diff / max {worst:.2e}")
    for r in tuner.plan():
        if r["op"].startswith("Conv") or "tf32" in (r["math"] or "").lower():
            print(f"  {r['name']:24s} {r['stage']:8s} {r['algorithm'][:90]} | {r['math']}")
