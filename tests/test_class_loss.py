"""NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss against onnxruntime on the CPU: every
reduction, weights, ignore_index (inside and outside [0, C), on every sample), int32 and int64
labels, extra dims, the log_prob output, and the errors for a bad label or bad shapes."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import dnnx
from ort_check import assert_matches_ort, make_model, rand

OPS = ["NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"]


def loss_model(op, x_shape, weight=False, label_elem=TensorProto.INT64, log_prob=False, opset=22, **attrs):
    inputs = ["x", "t"] + (["w"] if weight else [])
    outputs = ["loss"] + (["log_prob"] if log_prob else [])
    node = helper.make_node(op, inputs, outputs, name="loss_node", **attrs)
    t_shape = [x_shape[0]] + x_shape[2:]
    graph_inputs = [("x", x_shape), ("t", t_shape, label_elem)] + ([("w", [x_shape[1]])] if weight else [])
    graph_outputs = [("loss", None)] + ([("log_prob", None)] if log_prob else [])
    return make_model([node], graph_inputs, graph_outputs, opset=opset if op.startswith("N") else 13)


def labels(shape, classes, dtype=np.int64, seed=0):
    return np.random.default_rng(seed).integers(0, classes, shape).astype(dtype)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("weight", [False, True])
@pytest.mark.parametrize("x_shape", [[4, 5], [3, 5, 2], [2, 3, 2, 4]], ids=str)
def test_loss(op, reduction, weight, x_shape):
    model = loss_model(op, x_shape, weight, reduction=reduction)
    feeds = {"x": rand(*x_shape), "t": labels([x_shape[0]] + x_shape[2:], x_shape[1])}
    if weight:
        feeds["w"] = np.random.default_rng(3).uniform(0.2, 2.0, x_shape[1]).astype(np.float32)
    assert_matches_ort(model, feeds)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("ignore_index", [1, -1, 100])
@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_ignore_index(op, ignore_index, reduction):
    t = labels([4, 3], 5, seed=1)
    t[0, 0] = ignore_index
    t[2, 1] = ignore_index
    model = loss_model(op, [4, 5, 3], True, reduction=reduction, ignore_index=ignore_index)
    feeds = {"x": rand(4, 5, 3), "t": t, "w": np.linspace(0.5, 1.5, 5).astype(np.float32)}
    assert_matches_ort(model, feeds)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("reduction", ["sum", "mean"])
def test_every_sample_ignored(op, reduction):
    # sum: 0; mean: 0 / 0, NaN in both engines
    model = loss_model(op, [3, 4], reduction=reduction, ignore_index=2)
    assert_matches_ort(model, {"x": rand(3, 4), "t": np.full([3], 2, np.int64)})


@pytest.mark.parametrize("op", OPS)
def test_int32_labels(op):
    model = loss_model(op, [4, 6], label_elem=TensorProto.INT32, reduction="mean")
    assert_matches_ort(model, {"x": rand(4, 6), "t": labels([4], 6, np.int32)})


@pytest.mark.parametrize("reduction", ["none", "mean"])
def test_log_prob_output(reduction):
    model = loss_model("SoftmaxCrossEntropyLoss", [3, 4, 2], True, log_prob=True, reduction=reduction)
    feeds = {"x": rand(3, 4, 2) * 10, "t": labels([3, 2], 4), "w": np.ones(4, np.float32)}
    assert_matches_ort(model, feeds)


@pytest.mark.parametrize("op", OPS)
def test_label_out_of_range_is_refused(op):
    session = dnnx.load(loss_model(op, [2, 3], reduction="mean"))
    with pytest.raises(ValueError, match="loss_node.*label 3 is out of range for 3 classes"):
        session.run_dict({"x": rand(2, 3), "t": np.array([0, 3], np.int64)})


def test_labels_of_the_wrong_shape_are_refused():
    node = helper.make_node("NegativeLogLikelihoodLoss", ["x", "t"], ["y"], name="loss_node")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", 1, [2, 3, 4]),
                                            helper.make_tensor_value_info("t", TensorProto.INT64, [2, 3])],
                              [helper.make_tensor_value_info("y", 1, [])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    with pytest.raises(dnnx.InvalidModelError, match="loss_node.*labels \\[2,3\\]"):
        dnnx.load(model)


@pytest.mark.parametrize("op", OPS)
def test_no_classes_is_refused(op):
    with pytest.raises(dnnx.InvalidModelError, match="loss_node.*no classes"):
        dnnx.load(loss_model(op, [2, 0], reduction="mean"))
