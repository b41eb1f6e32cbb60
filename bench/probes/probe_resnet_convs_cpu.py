"""dnnx's kernel time (Model.profile) of one conv a model, for ResNet-50's and FCN ResNet-50's layer
shapes: the stem (with a 1x1 conv after it, so that the region is channels-last), the 1x1 convs
with and without a residual Add + Relu, the strided and dilated 3x3 ones. For A/B runs of two
builds (bench/RESULTS.md, session 7): run it under each DNNX_DEV_BUILD in turn.

    DNNX_DEV_BUILD=build/dev PYTHONPATH=python python bench/probes/probe_resnet_convs_cpu.py ["l4,f3"]
    (T=2 for 2 threads, R=<repeats>; the argument: comma-separated parts of the layer names)
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import dnnx

# (name, C, K, H = W, kernel, stride, pad, residual); a 3x3 conv of pad > 1 is dilated by its pad
# (FCN's layer3 and layer4: same-size outputs)
LAYERS = [("stem", 3, 64, 224, 7, 2, 3, False),
          ("g147 1x1 147->64", 147, 64, 112, 1, 1, 0, False),
          ("g160 1x1 160->64", 160, 64, 112, 1, 1, 0, False),
          ("g147 1x1 147->64 56", 147, 64, 56, 1, 1, 0, False),
          ("f4.b 3x3d4 512", 512, 512, 28, 3, 1, 4, False),
          ("f4.ds 1024->2048", 1024, 2048, 28, 1, 1, 0, False),
          ("f4.c 512->2048 +z", 512, 2048, 28, 1, 1, 0, True),
          ("f4.a 2048->512", 2048, 512, 28, 1, 1, 0, False),
          ("f3.b 3x3d2 256", 256, 256, 28, 3, 1, 2, False),
          ("l1.a 64->64", 64, 64, 56, 1, 1, 0, False),
          ("l1.c 64->256 +z", 64, 256, 56, 1, 1, 0, True),
          ("l1.c 64->256 noz", 64, 256, 56, 1, 1, 0, False),
          ("l1.a 256->64", 256, 64, 56, 1, 1, 0, False),
          ("l2.0.a 256->128", 256, 128, 56, 1, 1, 0, False),
          ("l2.0.b 3x3s2 128", 128, 128, 56, 3, 2, 1, False),
          ("l2.0.proj 256->512 s2", 256, 512, 56, 1, 2, 0, False),
          ("l2.c 128->512 +z", 128, 512, 28, 1, 1, 0, True),
          ("l2.a 512->128", 512, 128, 28, 1, 1, 0, False),
          ("l3.c 256->1024 +z", 256, 1024, 14, 1, 1, 0, True),
          ("l3.a 1024->256", 1024, 256, 14, 1, 1, 0, False),
          ("l4.c 512->2048 +z", 512, 2048, 7, 1, 1, 0, True),
          ("l4.a 2048->512", 2048, 512, 7, 1, 1, 0, False)]
sel = sys.argv[1].split(",") if len(sys.argv) > 1 and sys.argv[1] else None
threads = int(os.environ.get("T", "1"))

def model(c, k, h, kernel, stride, pad, res):
    rng = np.random.default_rng(0)
    dil = pad if kernel == 3 and pad > 1 else 1
    oh = (h + 2 * pad - dil * (kernel - 1) - 1) // stride + 1
    inits = [numpy_helper.from_array((rng.standard_normal((k, c, kernel, kernel)) * 0.1).astype(np.float32), "W"),
             numpy_helper.from_array(rng.standard_normal(k).astype(np.float32), "B")]
    nodes = [helper.make_node("Conv", ["x", "W", "B"], ["c"], kernel_shape=[kernel, kernel], pads=[pad] * 4, strides=[stride]*2, dilations=[dil]*2)]
    ins = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, h, h])]
    if res:
        nodes.append(helper.make_node("Add", ["c", "z"], ["s"]))
        ins.append(helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, k, oh, oh]))
        nodes.append(helper.make_node("Relu", ["s"], ["y"]))
    elif kernel == 7:
        nodes.append(helper.make_node("Relu", ["c"], ["r"]))
        inits.append(numpy_helper.from_array((rng.standard_normal((k, k, 1, 1)) * 0.1).astype(np.float32), "W2"))
        nodes.append(helper.make_node("Conv", ["r", "W2"], ["y"]))
    else:
        nodes.append(helper.make_node("Relu", ["c"], ["y"]))
    graph = helper.make_graph(nodes, "g", ins, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString(), oh

dnnx.threads.set_num_threads(threads)
for name, c, k, h, kernel, stride, pad, res in LAYERS:
    if sel and not any(s in name for s in sel): continue
    m, oh = model(c, k, h, kernel, stride, pad, res)
    feeds = [np.random.default_rng(1).standard_normal((1, c, h, h)).astype(np.float32)]
    if res: feeds.append(np.random.default_rng(2).standard_normal((1, k, oh, oh)).astype(np.float32))
    ours = dnnx.load(m)
    rows = [r for r in ours.profile(*feeds, repeat=int(os.environ.get("R", "40"))) if "Conv" in r[1]]
    macs = oh * oh * k * c * kernel * kernel
    t = rows[0][3]
    print(f"{name:24s} {rows[0][2][:44]:44s} {t:7.3f} ms {2*macs/t/1e6:6.1f} GF/s", flush=True)
