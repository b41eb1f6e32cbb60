"""The ResNet stem's pieces channels-last at batch 256: conv 7x7/2 (3->64) + relu, max pool 3x3/2,
and the fused pair; per precision and search: plan algorithm and profiled GPU ms."""
import numpy as np
import dnnx
from onnx import helper
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests"))  # the checkout's tests/, for ort_check
from ort_check import make_model  # noqa: E402

rng = np.random.default_rng(0)
w = (rng.standard_normal((64, 3, 7, 7)) / 12).astype(np.float32)
b = rng.standard_normal(64).astype(np.float32)
conv = helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", strides=[2, 2], pads=[3, 3, 3, 3])
relu = helper.make_node("Relu", ["c"], ["r"], name="relu")
pool = helper.make_node("MaxPool", ["r"], ["y"], name="pool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
stem = make_model([conv, relu, pool], [("x", [256, 3, 224, 224])], [("y", None)], {"w": w, "b": b})
conv_only = make_model([conv, relu], [("x", [256, 3, 224, 224])], [("r", None)], {"w": w, "b": b})
pool_only = make_model([helper.make_node("MaxPool", ["x"], ["y"], name="pool", kernel_shape=[3, 3], strides=[2, 2],
                                         pads=[1, 1, 1, 1])], [("x", [256, 64, 112, 112])], [("y", None)])
for precision in ("tf32", "fp16"):
    for search in ("heuristic", "exhaustive"):
        for name, model, shape in (("stem", stem, (256, 3, 224, 224)), ("conv", conv_only, (256, 3, 224, 224)),
                                   ("pool", pool_only, (256, 64, 112, 112))):
            m = dnnx.load(model, device="cuda", precision=precision, algo_search=search, plan_cache=False)
            x = rng.standard_normal(shape).astype(np.float32)
            rows = m.profile(x, repeat=10)
            plan = {r["name"]: r for r in m.plan()}
            parts = "; ".join(f"{r.name} {r.op} {r.median_ms:.3f} ms [{plan[r.name]['algorithm'][:70]}]" for r in rows)
            print(f"STEM {precision} {search} {name}: {parts}", flush=True)
