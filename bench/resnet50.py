"""A ResNet-50-shaped ONNX model (torchvision's resnet50 layout, v1.5: stride on the 3x3 conv),
built with onnx.helper, for the benchmarks in bench/ (issue #5).

Input "x" [N, 3, 224, 224] with a symbolic batch N; output "logits" [N, 1000]. Stem conv 7x7/2 +
BatchNormalization + Relu + MaxPool 3x3/2; bottleneck blocks [3, 4, 6, 3] (1x1, 3x3, 1x1 convs,
BatchNormalization after each, residual Add, Relu), a projection conv 1x1 + BN on the first block
of each stage; GlobalAveragePool; Flatten; Gemm 1000. Weights are He-initialised from a seed; BN
statistics are non-trivial (gamma near 1, beta small, mean small, var near 1), with the last BN
of each block scaled down (gamma ~0.3, as trained ResNets have) so that activations stay O(1)
through 16 residual additions and outputs are not degenerate. Opset 17. Untrained.

    python bench/resnet50.py out.onnx [--seed S]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
IR_VERSION = 8  # goes with opset 17 (as dnnx/examples/_graph.py)
STAGES = [(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)]  # (width, blocks, first stride)
EXPANSION = 4


class _Builder:
    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.nodes: list = []
        self.weights: dict = {}

    def he(self, shape, fan_in):
        return (self.rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)

    def conv_bn(self, x: str, name: str, cin: int, cout: int, k: int, stride: int, relu: bool,
                gamma_scale: float = 1.0) -> str:
        rng = self.rng
        w = f"{name}.w"
        self.weights[w] = self.he((cout, cin, k, k), cin * k * k)
        pad = k // 2
        self.nodes.append(helper.make_node("Conv", [x, w], [f"{name}.conv"], name=f"{name}.conv",
                                           kernel_shape=[k, k], strides=[stride, stride],
                                           pads=[pad, pad, pad, pad]))
        bn = {f"{name}.{p}": v for p, v in (
            ("gamma", (gamma_scale * rng.uniform(0.8, 1.2, cout)).astype(np.float32)),
            ("beta", rng.uniform(-0.1, 0.1, cout).astype(np.float32)),
            ("mean", rng.uniform(-0.1, 0.1, cout).astype(np.float32)),
            ("var", rng.uniform(0.8, 1.2, cout).astype(np.float32)))}
        self.weights.update(bn)
        out = f"{name}.bn"
        self.nodes.append(helper.make_node("BatchNormalization", [f"{name}.conv", *bn], [out],
                                           name=out, epsilon=1e-5))
        if relu:
            self.nodes.append(helper.make_node("Relu", [out], [f"{name}.relu"], name=f"{name}.relu"))
            out = f"{name}.relu"
        return out

    def bottleneck(self, x: str, name: str, cin: int, width: int, stride: int) -> str:
        cout = width * EXPANSION
        h = self.conv_bn(x, f"{name}.a", cin, width, 1, 1, relu=True)
        h = self.conv_bn(h, f"{name}.b", width, width, 3, stride, relu=True)
        h = self.conv_bn(h, f"{name}.c", width, cout, 1, 1, relu=False, gamma_scale=0.3)
        short = x
        if stride != 1 or cin != cout:
            short = self.conv_bn(x, f"{name}.proj", cin, cout, 1, stride, relu=False)
        self.nodes.append(helper.make_node("Add", [h, short], [f"{name}.add"], name=f"{name}.add"))
        self.nodes.append(helper.make_node("Relu", [f"{name}.add"], [f"{name}.out"], name=f"{name}.out"))
        return f"{name}.out"


def build_resnet50(seed: int = 0, num_classes: int = 1000) -> onnx.ModelProto:
    b = _Builder(seed)
    h = b.conv_bn("x", "stem", 3, 64, 7, 2, relu=True)                               # [N,64,112,112]
    b.nodes.append(helper.make_node("MaxPool", [h], ["stem.pool"], name="stem.pool", kernel_shape=[3, 3],
                                    strides=[2, 2], pads=[1, 1, 1, 1]))              # [N,64,56,56]
    h, cin = "stem.pool", 64
    for s, (width, blocks, stride) in enumerate(STAGES, start=1):
        for i in range(blocks):
            h = b.bottleneck(h, f"layer{s}.{i}", cin, width, stride if i == 0 else 1)
            cin = width * EXPANSION
    b.nodes.append(helper.make_node("GlobalAveragePool", [h], ["gap"], name="gap"))  # [N,2048,1,1]
    b.nodes.append(helper.make_node("Flatten", ["gap"], ["flat"], name="flatten", axis=1))
    b.weights["fc.w"] = b.he((num_classes, cin), cin)
    b.weights["fc.b"] = b.rng.uniform(-0.1, 0.1, num_classes).astype(np.float32)
    b.nodes.append(helper.make_node("Gemm", ["flat", "fc.w", "fc.b"], ["logits"], name="fc", transB=1))
    graph = helper.make_graph(
        b.nodes, "resnet50",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 224, 224])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", num_classes])],
        initializer=[numpy_helper.from_array(np.ascontiguousarray(v), k) for k, v in b.weights.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="dnnx.bench",
                              doc_string=f"ResNet-50-shaped, He-initialised random weights (seed {seed}); untrained.")
    model.ir_version = IR_VERSION
    model = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    onnx.checker.check_model(model)  # full_check would copy the ~100 MB model once more
    return model


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    onnx.save(build_resnet50(args.seed), args.out)
    print(f"wrote {args.out} ({Path(args.out).stat().st_size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
