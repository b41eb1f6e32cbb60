"""LeNet (the Caffe variant): conv 20@5x5 -> maxpool 2 -> conv 50@5x5 -> maxpool 2 -> fc 500 -> relu
-> fc 10 -> softmax, on [N, 1, 28, 28] images with a symbolic batch N."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from ._graph import finish_model, float_input, he_normal, initializers, small_bias


def build_lenet(seed: int = 0) -> onnx.ModelProto:
    rng = np.random.default_rng(seed)
    weights = {
        "conv1.w": he_normal(rng, (20, 1, 5, 5), fan_in=1 * 5 * 5),
        "conv1.b": small_bias(rng, 20),
        "conv2.w": he_normal(rng, (50, 20, 5, 5), fan_in=20 * 5 * 5),
        "conv2.b": small_bias(rng, 50),
        # Gemm with transB=1 takes the weight as [out, in], the layout PyTorch's Linear exports.
        "fc1.w": he_normal(rng, (500, 800), fan_in=800),
        "fc1.b": small_bias(rng, 500),
        "fc2.w": he_normal(rng, (10, 500), fan_in=500),
        "fc2.b": small_bias(rng, 10),
    }
    pool = dict(kernel_shape=[2, 2], strides=[2, 2])
    nodes = [
        helper.make_node("Conv", ["x", "conv1.w", "conv1.b"], ["conv1"], name="conv1",
                         kernel_shape=[5, 5]),                                        # [N,20,24,24]
        helper.make_node("MaxPool", ["conv1"], ["pool1"], name="pool1", **pool),      # [N,20,12,12]
        helper.make_node("Conv", ["pool1", "conv2.w", "conv2.b"], ["conv2"], name="conv2",
                         kernel_shape=[5, 5]),                                        # [N,50,8,8]
        helper.make_node("MaxPool", ["conv2"], ["pool2"], name="pool2", **pool),      # [N,50,4,4]
        helper.make_node("Flatten", ["pool2"], ["flat"], name="flatten", axis=1),     # [N,800]
        helper.make_node("Gemm", ["flat", "fc1.w", "fc1.b"], ["fc1"], name="fc1", transB=1),
        helper.make_node("Relu", ["fc1"], ["relu1"], name="relu1"),                   # [N,500]
        helper.make_node("Gemm", ["relu1", "fc2.w", "fc2.b"], ["fc2"], name="fc2", transB=1),
        helper.make_node("Softmax", ["fc2"], ["probs"], name="softmax", axis=1),      # [N,10]
    ]
    graph = helper.make_graph(nodes, "lenet", [float_input("x", ["N", 1, 28, 28])],
                              [float_input("probs", ["N", 10])], initializer=initializers(weights))
    return finish_model(graph, f"LeNet with He-initialised random weights (seed {seed}); untrained.")
