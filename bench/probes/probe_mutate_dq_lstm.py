"""Mutated DynamicQuantizeLSTM files against the load-and-run contract (no crash, no hang, every
failure a clean error): the op has no onnx node case, so bench/fuzz.py's sources never hold it.
Two LSTMs quantized by onnxruntime's quantize_dynamic (tests/test_dynamic_quantize_lstm.py's), each
case one to three mutations of the node (an input dropped, an initializer resized or retyped,
hidden_size, direction, clip) and seeded inputs (empty dims, values up to 1e3 and down to 1e-30,
out-of-range sequence lengths), loaded and run in a child process with a 30 s timeout.

    DNNX_DEV_BUILD=build/dev PYTHONPATH=python python bench/probes/probe_mutate_dq_lstm.py [COUNT]

Session 13 (2026-12-06, the 2-core EPYC): 300 cases, 0 crashes, 0 hangs (220 InvalidModelError,
42 ValueError, 16 UnsupportedModelError, 9 onnx checker errors, 13 ran).
"""
import os
import pathlib
import random
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import helper, numpy_helper

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tests"))
import test_dynamic_quantize_lstm as t
base_dir = pathlib.Path(tempfile.mkdtemp())
models = [t.quantized(t.lstm_model(d, 8, 4, 3, 2, True, ("y", "y_h", "y_c")), base_dir, wt, pc)
          for d, wt, pc in (("forward", "int8", False), ("bidirectional", "uint8", True))]
child = r'''
import sys, numpy as np, onnx, dnnx
m = onnx.load(sys.argv[1]); seed = int(sys.argv[2])
rng = np.random.default_rng(seed)
try:
    mod = dnnx.load(m)
    feeds = {}
    for i in m.graph.input:
        dims = [d.dim_value if d.dim_value > 0 else int(rng.integers(0, 4)) for d in i.type.tensor_type.shape.dim]
        if i.type.tensor_type.elem_type == 6:
            feeds[i.name] = rng.integers(-2, 6, size=dims).astype(np.int32)
        else:
            feeds[i.name] = rng.normal(size=dims).astype(np.float32) * float(rng.choice([1, 1e3, 1e-30]))
    mod.run_dict(feeds)
    print("RAN")
except Exception as e:
    print("ERR", type(e).__name__, str(e)[:120])
'''
crashes = 0; kinds = {}
for seed in range(int(sys.argv[1]) if len(sys.argv) > 1 else 300):
    rng = random.Random(seed)
    m = onnx.ModelProto(); m.CopyFrom(rng.choice(models))
    node = next(n for n in m.graph.node if n.op_type == "DynamicQuantizeLSTM")
    inits = {i.name: i for i in m.graph.initializer}
    for _ in range(rng.randint(1, 3)):
        kind = rng.choice(["drop_input", "reshape_init", "retype_init", "attr_hidden", "attr_dir", "clip", "fill_inputs"])
        if kind == "drop_input":
            k = rng.randrange(len(node.input)); node.input[k] = ""
        elif kind in ("reshape_init", "retype_init"):
            names = [x for x in node.input if x in inits]
            if not names: continue
            init = inits[rng.choice(names)]
            a = numpy_helper.to_array(init)
            if kind == "reshape_init":
                shape = list(a.shape) or [1]
                j = rng.randrange(len(shape)); shape[j] = max(0, shape[j] + rng.choice([-1, 1, 3]))
                if rng.random() < 0.2: shape = shape[:-1]
                b = np.resize(a, shape).astype(a.dtype) if np.prod(shape) > 0 else np.zeros(shape, a.dtype)
            else:
                b = a.astype(rng.choice([np.float32, np.int8, np.uint8, np.int32, np.float64]))
            init.CopyFrom(numpy_helper.from_array(b, init.name))
        elif kind == "attr_hidden":
            for at in node.attribute:
                if at.name == "hidden_size": at.i = rng.choice([0, -1, 4, 9, 1 << 40])
        elif kind == "attr_dir":
            for at in node.attribute:
                if at.name == "direction": at.s = rng.choice([b"reverse", b"bidirectional", b"sideways", b"forward"])
        elif kind == "clip":
            node.attribute.append(helper.make_attribute("clip", rng.choice([0.5, -1.0, float("nan")])))
        elif kind == "fill_inputs":
            pass
    path = base_dir / f"m{seed}.onnx"
    onnx.save(m, str(path))
    try:
        p = subprocess.run([sys.executable, "-c", child, str(path), str(seed)], capture_output=True, text=True, timeout=30,
                           env=dict(os.environ))
        out = (p.stdout.strip().splitlines() or ["?"])[-1]
        if p.returncode != 0:
            crashes += 1; print("CRASH", seed, p.returncode, p.stderr.strip()[-300:])
        else:
            key = out.split(" ")[0] + " " + (out.split(" ")[1] if out.startswith("ERR") else "")
            kinds[key] = kinds.get(key, 0) + 1
    except subprocess.TimeoutExpired:
        crashes += 1; print("HANG", seed)
print("crashes/hangs:", crashes, kinds)
