"""The int8 ResNet-50 (a QDQ file, batch 256) on CUDA with its int8 convs in ONNX's layout and channels-last
(Note [int8 nhwc on cuda]: DNNX_PROBE_INT8_NHWC=1), at fp32 and fp16, each in a process of its own.

    python3 bench/probes/probe_int8_layout_cuda.py QDQ.onnx
"""
import os, subprocess, sys
CHILD = r"""
import sys, time, warnings, numpy as np, dnnx
warnings.simplefilter("ignore")
m = dnnx.load(sys.argv[1], device="cuda", batch_size=256, precision=sys.argv[2])
x = m.to_device(np.random.default_rng(0).standard_normal((256, 3, 224, 224)).astype(np.float32))
name = m.inputs[0].name
for _ in range(3): m.run_dict({name: x}, output="device")
ts = []
for _ in range(20):
    t = time.perf_counter(); m.run_dict({name: x}, output="device"); ts.append(time.perf_counter() - t)
ops = {}
for r in m.plan():
    ops[r["op"]] = ops.get(r["op"], 0) + 1
y = m.run_dict({name: x})
print(f"{1e3 * float(np.median(ts)):.2f} ms; ops {sorted(ops.items(), key=lambda kv: -kv[1])[:6]}; out[0,:3] {list(y.values())[0][0, :3]}")
"""
for precision in ("fp32", "fp16"):
    for nhwc in ("0", "1"):
        env = dict(os.environ, DNNX_PROBE_INT8_NHWC=nhwc)
        r = subprocess.run([sys.executable, "-c", CHILD, sys.argv[1], precision], env=env, capture_output=True, text=True, timeout=100)
        print(f"int8 r50 b256 {precision} DNNX_PROBE_INT8_NHWC={nhwc}:", (r.stdout.strip() or r.stderr.strip()[-600:]), flush=True)
