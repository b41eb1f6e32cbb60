"""finetune(trainable="last:1") on ResNet-18, MobileNetV2 and EfficientNet-B0 on CUDA at 224 x 224
(tests/finetune_backbones.py): held-out accuracy >= 90%, and the saved ONNX runs in onnxruntime
with the tuned CUDA model's outputs (fp32 on cuDNN: summation order, 1e-3 of the largest logit
over ~50 layers)."""
import numpy as np
import pytest

import dnnx
from finetune_backbones import BACKBONES, backbone, pattern_task, tune

SIDE = 224


@pytest.mark.parametrize("name", BACKBONES)
def test_last_layer_learns_the_pattern_task_on_cuda(name, tmp_path):
    import onnxruntime as ort

    m = dnnx.load(backbone(name, SIDE), device="cuda")
    x, y = pattern_task(SIDE, per_class=24, seed=1)
    x_val, y_val = pattern_task(SIDE, per_class=10, seed=2)
    tuner = tune(m, name, x, y)
    accuracy = tuner.evaluate(x_val, y_val)["accuracy"]
    assert accuracy >= 0.9, f"{name}: held-out accuracy {accuracy:.2f}"
    path = tmp_path / f"{name}_tuned.onnx"
    m.save(path)
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    want = sess.run(None, {sess.get_inputs()[0].name: x_val[:4]})[0]
    got = m.run(x_val[:4])
    assert np.max(np.abs(got - want)) <= 1e-3 * np.max(np.abs(want)), name
