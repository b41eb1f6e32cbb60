"""Shared by the example builders: weight initialisation and the final ModelProto."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
# IR version 8 is the one that goes with opset 17; a newer onnx package would stamp its own
# (newer) IR version, which older onnxruntime releases refuse to load.
IR_VERSION = 8


def he_normal(rng: np.random.Generator, shape, fan_in: int) -> np.ndarray:
    """He (Kaiming) normal initialisation: std sqrt(2 / fan_in), suited to ReLU networks."""
    return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)


def small_bias(rng: np.random.Generator, n: int) -> np.ndarray:
    """Non-zero biases (a trained model has them), so that a test of the model covers the bias path."""
    return rng.uniform(-0.1, 0.1, size=n).astype(np.float32)


def initializers(weights: dict) -> list:
    return [numpy_helper.from_array(np.ascontiguousarray(v), name) for name, v in weights.items()]


def finish_model(graph: onnx.GraphProto, doc: str) -> onnx.ModelProto:
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="dnnx.examples", doc_string=doc)
    model.ir_version = IR_VERSION
    model = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    onnx.checker.check_model(model, full_check=True)
    return model


def float_input(name: str, shape) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)
