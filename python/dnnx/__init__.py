"""dnnx: an ONNX-importing inference and fine-tuning engine with a C++17 core (OpenBLAS on the
CPU; cuDNN and cuBLAS on NVIDIA GPUs).

    import dnnx
    model = dnnx.load("lenet.onnx")
    y = model.run(x)
    print(model.plan())

    gpu = dnnx.load("lenet.onnx", device="cuda", workspace_limit="256MiB")  # see dnnx.cuda_status()

    sess = dnnx.InferenceSession("lenet.onnx", providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
    probs, = sess.run(None, {"x": x})                                       # onnxruntime's API (dnnx.session)

    report = dnnx.quantize("lenet.onnx", "lenet.int8.onnx", calibration=x)  # int8 QDQ, accuracy guard
    print(report)                                                           # (docs/precision.md)
"""
from .cuda import cuda_available, cuda_status
from .device_array import DeviceArray
from .errors import (DeviceError, DnnxError, HostFallbackWarning, InvalidModelError, NonFiniteWarning,
                     PlanCacheWarning, UnsupportedModelError, WorkerLoadError)
from .model import Model, TensorSpec, load
from .session import GraphOptimizationLevel, InferenceSession, SessionOptions, get_available_providers
from .finetune import NonFiniteLossError, Tuner
from ._passes import pass_names
from ._quantize import quantize
from ._quant_report import LayerDecision, QuantReport
from . import support, threads
from ._native import core as _core

__version__ = "0.1.0"  # pyproject.toml's [project] version (tests/test_inference_session.py checks)


def supported_ops() -> list:
    """The ONNX op types the engine runs (Constant is folded at import and not listed)."""
    return list(_core.supported_ops())


__all__ = ["load", "quantize", "QuantReport", "LayerDecision", "Model", "TensorSpec", "DeviceArray", "Tuner", "NonFiniteLossError", "supported_ops", "pass_names",
           "threads", "InferenceSession", "SessionOptions", "GraphOptimizationLevel", "get_available_providers",
           "cuda_available", "cuda_status", "DnnxError", "UnsupportedModelError", "InvalidModelError", "DeviceError",
           "WorkerLoadError", "PlanCacheWarning", "NonFiniteWarning", "HostFallbackWarning", "__version__"]
