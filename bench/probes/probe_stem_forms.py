"""ResNet-50's stem conv (7x7, stride 2, 64 filters, batch 256, 224x224 input) in other forms, channels-last
at fp16, bf16 and tf32: what would make it cheaper (Note [padded channels] pads its 3 channels to 8;
cuDNN's legacy API then takes ~1.4 ms at fp16, PyTorch ~0.4 ms). Each model is the conv + Relu, then
a 1x1 conv 64 -> 64 (so that tf32's region is wide, Note [narrow regions]); per form, precision and
search: the conv layer's GPU ms (Model.profile, replayed graph) and its algorithm.
  stem3     the model's form: 3 channels (padded to 8 or 4 by dnnx)
  stem16    the same conv with 16 input channels
  s2d12     space-to-depth: the 2x2 blocks of the padded 230x230 input as 12 channels of 115x115, a
            4x4 stride-1 conv (the same sums with the filter rearranged; padded to 16 by dnnx)
  s2d16     the same with 16 input channels

    python bench/probes/probe_stem_forms.py
"""
import sys
from pathlib import Path

import numpy as np
from onnx import helper

import dnnx

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))  # the checkout's tests/, for ort_check
from ort_check import make_model  # noqa: E402

BATCH = 256
rng = np.random.default_rng(0)


def model(channels, kernel, stride, pads, size):
    w = (rng.standard_normal((64, channels, kernel, kernel)) / 12).astype(np.float32)
    w2 = (rng.standard_normal((64, 64, 1, 1)) / 8).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="stem", strides=[stride, stride], pads=[pads] * 4),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("Conv", ["r", "w2"], ["y"], name="pointwise")]
    return make_model(nodes, [("x", [BATCH, channels, size, size])], [("y", None)], {"w": w, "w2": w2})


FORMS = {"stem3": (3, 7, 2, 3, 224), "stem16": (16, 7, 2, 3, 224), "s2d12": (12, 4, 1, 0, 115),
         "s2d16": (16, 4, 1, 0, 115)}
for precision in ("fp16", "bf16", "tf32"):
    for name, dims in FORMS.items():
        m_onnx = model(*dims)
        x = rng.standard_normal((BATCH, dims[0], dims[4], dims[4])).astype(np.float32)
        for search in ("heuristic", "exhaustive"):
            m = dnnx.load(m_onnx, device="cuda", precision=precision, algo_search=search, measure_precision=False,
                          plan_cache=False)
            rows = {r.name: r for r in m.profile(x, repeat=10)}
            plan = {r["name"]: r for r in m.plan()}
            pre = sum(r.median_ms for n, r in rows.items() if n not in ("stem", "pointwise"))
            print(f"STEMFORM {precision} {name} {search}: stem {rows['stem'].median_ms:.3f} ms "
                  f"[{plan['stem']['op']}: {plan['stem']['algorithm'][:60]}]; edges {pre:.3f} ms", flush=True)
            m = None
