"""An ``onnx.backend.base.Backend`` over dnnx, so that the ONNX backend node tests that ship inside
the onnx package run against this engine (tests/test_onnx_node_tests.py)."""
from __future__ import annotations

from onnx.backend.base import Backend, BackendRep

from .model import Model


class DnnxRep(BackendRep):
    def __init__(self, model: Model):
        self.model = model

    def run(self, inputs, **kwargs):
        if isinstance(inputs, dict):
            return list(self.model.run_dict(inputs).values())
        if not isinstance(inputs, (list, tuple)):
            inputs = [inputs]
        return list(self.model.run_dict(*inputs).values())


class DnnxBackend(Backend):
    @classmethod
    def prepare(cls, model, device="CPU", **kwargs):
        super().prepare(model, device, **kwargs)
        return DnnxRep(Model(model, device="cpu"))

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return device.upper() == "CPU"


prepare = DnnxBackend.prepare
supports_device = DnnxBackend.supports_device
