"""finetune(trainable="last:1") on ResNet-18, MobileNetV2 and EfficientNet-B0 (tests/finetune_backbones.py):
held-out accuracy >= 90% on the CPU at 64 x 64, the frozen prefix keeps no activations, and the
saved ONNX runs in onnxruntime with the tuned model's outputs (fp32: summation order only, 1e-4
of the largest logit). The CLI does the same from .npz files."""
import subprocess
import sys

import numpy as np
import pytest

import dnnx
from finetune_backbones import BACKBONES, EPOCHS, LR, backbone, pattern_task, tune

SIDE = 64


@pytest.mark.parametrize("name", BACKBONES)
def test_last_layer_learns_the_pattern_task(name, tmp_path):
    import onnxruntime as ort

    m = dnnx.load(backbone(name, SIDE))
    x, y = pattern_task(SIDE, per_class=24, seed=1)
    x_val, y_val = pattern_task(SIDE, per_class=10, seed=2)
    memory = m.finetune(trainable="last:1").memory(batch_size=32)
    # The frozen prefix keeps nothing: the tail (the classifier) keeps its input and output only.
    assert memory["kept_bytes"] == 0 and memory["tail_activation_bytes"] < memory["keep_everything_bytes"] / 50
    tuner = tune(m, name, x, y)
    accuracy = tuner.evaluate(x_val, y_val)["accuracy"]
    assert accuracy >= 0.9, f"{name}: held-out accuracy {accuracy:.2f}"
    path = tmp_path / f"{name}_tuned.onnx"
    m.save(path)
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    want = sess.run(None, {sess.get_inputs()[0].name: x_val[:8]})[0]
    got = m.run(x_val[:8])
    assert np.max(np.abs(got - want)) <= 1e-4 * np.max(np.abs(want)), name


def test_the_cli_fine_tunes_a_backbone(tmp_path):
    import onnx

    model_path = tmp_path / "resnet18_64.onnx"
    onnx.save(backbone("resnet18", SIDE), model_path)
    x, y = pattern_task(SIDE, per_class=24, seed=1)
    x_val, y_val = pattern_task(SIDE, per_class=10, seed=2)
    np.savez(tmp_path / "train.npz", x=x, y=y)
    np.savez(tmp_path / "val.npz", x=x_val, y=y_val)
    out = tmp_path / "tuned.onnx"
    run = subprocess.run([sys.executable, "-m", "dnnx.cli", "finetune", str(model_path), "--data", str(tmp_path / "train.npz"),
                          "--val", str(tmp_path / "val.npz"), "--trainable", "last:1", "--epochs", str(EPOCHS[SIDE]),
                          "--lr", str(LR["resnet18"]), "--schedule", "cosine",
                          "--batch-size", "32", "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    tuned = dnnx.load(out)
    accuracy = float(np.mean(np.argmax(tuned.run(x_val), axis=1) == y_val))
    assert accuracy >= 0.9, run.stdout
