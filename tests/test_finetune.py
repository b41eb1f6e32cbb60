"""Model.finetune / Tuner / Model.save on the CPU: LeNet's last two layers learn scikit-learn's
digits, the saved file runs in onnxruntime with dnnx's outputs, a non-finite step changes nothing,
and every wrong argument is an error naming it."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

import dnnx
from dnnx.examples.lenet import build_lenet
from grad_models import overflowing_gradients
from ort_check import make_model, run_ort

from dnnx._digits import load_digits  # the digits ship with dnnx: no scikit-learn needed

BATCH = 64
TARGET_ACCURACY = 0.90
MAX_EPOCHS = 4


@pytest.fixture(scope="module")
def digits():
    return load_digits([1, 1, 28, 28], seed=0)


def train_epochs(tuner, x, y, epochs, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(epochs):
        order = rng.permutation(len(y))
        for start in range(0, len(y), BATCH):
            b = order[start:start + BATCH]
            tuner.step(x[b], y[b])


def test_lenet_last_two_layers_learn_digits(digits):
    x_train, y_train, x_val, y_val = digits
    model = dnnx.load(build_lenet(seed=0))
    tuner = model.finetune(trainable="last:2", lr=0.05, momentum=0.9)
    assert tuner.parameters == ["fc1.w", "fc1.b", "fc2.w", "fc2.b"]
    assert tuner.layout()["trained"] == ["fc1", "relu1", "fc2", "softmax"]
    before = tuner.evaluate(x_val, y_val)["accuracy"]
    accuracy = before
    for epoch in range(MAX_EPOCHS):
        train_epochs(tuner, x_train, y_train, 1, seed=epoch)
        accuracy = tuner.evaluate(x_val, y_val)["accuracy"]
        if accuracy >= TARGET_ACCURACY:
            break
    assert accuracy >= TARGET_ACCURACY, f"validation accuracy {accuracy:.3f} after {MAX_EPOCHS} epochs (before {before:.3f})"
    # Model.run sees the tuned weights: its predictions give the same accuracy.
    predicted = model.run(x_val).argmax(axis=1)
    assert np.mean(predicted == y_val) == pytest.approx(accuracy)


def test_save_runs_in_onnxruntime_with_dnnx_outputs(tmp_path, digits):
    x_train, y_train, x_val, _ = digits
    proto = build_lenet(seed=1)
    model = dnnx.load(proto)
    tuner = model.finetune(trainable="last:2", lr=0.05)
    train_epochs(tuner, x_train[:256], y_train[:256], 1)
    path = tmp_path / "tuned.onnx"
    model.save(path)
    saved = onnx.load(path)
    # Same graph: nodes, names and attributes unchanged; only the trained initializers differ.
    assert saved.graph.node == proto.graph.node
    original = {t.name: numpy_helper.to_array(t) for t in proto.graph.initializer}
    tuned = {t.name: numpy_helper.to_array(t) for t in saved.graph.initializer}
    assert list(original) == list(tuned)
    for name in original:
        changed = not np.array_equal(original[name], tuned[name])
        assert changed == (name in tuner.parameters), name
        np.testing.assert_array_equal(tuned[name], tuner.weights()[name] if changed else original[name])
    want = run_ort(saved, {"x": x_val[:32]})["probs"]
    np.testing.assert_allclose(model.run(x_val[:32]), want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(dnnx.load(path).run(x_val[:32]), want, rtol=1e-4, atol=1e-5)
    assert not list(tmp_path.glob(".*.tmp")), "the temporary file was left behind"


def test_non_finite_loss_leaves_weights_unchanged(digits):
    x_train, y_train, _, _ = digits
    model = dnnx.load(build_lenet(seed=2))
    tuner = model.finetune(trainable="last:2", lr=0.01)
    tuner.step(x_train[:BATCH], y_train[:BATCH])
    before = tuner.weights()
    velocity = tuner.state_dict()["velocity"]
    bad = x_train[:BATCH].copy()
    bad[3, 0, 10, 10] = np.nan
    with pytest.raises(dnnx.NonFiniteLossError, match="left as they were"):
        tuner.step(bad, y_train[:BATCH])
    with pytest.raises(FloatingPointError):
        tuner.step(np.full_like(bad, np.inf), y_train[:BATCH])
    after = tuner.state_dict()
    for name in tuner.parameters:
        np.testing.assert_array_equal(after["weights"][name], before[name])
        np.testing.assert_array_equal(after["velocity"][name], velocity[name])
    assert after["steps"] == 1
    tuner.step(x_train[:BATCH], y_train[:BATCH])  # still usable


def test_a_non_finite_gradient_names_the_first_such_parameter():
    # The loss is finite; the gradients of w1 and w2 overflow (grad_models.overflowing_gradients).
    model, x, target, overflowing = overflowing_gradients()
    tuner = dnnx.load(model).finetune(trainable="all", loss="mse", lr=0.01, momentum=0.9)
    assert tuner.parameters == ["w1", "b1", "w2", "b2"]
    tuner.step(x, target)
    before, velocity = tuner.weights(), tuner.state_dict()["velocity"]
    with pytest.raises(dnnx.NonFiniteLossError, match="the gradient of 'w1' is not finite"):
        tuner.step(x, overflowing)
    for name in tuner.parameters:
        np.testing.assert_array_equal(tuner.weights()[name], before[name], err_msg=name)
        np.testing.assert_array_equal(tuner.state_dict()["velocity"][name], velocity[name], err_msg=name)


def test_profile_times_every_part_of_a_step_and_changes_nothing(digits):
    x, y = digits[0][:BATCH], digits[1][:BATCH]
    tuner = dnnx.load(build_lenet(seed=0)).finetune(trainable="last:2", lr=0.05, momentum=0.9)
    tuner.step(x, y)
    before, velocity = tuner.weights(), tuner.state_dict()["velocity"]
    table = tuner.profile(x, y, repeat=3)
    names = [(r.name, r.op) for r in table]
    assert names[:5] == [("conv1", "Conv"), ("pool1", "MaxPool"), ("conv2", "Conv"), ("pool2", "MaxPool"),
                         ("flatten", "Flatten")]
    # fc1 -> relu1 is one Gemm+Relu in the tail (Note [Gemm+Relu in training], train/tail_fusion.h)
    assert names[5:] == [("fc1", "Gemm+Relu"), ("fc2", "Gemm"), ("softmax", "Softmax"), ("loss", "cross_entropy"),
                         ("fc2", "Gemm backward"), ("fc1", "Gemm+Relu backward"), ("check", "non-finite check"),
                         ("sgd", "SGD update")]
    softmax = next(r for r in table if r.name == "softmax")
    assert softmax.algorithm == "not run (fused into the loss)"
    for r in table:
        assert r.median_ms >= 0, r
        if r.name in ("conv1", "conv2", "fc1", "loss", "sgd"):
            assert r.median_ms > 0, r
    assert not table.graph and table.repeat == 3 and "host wall-clock" in str(table)
    # The timed steps are undone: weights, momentum and the step count are as they were.
    assert tuner.steps == 1
    for name in before:
        np.testing.assert_array_equal(tuner.weights()[name], before[name], err_msg=name)
        np.testing.assert_array_equal(tuner.state_dict()["velocity"][name], velocity[name], err_msg=name)
    with pytest.raises(ValueError, match="repeat"):
        tuner.profile(x, y, repeat=0)


def test_memory_reports_what_the_frozen_head_saves():
    model = dnnx.load(build_lenet())
    report = model.finetune(trainable="last:2").memory(batch_size=64)
    # The tail keeps fc1, relu1, fc2 and softmax at batch 64; the head keeps nothing.
    assert report["tail_activation_bytes"] < 64 * (500 + 500 + 10 + 10) * 4 + 4 * 64
    assert report["keep_everything_bytes"] > 10 * report["tail_activation_bytes"]
    assert report["saved_bytes"] == report["keep_everything_bytes"] - report["tail_activation_bytes"]
    assert report["kept_bytes"] == 0  # no CPU gradient keeps anything of its forward but the activations


def test_mse_trains_a_regression():
    rng = np.random.default_rng(3)
    w_true = rng.standard_normal((4, 2)).astype(np.float32)
    model = make_model([helper.make_node("Gemm", ["x", "w", "b"], ["y"])], [("x", ["N", 4])], [("y", ["N", 2])],
                       {"w": np.zeros((4, 2), np.float32), "b": np.zeros(2, np.float32)})
    m = dnnx.load(model)
    tuner = m.finetune(trainable="all", loss="mse", lr=0.1, momentum=0.5, nesterov=True, weight_decay=1e-4)
    x = rng.standard_normal((256, 4)).astype(np.float32)
    y = x @ w_true
    for _ in range(200):
        loss = tuner.step(x, y)
    assert loss < 1e-3
    np.testing.assert_allclose(tuner.weights()["w"], w_true, atol=0.02)


def test_schedules_lower_the_learning_rate():
    from dnnx.finetune import scheduled_lr

    assert scheduled_lr(0.1, None, 50, None) == 0.1
    assert [round(scheduled_lr(0.1, "step", s, 9), 6) for s in (0, 2, 3, 6, 9)] == [0.1, 0.1, 0.01, 0.001, 0.0001]
    assert scheduled_lr(0.1, "cosine", 0, 10) == pytest.approx(0.1)
    assert scheduled_lr(0.1, "cosine", 5, 10) == pytest.approx(0.05)
    assert scheduled_lr(0.1, "cosine", 10, 10) == pytest.approx(0.0)


@pytest.mark.parametrize("kwargs, message", [
    ({"trainable": "last:0"}, "trainable"),
    ({"trainable": "last:9"}, "only 4 parameterised"),
    ({"trainable": "first:2"}, "trainable"),
    ({"trainable": ["nope"]}, "'nope'"),
    ({"loss": "hinge"}, "loss"),
    ({"lr": -1}, "lr"),
    ({"momentum": 1.0}, "momentum"),
    ({"nesterov": True, "momentum": 0.0}, "nesterov"),
    ({"weight_decay": -0.1}, "weight_decay"),
    ({"schedule": "cosine"}, "total_steps"),
    ({"schedule": "linear"}, "schedule"),
])
def test_bad_arguments_name_themselves(kwargs, message):
    model = dnnx.load(build_lenet())
    with pytest.raises(ValueError, match=message):
        model.finetune(**kwargs)


def test_bad_batches_name_x_or_y():
    model = dnnx.load(build_lenet())
    tuner = model.finetune()
    x = np.zeros((4, 1, 28, 28), np.float32)
    with pytest.raises(ValueError, match="y: cross_entropy takes integer"):
        tuner.step(x, np.zeros(4, np.float32))
    with pytest.raises(ValueError, match="label 10"):
        tuner.step(x, np.array([0, 1, 2, 10]))
    with pytest.raises(ValueError, match=r"y: expected integer labels \[4\]"):
        tuner.step(x, np.array([0, 1, 2]))
    with pytest.raises(ValueError, match="x: input 'x'"):
        tuner.step(np.zeros((4, 1, 20, 20), np.float32), np.array([0, 1, 2, 3]))


def test_the_trainer_names_a_device_it_cannot_train_on():
    # The tuner trains on the model's backend (tests/cuda/test_cuda_finetune.py covers CUDA); an
    # unknown device kind is a DeviceError naming it, not a crash.
    from dnnx._native import core

    model = dnnx.load(build_lenet())
    with pytest.raises(dnnx.DeviceError, match="device 'tpu'"):
        core.Trainer(model._ir, "last:2", "cross_entropy", {}, model.passes, "tpu", {})
    with pytest.raises(dnnx.DeviceError, match="no backend library"):
        core.Trainer(model._ir, "last:2", "cross_entropy", {}, model.passes, "cuda", {})


def test_lstm_classifier_learns_a_separable_task(tmp_path):
    # The example LSTM classifier, LSTM and Gemm trained ("last:2"): the class is which feature is
    # switched on over the sequence, which one LSTM layer learns in a few dozen steps.
    from dnnx.examples.lstm_classifier import CLASSES, FEATURES, STEPS, build_lstm_classifier

    rng = np.random.default_rng(0)
    y = rng.integers(0, FEATURES, size=128)
    x = rng.normal(0, 0.3, size=(STEPS, 128, FEATURES)).astype(np.float32)
    x[:, np.arange(128), y] += 1.0
    proto = build_lstm_classifier(seed=0)
    model = dnnx.load(proto)
    tuner = model.finetune(trainable="last:2", lr=0.1, momentum=0.9)
    assert tuner.parameters == ["lstm.W", "lstm.R", "lstm.B", "fc.w", "fc.b"]
    assert tuner.evaluate(x, y)["accuracy"] < 0.5
    for _ in range(60):
        tuner.step(x, y)
    assert tuner.evaluate(x, y)["accuracy"] >= 0.9
    model.save(tmp_path / "lstm.onnx")
    np.testing.assert_allclose(run_ort(onnx.load(tmp_path / "lstm.onnx"), {"x": x})["probs"], model.run(x),
                               rtol=1e-4, atol=1e-5)
    assert CLASSES == 10


def test_tuner_plan_shows_frozen_forward_and_backward_layers():
    tuner = dnnx.load(build_lenet()).finetune(trainable="last:2")
    rows = tuner.plan(batch_size=8)
    stages = [(r["stage"], r["name"], r["op"]) for r in rows]
    assert [s for s in stages if s[0] == "frozen"][0][1:] == ("conv1", "Conv")
    # fc1 -> relu1 runs as one Gemm+Relu (a fusion that keeps every parameter as it is).
    assert [s[1:] for s in stages if s[0] == "forward"] == [("fc1", "Gemm+Relu"), ("fc2", "Gemm"),
                                                          ("softmax", "Softmax")]
    # Backward in run order; the final Softmax is fused into the loss, so it has no step.
    assert [s[1:] for s in stages if s[0] == "backward"] == [("fc2", "Gemm backward"), ("fc1", "Gemm+Relu backward")]
    assert rows[-1]["outputs"] == [[8, 500]]
    assert "Gemm backward" in str(rows)
    assert tuner.graphs() == []  # the CPU records no graphs
    # The split is the model's own nodes; fuse_gemm_relu off keeps them apart in the tail too.
    assert tuner.layout()["trained"] == ["fc1", "relu1", "fc2", "softmax"]
    apart = dnnx.load(build_lenet(), passes={"fuse_gemm_relu": False}).finetune(trainable="last:2")
    assert [r["op"] for r in apart.plan(batch_size=8) if r["stage"] == "backward"] == [
        "Gemm backward", "Relu backward", "Gemm backward"]


@pytest.mark.parametrize("c_shape", [None, (5,), (1, 5), (6, 5)])
def test_fused_gemm_relu_gradients_equal_the_unfused_ones(c_shape):
    # x [6,4] -> Gemm(w1 [4,5], c) -> Relu -> Gemm(w2 [5,3]) -> y: the tail's Gemm+Relu gradient
    # (the Relu's mask, then Gemm's) against the two layers' own, every parameter.
    rng = np.random.default_rng(4)
    inits = {"w1": rng.standard_normal((4, 5)).astype(np.float32), "w2": rng.standard_normal((5, 3)).astype(np.float32)}
    first = ["x", "w1"]
    if c_shape is not None:
        inits["c"] = rng.standard_normal(c_shape).astype(np.float32)
        first.append("c")
    nodes = [helper.make_node("Gemm", first, ["g"], name="gemm1", beta=0.5), helper.make_node("Relu", ["g"], ["h"]),
             helper.make_node("Gemm", ["h", "w2"], ["y"], name="gemm2")]
    model = make_model(nodes, [("x", [6, 4])], [("y", [6, 3])], inits)
    x = rng.standard_normal((6, 4)).astype(np.float32)
    t = rng.standard_normal((6, 3)).astype(np.float32)
    results = []
    for fuse in (True, False):
        tuner = dnnx.load(model, passes={"fuse_gemm_relu": fuse}).finetune(trainable="all", loss="mse")
        ops = [r["op"] for r in tuner.plan() if r["stage"] == "forward"]
        assert ops == (["Gemm+Relu", "Gemm"] if fuse else ["Gemm", "Relu", "Gemm"])
        results.append(tuner.gradients(x, t))
    (fused_loss, fused), (loss, grads) = results
    assert fused_loss == loss
    for name in inits:
        np.testing.assert_allclose(fused[name], grads[name], rtol=1e-6, atol=1e-7, err_msg=name)


def test_gpu_arrays_are_named_errors_on_the_cpu():
    # An object that says it lives on a GPU (__cuda_array_interface__) reaches the trainer as is;
    # a CPU tuner refuses it naming the input, and evaluate() cannot cut one into chunks.
    class FakeGpuArray:
        __cuda_array_interface__ = {"shape": (4, 1, 28, 28), "typestr": "<f4", "data": (0, False), "version": 3}

        def __len__(self):
            return 4

    tuner = dnnx.load(build_lenet()).finetune()
    labels = np.array([0, 1, 2, 3])
    with pytest.raises(ValueError, match="x: input 'x'"):
        tuner.step(FakeGpuArray(), labels)
    with pytest.raises(ValueError, match="cannot be cut into chunks of 2 rows"):
        tuner.evaluate(FakeGpuArray(), labels, batch_size=2)
