"""onnxruntime's per-node CPU times from its own profiler, for the per-layer probes
(probe_model_layers_cpu.py, probe_resnet_layers_cpu.py) to set beside dnnx's Model.profile."""
import collections
import json
import os
import tempfile

import numpy as np


def ort_layers(model, feeds, threads, repeat):
    """{node name: (op, median ms)} over `repeat` runs after 3 warm-up runs. `model`: an
    onnx.ModelProto or a path."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.enable_profiling = True
    so.profile_file_prefix = os.path.join(tempfile.mkdtemp(), "ort")
    source = str(model) if isinstance(model, (str, os.PathLike)) else model.SerializeToString()
    sess = ort.InferenceSession(source, so, providers=["CPUExecutionProvider"])
    for _ in range(3 + repeat):
        sess.run(None, feeds)
    per, ops = collections.defaultdict(list), {}
    with open(sess.end_profiling()) as f:
        events = json.load(f)
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            name = e["name"][: -len("_kernel_time")]
            per[name].append(e["dur"] / 1e3)
            ops[name] = e["args"].get("op_name", "")
    return {n: (ops[n], float(np.median(v[3:] if len(v) > 3 else v))) for n, v in per.items()}
