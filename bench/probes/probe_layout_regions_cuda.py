"""Issue #38 probe: where the channels-last regions pay at tf32 and fp16, and where their layout
conversions cost more than they save (DenseNet-121 at tf32: 122 layout gathers, 6.6 ms of 22 ms of
device time, session 12). Per model, in child processes of their own, batch 64 by default: the run
time (device arrays, CUDA graph replays, median) at fp32, and at tf32 and fp16 each with the
channels_last pass on (the default) and off, with the plan's layout conversions counted (layers
whose op is Transpose or Transpose+Pad, and the layers planned channels-last, "@NHWC"). Configs
"tf32 measured" and "fp16 measured" load as a user does (Note [measured layout]: the plan timed
against its ONNX-layout twin where conversions cut it): their cells add the layout kept and the
load's layout_choice seconds.

    python3 bench/probes/probe_layout_regions_cuda.py [--batch 64] [--budget 400] [--runs 30]
        [--configs "tf32 measured,fp16 measured"] [model ...]
"""
import argparse
import sys
import time

from _child_cases import add_case_arguments, run_child

DEFAULT_MODELS = [
    "zoo/densenet121.onnx", "zoo/mobilenet_v2.onnx", "zoo/efficientnet_b0.onnx", "zoo/mobilenet_v3_small.onnx",
    "zoo/shufflenet_v2_x1_0.onnx", "zoo/resnet18.onnx", "zoo/googlenet.onnx", "zoo/squeezenet1_1.onnx",
    "zoo/convnext_tiny.onnx", "zoo2/rexnet_100.onnx", "zoo2/resnet50d.onnx", "zoo2/mobilevit_xxs.onnx",
]
CONFIGS = ["fp32 nhwc", "tf32 nhwc", "tf32 nchw", "fp16 nhwc", "fp16 nchw", "tf32 measured", "fp16 measured"]

CHILD = r"""
import json, sys, warnings
import numpy as np
sys.path.insert(0, "bench")
import dnnx
from _external_models import EXTERNAL, make_inputs, read_model
from _timing import time_calls
warnings.simplefilter("ignore")
name, precision, layout, batch, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
model = read_model(name, EXTERNAL)
feeds, _ = make_inputs(name, model, batch)
fixed = {} if layout == "measured" else {"passes": {"channels_last": layout == "nhwc"}, "measure_layout": False}
m = dnnx.load(model, device="cuda", precision=precision, batch_size=batch, plan_cache=False, **fixed)
rows = m.plan()
conversions = sum(1 for r in rows if r["op"].startswith("Transpose"))
nhwc = sum(1 for r in rows if "@NHWC" in r["op"])
dev = {k: m.to_device(v) for k, v in feeds.items()}
# a run returns once it is done (as bench/_speed_dnnx_worker.py times it)
times = time_calls(lambda: m.run_dict(dev, output="device"), 5, runs)
print(json.dumps({"ms": 1e3 * float(np.median(times)), "layers": len(rows), "conversions": conversions, "nhwc": nhwc,
                  "layout_s": m.load_profile().get("layout_choice"), "kept": "nhwc" if m.passes["channels_last"] else "nchw"}))
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_case_arguments(ap, DEFAULT_MODELS, runs=30, budget=400)
    ap.add_argument("--configs", default=",".join(CONFIGS), help="comma-separated, of: " + ", ".join(CONFIGS))
    args = ap.parse_args()
    configs = [c.strip().split() for c in args.configs.split(",") if c.strip()]
    end = time.time() + args.budget
    print(f"batch {args.batch}, median of {args.runs} runs (device arrays); cells: ms (layout conversions / "
          f"layers channels-last)")
    print("| model | " + " | ".join(f"{p} {layout}" for p, layout in configs) + " |")
    print("| --- |" + " ---: |" * len(configs))
    for name in args.models:
        cells = []
        for precision, layout in configs:
            if time.time() > end:
                cells.append("not run")
                continue
            d, why = run_child(CHILD, [name, precision, layout, args.batch, args.runs], args.timeout)
            if why:
                cells.append(why)
                continue
            chosen = "" if layout != "measured" else \
                f" {d['kept']}" + (f", timed {d['layout_s']:.2f} s" if d["layout_s"] is not None else ", untimed")
            cells.append(f"{d['ms']:.2f} ({d['conversions']}/{d['nhwc']}{chosen})")
        print(f"| {name} | " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
