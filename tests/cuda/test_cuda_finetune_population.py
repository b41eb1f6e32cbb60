"""Every float model of ../shared/external fine-tunes whole on CUDA as it does on the CPU
(tests/test_finetune_population.py): finetune(trainable="all") plans a step, and the first step's
loss at batch 2 matches the CPU's (cuDNN's heuristic algorithms: the search is not what is tested). fp32 with no TF32 on both sides; the loss is one scalar after
up to ~100 layers whose sums cuDNN orders differently from the CPU's GEMMs: rtol 1e-3 (the
zoo's CUDA forward tests hold the outputs to ~1e-4 of their largest element, and the loss of
random-weight logits is a log-sum-exp of O(1) values). The two detectors stay refused by their
NonZero. Skipped where ../shared is absent."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import dnnx

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _external_models import float_models, make_inputs, read_model  # noqa: E402
from test_finetune_population import PER_POSITION, RUN_TIME_SHAPES  # noqa: E402

MODELS = float_models()
LOSS_RTOL = 1e-3


def first_loss(onnx_model, device, loss, x, target):
    # heuristic search: this test is about coverage and the loss, not the timed algorithms
    m = dnnx.load(onnx_model, device=device, **({"algo_search": "heuristic"} if device == "cuda" else {}))
    tuner = m.finetune(trainable="all", loss=loss, lr=1e-3, momentum=0.0)
    got, _ = tuner.gradients(x, target)
    return float(got), tuner


@pytest.mark.skipif(not MODELS, reason="../shared/external is absent")
@pytest.mark.parametrize("name", MODELS or ["none"])
def test_every_layer_trains_on_cuda(name):
    onnx_model = read_model(name)
    if name in RUN_TIME_SHAPES:
        with pytest.raises(dnnx.UnsupportedModelError, match="NonZero"):
            dnnx.load(onnx_model, device="cuda").finetune(trainable="all")
        return
    loss = "mse" if name in PER_POSITION else "cross_entropy"
    cpu = dnnx.load(onnx_model)
    feeds, _ = make_inputs(name, onnx_model, 2)
    x = [feeds[i.name] for i in cpu.inputs]
    x = x if len(x) > 1 else x[0]
    scores = cpu.run(*x) if isinstance(x, list) else cpu.run(x)
    batch = scores.shape[0]
    target = np.arange(batch) % scores.shape[-1] if loss == "cross_entropy" else np.zeros_like(scores)
    want, _ = first_loss(onnx_model, "cpu", loss, x, target)
    got, tuner = first_loss(onnx_model, "cuda", loss, x, target)
    assert tuner.plan(), name
    assert np.isfinite(got), name
    np.testing.assert_allclose(got, want, rtol=LOSS_RTOL, err_msg=name)
