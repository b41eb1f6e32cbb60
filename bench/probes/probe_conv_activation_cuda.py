"""Issue #38 probe: the conv activations fused on CUDA (Note [conv activations on cuda]: Conv+Swish,
Conv+HardSwish, Conv+Clip as the conv and one in-place pass) against the same models with the
fuse_conv_activation pass off (CUDA's unfused Sigmoid and Mul, HardSwish, Clip), in the same call.
Per model and precision, each load in a child process of its own: batch 64 by default, device
arrays, CUDA graph replays, the median run time, and the plan's fused layers.

    python3 bench/probes/probe_conv_activation_cuda.py [--batch 64] [--runs 20] [--budget 300] [model ...]
"""
import argparse
import sys
import time

from _child_cases import add_case_arguments, run_child

DEFAULT_MODELS = ["zoo/efficientnet_b0.onnx", "zoo/mobilenet_v3_small.onnx", "zoo/mobilenet_v2.onnx",
                  "zoo2/rexnet_100.onnx", "zoo2/mobilevit_xxs.onnx"]
PRECISIONS = ["fp32", "tf32", "fp16"]

CHILD = r"""
import json, os, sys, warnings
import numpy as np
sys.path.insert(0, "bench")
import dnnx
from _external_models import EXTERNAL, make_inputs, read_model
from _timing import time_calls
warnings.simplefilter("ignore")
name, precision, fused, batch, runs = sys.argv[1], sys.argv[2], sys.argv[3] == "1", int(sys.argv[4]), int(sys.argv[5])
os.environ["DNNX_PROBE_CUDA_CONV_ACTIVATION"] = "1" if fused else "0"  # the kernels' switch (conv_activation.h)
model = read_model(name, EXTERNAL)
feeds, _ = make_inputs(name, model, batch)
m = dnnx.load(model, device="cuda", precision=precision, batch_size=batch, plan_cache=False,
              passes={"fuse_conv_activation": fused})
activations = sum(1 for r in m.plan() if r["op"].split("@")[0] in ("Conv+Swish", "Conv+HardSwish", "Conv+Clip"))
dev = {k: m.to_device(v) for k, v in feeds.items()}
# a run returns once it is done (as bench/_speed_dnnx_worker.py times it)
times = time_calls(lambda: m.run_dict(dev, output="device"), 5, runs)
print(json.dumps({"ms": 1e3 * float(np.median(times)), "fused": activations}))
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_case_arguments(ap, DEFAULT_MODELS, runs=20, budget=300)
    args = ap.parse_args()
    end = time.time() + args.budget
    print(f"batch {args.batch}, median of {args.runs} runs (device arrays); cells: unfused ms / fused ms "
          f"(fused conv layers)")
    print("| model | " + " | ".join(PRECISIONS) + " |")
    print("| --- |" + " ---: |" * len(PRECISIONS))
    for name in args.models:
        cells = []
        for precision in PRECISIONS:
            got = []
            for fused in ("0", "1"):
                if time.time() > end:
                    got.append("not run")
                    continue
                d, why = run_child(CHILD, [name, precision, fused, args.batch, args.runs], args.timeout)
                got.append(why or f"{d['ms']:.2f}" + (f" ({d['fused']})" if fused == "1" else ""))
            cells.append(" / ".join(got))
        print(f"| {name} | " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
