"""The floor of one dnnx CUDA run: models of 1, 4 and 8 Relu nodes at batch 1, device-resident input and
output, CUDA graph on (median wall time of 500 calls), then LeNet at batch 1 the same way and its plan.

    python bench/probes/probe_cuda_floor.py
"""
import time, numpy as np, onnx
from onnx import helper, TensorProto
import dnnx
from dnnx.examples import build

def med(fn, n=500, w=50):
    for _ in range(w): fn()
    t = []
    for _ in range(n):
        s = time.perf_counter(); fn(); t.append(time.perf_counter() - s)
    return 1e6 * float(np.median(t))

for nodes in (1, 4, 8):
    names = ["x"] + [f"v{i}" for i in range(nodes)]
    g = helper.make_graph([helper.make_node("Relu", [names[i]], [names[i + 1]]) for i in range(nodes)], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])],
                          [helper.make_tensor_value_info(names[-1], TensorProto.FLOAT, [1, 16])])
    m = dnnx.load(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), device="cuda")
    x = m.to_device(np.ones((1, 16), np.float32))
    print(f"{nodes} Relu nodes, batch 1, device in/out, graph: {med(lambda: m.run(x, output='device')):.1f} us")
m = dnnx.load(build("lenet"), device="cuda")
x = m.to_device(np.random.default_rng(0).standard_normal((1, 1, 28, 28)).astype(np.float32))
print(f"LeNet batch 1 device graph: {med(lambda: m.run(x, output='device')):.1f} us")
print(m.plan(batch_size=1))
