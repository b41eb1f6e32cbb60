"""Fine-tuning a quantized model (Note [int8 fine-tuning] in python/dnnx/_quant_tail.py, issue #37):
the trained layers become float, the QDQ pairs inside the tail are bypassed, the head keeps its
int8 kernels; the tail learns the digits on the int8 head's features; save() writes the quantized
head with the tuned float tail, which onnxruntime runs to dnnx's outputs; earlier tuning carries
over; blocked weights are refused by name."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

import dnnx
from dnnx._digits import load_digits
from dnnx.examples.lenet import build_lenet
from ort_check import make_model, run_ort
from test_finetune import BATCH, MAX_EPOCHS, TARGET_ACCURACY, train_epochs


@pytest.fixture(scope="module")
def digits():
    return load_digits([1, 1, 28, 28], seed=0)


def int8_lenet(digits):
    x_train = digits[0]
    return dnnx.load(build_lenet(seed=0), precision="int8", calibration=x_train[:256])


def ops(model):
    return {row["name"]: row["op"] for row in model.plan()}


def test_the_float_tail_learns_on_the_int8_head(digits):
    x_train, y_train, x_val, y_val = digits
    model = int8_lenet(digits)
    head = {name: op for name, op in ops(model).items() if name in ("conv1", "conv2")}
    assert ops(model)["fc2"].startswith("Int8") and head["conv1"] == "Int8Conv"  # quantized before fine-tuning
    tuner = model.finetune(trainable="last:2", lr=0.05, momentum=0.9)
    layers = ops(model)
    assert {name: layers[name] for name in head} == head, layers  # the head keeps its layers (the guard's fp32 too)
    assert not layers["fc1"].startswith("Int8") and not layers["fc2"].startswith("Int8"), layers
    assert model.precision == "int8" and model.int8_report is not None
    assert len(tuner.parameters) == 4  # fc1 and fc2: weights (float now) and biases
    accuracy = tuner.evaluate(x_val, y_val)["accuracy"]
    for epoch in range(MAX_EPOCHS):
        train_epochs(tuner, x_train, y_train, 1, seed=epoch)
        accuracy = tuner.evaluate(x_val, y_val)["accuracy"]
        if accuracy >= TARGET_ACCURACY:
            break
    assert accuracy >= TARGET_ACCURACY, accuracy
    assert np.mean(model.run(x_val).argmax(axis=1) == y_val) == pytest.approx(accuracy)


def test_save_writes_the_quantized_head_and_the_tuned_tail(tmp_path, digits):
    x_train, y_train, x_val, _ = digits
    model = int8_lenet(digits)
    tuner = model.finetune(trainable="last:2", lr=0.05)
    train_epochs(tuner, x_train[:256], y_train[:256], 1)
    path = tmp_path / "tuned_int8.onnx"
    model.save(path)
    saved = onnx.load(path)
    kinds = [n.op_type for n in saved.graph.node]
    assert "QuantizeLinear" in kinds and "DequantizeLinear" in kinds  # the head is still quantized
    by_name = {n.name: n for n in saved.graph.node}
    init = {t.name: numpy_helper.to_array(t) for t in saved.graph.initializer}
    for layer in ("fc1", "fc2"):
        w = by_name[layer].input[1]
        assert w in init and init[w].dtype == np.float32, (layer, w)  # a float initializer, no DequantizeLinear
        np.testing.assert_array_equal(init[w], tuner.weights()[w])
    again = dnnx.load(path)  # as any QDQ file: the head fuses to int8 again
    assert ops(again)["conv1"] == "Int8Conv"
    feeds = {"x": x_val[:32]}
    want = run_ort(saved, feeds)
    got = model.run_dict(feeds)
    for name, w in want.items():
        np.testing.assert_allclose(again.run_dict(feeds)[name], got[name], rtol=1e-6, atol=1e-7)  # the same plan
        # onnxruntime runs the same integer grid: a value rounded across one step at most (as
        # tests/test_quantize.py bounds it)
        np.testing.assert_allclose(got[name], w, atol=0.02 * np.abs(w).max())
        assert np.mean(got[name].argmax(1) == w.argmax(1)) >= 0.95


def test_a_second_tuner_keeps_the_first_ones_weights(digits):
    x_train, y_train, _, _ = digits
    model = int8_lenet(digits)
    first = model.finetune(trainable="last:1", lr=0.05)
    train_epochs(first, x_train[:128], y_train[:128], 1)
    tuned = first.weights()
    model.finetune(trainable="last:2", lr=0.05)  # makes fc1 float too: the model loads again
    assert not ops(model)["fc1"].startswith("Int8")
    for name, value in tuned.items():
        np.testing.assert_array_equal(model._ir["constants"][name], value, err_msg=name)


def test_blocked_weights_are_refused_by_name():
    w_q = np.arange(-8, 8, dtype=np.int8).reshape(4, 4)
    inits = {"w_q": w_q, "w_s": np.full((2, 4), 0.1, np.float32), "w_z": np.zeros((2, 4), np.int8),
             "b": np.zeros(4, np.float32)}
    nodes = [helper.make_node("DequantizeLinear", ["w_q", "w_s", "w_z"], ["w"], name="dq_w", axis=0, block_size=2),
             helper.make_node("Gemm", ["x", "w", "b"], ["y"], name="fc")]
    model = make_model(nodes, [("x", [2, 4])], [("y", None)], inits, opset=21)
    m = dnnx.load(model)
    with pytest.raises(ValueError, match=r"'dq_w' \(DequantizeLinear\).*block_size 2"):
        m.finetune(trainable="last:1")


def test_a_float_model_is_not_loaded_again():
    model = dnnx.load(build_lenet(seed=0))
    engine = model._engine
    model.finetune(trainable="last:2")
    assert model._engine is engine  # no QDQ weights: the Tuner trains the model as loaded
