"""Why zoo2/q_dyn_bert.onnx refused at fp16 and bf16 on CUDA in this session's crash sweep (H100,
2026-12-05 12:47 UTC), where the previous session's sweep ran it: its embedding Gather (uint8
weights, a host layer) failed on "an earlier run" with an index like 0x7FFFFFFF7FFFFFFF, half data
where the int64 ids should be. Each case loads the model in a child process (the int8 path switch
is read once) and runs it, printing the plan rows around the Gather and the outcome:
precision fp32 / fp16 / bf16, with and without the precision measurement, the AMX int8 path or
DNNX_INT8_VNNI=1.

    python3 bench/probes/probe_qdyn_bert_half.py
"""
import os
import subprocess
import sys

CHILD = r"""
import sys, warnings, numpy as np, onnx, dnnx
sys.path.insert(0, "bench")
from _external_models import EXTERNAL, make_inputs, read_model
warnings.simplefilter("ignore")
precision, measure = sys.argv[1], sys.argv[2] == "1"
name = "zoo2/q_dyn_bert.onnx"
model = read_model(name, EXTERNAL)
feeds, _ = make_inputs(name, model, 1)
m = dnnx.load(model, device="cuda", precision=precision, measure_precision=measure)
rows = m.plan()
for r in rows:
    if "embeddings" in r["name"] and r["op"] in ("Gather", "DequantizeLinear", "Cast", "Add"):
        print("   ", r["name"][-45:], r["op"], r["inputs"], r["outputs"], r["algorithm"][:60], "|", r["math"][:40])
try:
    for _ in range(3):
        out = m.run_dict(feeds)
    ref = dnnx.load(model).run_dict(feeds)
    k = next(iter(ref))
    print("    ok, max |diff| / max |ref|", float(np.max(np.abs(out[k] - ref[k])) / np.max(np.abs(ref[k]))))
except Exception as e:
    print("    FAILED:", str(e)[:300])
"""


def main() -> int:
    for precision, measure, env in [("fp32", "1", {}), ("fp16", "1", {}), ("fp16", "0", {}), ("bf16", "0", {}),
                                    ("fp16", "1", {"DNNX_INT8_VNNI": "1"}), ("fp16", "0", {"DNNX_INT8_VNNI": "1"})]:
        print(f"{precision} measure_precision={measure == '1'} {env or ''}", flush=True)
        r = subprocess.run([sys.executable, "-c", CHILD, precision, measure], env={**os.environ, **env},
                           capture_output=True, text=True, timeout=300)
        print(r.stdout.rstrip() or "    (no output)", flush=True)
        if r.returncode:
            print("    rc", r.returncode, r.stderr[-600:], flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
