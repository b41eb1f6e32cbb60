"""Issue #38 probe: one load-time pass on and off on CUDA, in the same call (e.g. fuse_batchnorm_relu
on DenseNet-121: its pre-activation BatchNormalization and Relu as one layer). Per model, precision
and switch, each load in a child process of its own: batch 64 by default, device arrays, CUDA graph
replays, the median run time, and how many plan layers have an op containing one of --op.

    python3 bench/probes/probe_pass_cuda.py --pass fuse_batchnorm_relu --op BatchNormalization+Relu \
        [--precisions fp32 tf32 fp16] [--batch 64] [--runs 20] [--budget 300] [--on-only] [model ...]
    # the conv activations (session 16's probe_conv_activation_cuda.py):
    python3 bench/probes/probe_pass_cuda.py --pass fuse_conv_activation --op Conv+Swish,Conv+HardSwish,Conv+Clip \
        zoo/efficientnet_b0.onnx zoo/mobilenet_v3_small.onnx zoo/mobilenet_v2.onnx zoo2/rexnet_100.onnx zoo2/mobilevit_xxs.onnx

--on-only times the default plans alone (one load per cell): the models' times at each precision.
"""
import argparse
import sys
import time

from _child_cases import add_case_arguments, run_child

CHILD = r"""
import json, sys, warnings
import numpy as np
sys.path.insert(0, "bench")
import dnnx
from _external_models import EXTERNAL, make_inputs, read_model
from _timing import time_calls
warnings.simplefilter("ignore")
name, precision, pass_name, on, ops, batch, runs = sys.argv[1:6] + [int(sys.argv[6]), int(sys.argv[7])]
model = read_model(name, EXTERNAL)
feeds, _ = make_inputs(name, model, batch)
m = dnnx.load(model, device="cuda", precision=precision, batch_size=batch, plan_cache=False,
              passes={pass_name: on == "1"})
layers = sum(1 for r in m.plan() if any(op in r["op"] for op in ops.split(",")))
dev = {k: m.to_device(v) for k, v in feeds.items()}
times = time_calls(lambda: m.run_dict(dev, output="device"), 5, runs)  # a run returns once it is done
print(json.dumps({"ms": 1e3 * float(np.median(times)), "layers": layers}))
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_case_arguments(ap, ["zoo/densenet121.onnx"], runs=20, budget=300)
    ap.add_argument("--pass", dest="pass_name", required=True, help="a name of dnnx.pass_names()")
    ap.add_argument("--op", required=True, help="the layers counted: those whose op contains one of these (commas)")
    ap.add_argument("--precisions", nargs="+", default=["fp32", "tf32", "fp16"])
    ap.add_argument("--on-only", action="store_true", help="the pass on (the default plan) alone")
    args = ap.parse_args()
    end = time.time() + args.budget
    cells = "on ms" if args.on_only else "off ms / on ms"
    print(f"{args.pass_name}: batch {args.batch}, median of {args.runs} runs (device arrays); cells: {cells} "
          f"(layers with {' or '.join(args.op.split(','))})")
    print("| model | " + " | ".join(args.precisions) + " |")
    print("| --- |" + " ---: |" * len(args.precisions))
    for name in args.models:
        cells = []
        for precision in args.precisions:
            got = []
            for on in ("1",) if args.on_only else ("0", "1"):
                if time.time() > end:
                    got.append("not run")
                    continue
                d, why = run_child(CHILD, [name, precision, args.pass_name, on, args.op, args.batch, args.runs],
                                   args.timeout)
                got.append(why or f"{d['ms']:.2f}" + (f" ({d['layers']})" if on == "1" else ""))
            cells.append(" / ".join(got))
        print(f"| {name} | " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
