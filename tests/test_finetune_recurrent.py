"""Model.finetune with a GRU or RNN in the trained tail: a frozen MatMul projection of
batch-major input, then, as PyTorch exports batch_first layers, a Transpose to seq-major, a GRU
(linear_before_reset=1) or Relu RNN, and a Gemm classifier; last:2 trained on a separable task;
the saved model runs in onnxruntime (which has no layout=1 kernel) with dnnx's outputs."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper

import dnnx
from ort_check import make_model, run_ort

STEPS, FEATURES, HIDDEN, CLASSES, N = 10, 6, 16, 6, 96


def sequence_classifier(op, seed=0):
    rng = np.random.default_rng(seed)
    g = {"GRU": 3, "RNN": 1}[op]
    bound = 1.0 / np.sqrt(HIDDEN)

    def uniform(*shape):
        return rng.uniform(-bound, bound, size=shape).astype(np.float32)

    weights = {"proj.w": (np.eye(FEATURES) + rng.normal(0, 0.1, (FEATURES, FEATURES))).astype(np.float32),
               "rec.W": uniform(1, g * HIDDEN, FEATURES), "rec.R": uniform(1, g * HIDDEN, HIDDEN),
               "rec.B": uniform(1, 2 * g * HIDDEN), "axes": np.array([0], dtype=np.int64),
               "fc.w": uniform(CLASSES, HIDDEN), "fc.b": uniform(CLASSES)}
    attrs = {"linear_before_reset": 1} if op == "GRU" else {"activations": ["Relu"]}
    nodes = [helper.make_node("MatMul", ["x", "proj.w"], ["xp"], name="proj"),                    # [N,T,F]
             helper.make_node("Transpose", ["xp"], ["xt"], name="to_seq_major", perm=[1, 0, 2]),  # [T,N,F]
             helper.make_node(op, ["xt", "rec.W", "rec.R", "rec.B"], ["", "h_last"], name="rec",
                              hidden_size=HIDDEN, **attrs),                                       # [1,N,H]
             helper.make_node("Squeeze", ["h_last", "axes"], ["h"], name="squeeze"),
             helper.make_node("Gemm", ["h", "fc.w", "fc.b"], ["logits"], name="fc", transB=1),
             helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=1)]
    return make_model(nodes, [("x", [N, STEPS, FEATURES])], [("probs", [N, CLASSES])], weights, opset=14)


@pytest.mark.parametrize("op", ["GRU", "RNN"])
def test_recurrent_tail_learns_a_separable_task(op, tmp_path):
    # The class is which feature is switched on over the sequence.
    rng = np.random.default_rng(0)
    y = rng.integers(0, CLASSES, size=N)
    x = rng.normal(0, 0.3, size=(N, STEPS, FEATURES)).astype(np.float32)
    x[np.arange(N), :, y] += 1.0
    model = dnnx.load(sequence_classifier(op))
    tuner = model.finetune(trainable="last:2", lr=0.1, momentum=0.9)
    assert tuner.parameters == ["rec.W", "rec.R", "rec.B", "fc.w", "fc.b"]
    before = tuner.evaluate(x, y)["accuracy"]
    assert before < 0.5
    for _ in range(60):
        tuner.step(x, y)
    assert tuner.evaluate(x, y)["accuracy"] >= 0.9
    model.save(tmp_path / "rec.onnx")
    saved = onnx.load(tmp_path / "rec.onnx")
    np.testing.assert_allclose(run_ort(saved, {"x": x})["probs"], model.run(x), rtol=1e-4, atol=1e-5)
