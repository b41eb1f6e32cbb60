"""Every float model of ../shared/external plans a whole-model fine-tuning step on the CPU
(finetune(trainable="all")), so that the coverage of docs/finetune.md "Which of the shared models
train whole" holds: cross entropy where the model gives [N, classes], mse where it gives
per-position scores (cross entropy refuses those by name), and the two detectors refused by their
NonZero. Skipped where ../shared is absent."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

import dnnx

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from _external_models import float_models, read_model  # noqa: E402

PER_POSITION = {"zoo/fcn_resnet50.onnx", "zoo2/bert.onnx", "zoo2/gpt2.onnx", "zoo2/crnn.onnx", "zoo2/speech_gru.onnx"}
RUN_TIME_SHAPES = {"zoo2/det_fasterrcnn_mobilenet_v3_large_320_fpn.onnx", "zoo2/det_ssdlite320_mobilenet_v3_large.onnx"}
MODELS = float_models()


@pytest.mark.skipif(not MODELS, reason="../shared/external is absent")
@pytest.mark.parametrize("name", MODELS or ["none"])
def test_every_layer_plans_a_step(name):
    m = dnnx.load(read_model(name))
    if name in RUN_TIME_SHAPES:
        with pytest.raises(dnnx.UnsupportedModelError, match="NonZero"):
            m.finetune(trainable="all")
        return
    if name in PER_POSITION:
        with pytest.raises(dnnx.UnsupportedModelError, match=r"cross_entropy: the scores .* expected \[N, classes\]"):
            m.finetune(trainable="all")
    tuner = m.finetune(trainable="all", loss="mse" if name in PER_POSITION else "cross_entropy")
    assert tuner.plan(), name
