"""The example models dnnx builds itself (``dnnx models NAME --out FILE``), made with
``onnx.helper`` from seeded random weights so that they need no download and no training.

    from dnnx.examples import build
    model = build("lenet", seed=0)      # an onnx.ModelProto
"""
from __future__ import annotations

import onnx

from .lenet import build_lenet
from .lstm_classifier import build_lstm_classifier

# name -> builder(seed) -> onnx.ModelProto; the CLI offers exactly these names.
BUILDERS = {
    "lenet": build_lenet,
    "lstm": build_lstm_classifier,
}


def build(name: str, seed: int = 0) -> onnx.ModelProto:
    """The example model ``name`` (one of ``BUILDERS``) with weights drawn from ``seed``."""
    try:
        builder = BUILDERS[name]
    except KeyError:
        raise ValueError(f"unknown example model '{name}' (known: {', '.join(BUILDERS)})") from None
    return builder(seed=seed)


__all__ = ["BUILDERS", "build", "build_lenet", "build_lstm_classifier"]
