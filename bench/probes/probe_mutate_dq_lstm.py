"""Mutated DynamicQuantizeLSTM files against the load-and-run contract (no crash, no hang, every
failure a clean error): the op has no onnx node case, so bench/fuzz.py's sources never hold it.
Two LSTMs quantized by onnxruntime's quantize_dynamic (tests/test_dynamic_quantize_lstm.py's), each
case one to three mutations of the node (an input dropped, an initializer resized or retyped,
hidden_size, direction, clip) and seeded inputs (empty dims, values up to 1e3 and down to 1e-30,
out-of-range sequence lengths), loaded and run in a child process with a 30 s timeout.

    DNNX_DEV_BUILD=build/dev PYTHONPATH=python python bench/probes/probe_mutate_dq_lstm.py [COUNT]

Session 13 (2026-12-06, the 2-core EPYC): 300 cases, 0 crashes, 0 hangs (252 InvalidModelError,
23 ValueError, 16 UnsupportedModelError, 9 ran).
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
from test_dynamic_quantize_lstm import lstm_model, quantized  # noqa: E402

# Loads and runs one mutated file (argv: path, seed) with seeded inputs; prints RAN or ERR <type>.
CHILD = r"""
import sys, numpy as np, onnx, dnnx
m = onnx.load(sys.argv[1])
rng = np.random.default_rng(int(sys.argv[2]))
try:
    model = dnnx.load(m)
    feeds = {}
    for i in m.graph.input:
        dims = [d.dim_value if d.dim_value > 0 else int(rng.integers(0, 4)) for d in i.type.tensor_type.shape.dim]
        if i.type.tensor_type.elem_type == onnx.TensorProto.INT32:
            feeds[i.name] = rng.integers(-2, 6, size=dims).astype(np.int32)
        else:
            feeds[i.name] = rng.normal(size=dims).astype(np.float32) * float(rng.choice([1, 1e3, 1e-30]))
    model.run_dict(feeds)
    print("RAN")
except Exception as e:
    print("ERR", type(e).__name__)
"""
MUTATIONS = ("drop_input", "reshape_init", "retype_init", "attr_hidden", "attr_dir", "clip")


def mutate(model: onnx.ModelProto, rng: random.Random) -> None:
    """One to three mutations of the model's DynamicQuantizeLSTM node, in place."""
    node = next(n for n in model.graph.node if n.op_type == "DynamicQuantizeLSTM")
    inits = {i.name: i for i in model.graph.initializer}
    for _ in range(rng.randint(1, 3)):
        kind = rng.choice(MUTATIONS)
        if kind == "drop_input":
            node.input[rng.randrange(len(node.input))] = ""
        elif kind in ("reshape_init", "retype_init"):
            names = [x for x in node.input if x in inits]
            if not names:
                continue
            init = inits[rng.choice(names)]
            a = numpy_helper.to_array(init)
            if kind == "reshape_init":
                shape = list(a.shape) or [1]
                j = rng.randrange(len(shape))
                shape[j] = max(0, shape[j] + rng.choice([-1, 1, 3]))
                if rng.random() < 0.2:
                    shape = shape[:-1]
                b = np.resize(a, shape).astype(a.dtype) if np.prod(shape) > 0 else np.zeros(shape, a.dtype)
            else:
                b = a.astype(rng.choice([np.float32, np.int8, np.uint8, np.int32, np.float64]))
            init.CopyFrom(numpy_helper.from_array(b, init.name))
        elif kind == "attr_hidden":
            for at in node.attribute:
                if at.name == "hidden_size":
                    at.i = rng.choice([0, -1, 4, 9, 1 << 40])
        elif kind == "attr_dir":
            for at in node.attribute:
                if at.name == "direction":
                    at.s = rng.choice([b"reverse", b"bidirectional", b"sideways", b"forward"])
        else:  # clip
            node.attribute.append(helper.make_attribute("clip", rng.choice([0.5, -1.0, float("nan")])))


def main() -> int:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    folder = pathlib.Path(tempfile.mkdtemp())
    sources = [quantized(lstm_model(d, 8, 4, 3, 2, True, ("y", "y_h", "y_c")), folder, weights, per_channel)
               for d, weights, per_channel in (("forward", "int8", False), ("bidirectional", "uint8", True))]
    failures, outcomes = 0, {}
    for seed in range(count):
        rng = random.Random(seed)
        model = onnx.ModelProto()
        model.CopyFrom(rng.choice(sources))
        mutate(model, rng)
        path = folder / f"case{seed}.onnx"
        onnx.save(model, str(path))
        try:
            p = subprocess.run([sys.executable, "-c", CHILD, str(path), str(seed)], capture_output=True, text=True,
                               timeout=30, env=dict(os.environ))
        except subprocess.TimeoutExpired:
            failures += 1
            print("HANG", seed)
            continue
        if p.returncode != 0:
            failures += 1
            print("CRASH", seed, p.returncode, p.stderr.strip()[-300:])
            continue
        outcome = (p.stdout.strip().splitlines() or ["?"])[-1]
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    print(f"{count} cases, {failures} crashes or hangs; outcomes: {outcomes}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
