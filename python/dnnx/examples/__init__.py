"""The example models dnnx builds itself (``dnnx models NAME --out FILE``), made with
``onnx.helper`` from seeded random weights so that they need no download and no training.

    from dnnx.examples import build
    model = build("lenet", seed=0)      # an onnx.ModelProto
"""
from __future__ import annotations

import importlib


def _lazy(module: str, function: str):
    """``module.function``, imported at its first call: the builders need ``import onnx``
    (Note [onnx without its package import] in dnnx/_onnx.py), the CLI's parser only their names."""
    def builder(seed: int = 0):
        return getattr(importlib.import_module(f"{__name__}.{module}"), function)(seed=seed)

    builder.__name__ = builder.__qualname__ = function
    return builder


build_lenet = _lazy("lenet", "build_lenet")
build_lstm_classifier = _lazy("lstm_classifier", "build_lstm_classifier")

# name -> builder(seed) -> onnx.ModelProto; the CLI offers exactly these names.
BUILDERS = {
    "lenet": build_lenet,
    "lstm": build_lstm_classifier,
}


def build(name: str, seed: int = 0) -> "onnx.ModelProto":
    """The example model ``name`` (one of ``BUILDERS``) with weights drawn from ``seed``."""
    try:
        builder = BUILDERS[name]
    except KeyError:
        raise ValueError(f"unknown example model '{name}' (known: {', '.join(BUILDERS)})") from None
    return builder(seed=seed)


__all__ = ["BUILDERS", "build", "build_lenet", "build_lstm_classifier"]
