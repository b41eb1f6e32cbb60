"""The direct conv+pool kernel's tiled path (engine/backends/cuda/conv_pool_tiled_kernels.cu)
against the cuDNN pair it replaces: for each Conv -> MaxPool 2x2 shape, the GPU time of the fused
layer (Model.profile: CUDA events in a replayed graph, median of --repeat runs; the planner's
choice, which is the tiled path up to 16 filters) and of the pair (the fuse_conv_pool pass off:
cuDNN's heuristic conv, then its pool, summed).

    python bench/probes/probe_conv_pool_tiled.py [--repeat 200]
"""
from __future__ import annotations

import argparse
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from _gpu_profile import profile_on_gpu

CASES = [  # (label, x shape, w shape, pads)
    ("LeNet conv2", (64, 20, 12, 12), (50, 20, 5, 5), 0),
    ("LeNet conv2", (256, 20, 12, 12), (50, 20, 5, 5), 0),
    ("LeNet conv2", (1024, 20, 12, 12), (50, 20, 5, 5), 0),
    ("PyTorch LeNet-5 conv2", (256, 6, 14, 14), (16, 6, 5, 5), 0),
    ("CIFAR winml conv2 (+Relu)", (64, 12, 30, 30), (12, 12, 5, 5), 1),
    ("CIFAR winml conv2 (+Relu)", (256, 12, 30, 30), (12, 12, 5, 5), 1),
    ("3x3 padded, 32 -> 64", (128, 32, 16, 16), (64, 32, 3, 3), 1),
]


def conv_pool_model(x_shape, w_shape, pads: int, relu: bool):
    rng = np.random.default_rng(0)
    w = (rng.standard_normal(w_shape) / np.sqrt(np.prod(w_shape[1:]))).astype(np.float32)
    b = rng.standard_normal(w_shape[0]).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[pads] * 4)]
    if relu:
        nodes.append(helper.make_node("Relu", ["c"], ["r"], name="relu"))
    nodes.append(helper.make_node("MaxPool", ["r" if relu else "c"], ["y"], name="pool", kernel_shape=[2, 2],
                                  strides=[2, 2]))
    graph = helper.make_graph(nodes, "conv_pool", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def layer_us(model: bytes, x, repeat: int, **options):
    """(GPU time of all layers in us, the first layer's algorithm)."""
    table = profile_on_gpu(model, x, repeat, **options)
    return 1000.0 * table.total_ms, table[0].algorithm


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    import dnnx

    print(dnnx.cuda_status())
    print("| layer | x | w | fused layer (us) | its algorithm | cuDNN pair (us) | pair's conv |")
    print("| --- | --- | --- | ---: | --- | ---: | --- |")
    for label, x_shape, w_shape, pads in CASES:
        model = conv_pool_model(x_shape, w_shape, pads, relu="Relu" in label)
        x = np.random.default_rng(1).standard_normal(x_shape).astype(np.float32)
        fused_us, fused = layer_us(model, x, args.repeat)
        pair_us, pair = layer_us(model, x, args.repeat, passes={"fuse_conv_pool": False})
        print(f"| {label} | {'x'.join(map(str, x_shape))} | {'x'.join(map(str, w_shape))} | {fused_us:.1f} | "
              f"{fused} | {pair_us:.1f} | {pair} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
