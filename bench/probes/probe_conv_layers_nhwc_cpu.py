"""One conv per model (Conv + Clip(0, 6)), batch 1, 1 thread: dnnx's kernel time from Model.profile
against onnxruntime's whole call on the same one-Conv model (its layout reorders included), for
ResNet's 3x3 and 1x1 layer shapes. The numbers in bench/RESULTS.md's current CPU section.

    DNNX_DEV_BUILD=build/dev PYTHONPATH=python python bench/probes/probe_conv_layers_nhwc_cpu.py
"""
import statistics
import sys
from pathlib import Path

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

import dnnx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/
from _timing import time_calls  # noqa: E402

# (C, K, H, W, kernel, pad)
LAYERS = [(64, 64, 56, 56, 3, 1), (128, 128, 28, 28, 3, 1), (256, 256, 14, 14, 3, 1), (512, 512, 7, 7, 3, 1),
          (64, 256, 56, 56, 1, 0), (256, 64, 56, 56, 1, 0), (1024, 256, 14, 14, 1, 0)]


def conv_model(c, k, h, w, kernel, pad):
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array((rng.standard_normal((k, c, kernel, kernel)) * 0.1).astype(np.float32), "W"),
             numpy_helper.from_array(rng.standard_normal(k).astype(np.float32), "B"),
             numpy_helper.from_array(np.array(0, np.float32), "lo"), numpy_helper.from_array(np.array(6, np.float32), "hi")]
    nodes = [helper.make_node("Conv", ["x", "W", "B"], ["c"], kernel_shape=[kernel, kernel], pads=[pad] * 4),
             helper.make_node("Clip", ["c", "lo", "hi"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, h, w])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def median_ms(fn, n=50):
    return 1e3 * statistics.median(time_calls(fn, 5, n))


def main():
    dnnx.threads.set_num_threads(1)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    print("| conv | dnnx algorithm | dnnx ms | onnxruntime ms |\n| --- | --- | ---: | ---: |")
    for c, k, h, w, kernel, pad in LAYERS:
        model = conv_model(c, k, h, w, kernel, pad)
        x = np.random.default_rng(1).standard_normal((1, c, h, w)).astype(np.float32)
        ours = dnnx.load(model)
        theirs = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
        conv = [row for row in ours.profile(x, repeat=50) if "Conv" in row[1]][0]
        print(f"| {kernel}x{kernel} {c} -> {k}, {h}x{w} | {conv[2]} | {conv[3]:.2f} | "
              f"{median_ms(lambda: theirs.run(None, {'x': x})):.2f} |")


if __name__ == "__main__":
    main()
