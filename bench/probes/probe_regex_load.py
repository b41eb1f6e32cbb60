"""Why RegexFullMatch's load died on the GPU machine (2026-12-05, tests/cuda/test_cuda_every_op.py: a
segfault in the CPU load of onnx's test_regex_full_match_* cases there, not here): loads each
pattern on the CPU in a child process, under gdb when the machine has it (a native backtrace),
else with faulthandler. Its run on the H200 (Ubuntu 24.04, GCC 13.3, no gdb) at 6f2c3a8: "abc"
loaded, every pattern with a class ("[a-z]+", "\w+", ...) died inside std::regex's compiler;
since then dnnx matches the patterns itself (Note [full match]), and this probe checks that.

    python3 bench/probes/probe_regex_load.py
"""
import shutil
import subprocess
import sys

CHILD = r"""
import faulthandler, sys
faulthandler.enable()
import onnx
from onnx import helper, TensorProto
import numpy as np
import dnnx
pattern = sys.argv[1]
node = helper.make_node("RegexFullMatch", ["X"], ["Y"], pattern=pattern)
graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TensorProto.STRING, [3])],
                          [helper.make_tensor_value_info("Y", TensorProto.BOOL, [3])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
m = dnnx.load(model)
print(pattern, "->", m.run(np.array(["www.google.com", "a@gmail.com", "x"], dtype=object)))
"""

PATTERNS = [r"abc", r"[a-z]+", r"\w+", r"[\w]+", r"[\w.-]+", r"www\.[\w.-]+\.\bcom\b",
            r"(\W|^)[\w.\-]{0,25}@(yahoo|gmail)\.com(\W|$)"]

gdb = shutil.which("gdb")
print("gdb:", gdb, "| compiler of this python:", sys.version)
for p in PATTERNS:
    cmd = [sys.executable, "-c", CHILD, p]
    if gdb:
        cmd = [gdb, "-q", "-batch", "-ex", "run", "-ex", "bt 25", "--args", *cmd]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    lines = [line for line in (r.stdout + r.stderr).splitlines() if line.strip()]
    died = "Program received signal" in r.stdout or "Fatal Python error" in r.stderr or not gdb and r.returncode
    ran = [line for line in lines if " -> " in line]
    print(f"== {p!r}: {'DIED' if died else 'ok'}: " + (ran[0] if ran else ""))
    if died or not ran:
        print("\n".join(line for line in lines[-40:] if "auto-load" not in line))
