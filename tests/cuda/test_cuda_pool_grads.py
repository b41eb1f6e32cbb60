"""AveragePool's, GlobalAveragePool's and GlobalMaxPool's gradients on CUDA against the CPU's
(test_cuda_layer_grads.py's oracle and tolerances; the CPU's are checked against float64 finite
differences in tests/test_gradients_pools.py), and ResNet-18 of the zoo fine-tuned whole on CUDA
against the CPU, on an input away from its ReLU kinks: its GlobalAveragePool is what kept it from
training before."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from onnx import helper

import dnnx
from ort_check import make_model
from test_cuda_layer_grads import assert_grad_close, check_cuda_gradients, out_shape, rand, tuner
from test_gradients_pools import AVG_POOL_CASES, avg_pool_ids, residual_net

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))


def conv_then(pool_node, x_shape, opset=17):
    channels, spatial = x_shape[1], len(x_shape) - 2
    inits = {"w": rand(3, channels, *[3] * spatial, scale=0.5), "b": rand(3, scale=0.1)}
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[3] * spatial, pads=[1] * (2 * spatial)),
             pool_node]
    return make_model(nodes, [("x", list(x_shape))], [("y", None)], inits, opset=opset), list(inits)


@pytest.mark.parametrize("case", AVG_POOL_CASES, ids=avg_pool_ids)
def test_average_pool(case):
    attrs, opset = case
    model, trainable = conv_then(helper.make_node("AveragePool", ["c"], ["y"], **attrs), (2, 2, 9, 9), opset)
    check_cuda_gradients(model, trainable, {"x": rand(2, 2, 9, 9)}, rand(*out_shape(model)))
    _, gpu = tuner(model, trainable, "cuda")
    rows = [r for r in gpu.plan(batch_size=2) if r["op"] == "AveragePool backward"]
    assert len(rows) == 1 and rows[0]["algorithm"].startswith("direct gradient kernel"), rows


@pytest.mark.parametrize("x_shape, attrs", [
    ((3, 1, 10), dict(kernel_shape=[3], strides=[2], pads=[1, 1], count_include_pad=1)),
    ((2, 1, 5, 6, 5), dict(kernel_shape=[2, 2, 2], strides=[1, 2, 1])),
], ids=["1d", "3d"])
def test_average_pool_other_ranks(x_shape, attrs):
    model, trainable = conv_then(helper.make_node("AveragePool", ["c"], ["y"], **attrs), x_shape)
    check_cuda_gradients(model, trainable, {"x": rand(*x_shape)}, rand(*out_shape(model)))


@pytest.mark.parametrize("op", ["GlobalAveragePool", "GlobalMaxPool"])
@pytest.mark.parametrize("x_shape", [(2, 2, 6, 5), (3, 1, 9), (2, 1, 3, 4, 3), (4, 3, 20, 20)],
                         ids=["2d", "1d", "3d", "large-plane"])
def test_global_pool(op, x_shape):
    model, trainable = conv_then(helper.make_node(op, ["c"], ["y"]), x_shape)
    check_cuda_gradients(model, trainable, {"x": rand(*x_shape)}, rand(*out_shape(model)))


def test_global_max_pool_splits_ties_like_the_cpu():
    x0 = np.round(rand(2, 3, 4, 4)).astype(np.float32)  # integers: several maxima per plane
    nodes = [helper.make_node("Add", ["z", "x0"], ["x"]), helper.make_node("GlobalMaxPool", ["x"], ["y"])]
    model = make_model(nodes, [("z", [2, 3, 4, 4])], [("y", None)], {"x0": x0})
    check_cuda_gradients(model, ["x0"], {"z": np.zeros((2, 3, 4, 4), np.float32)}, rand(2, 3, 1, 1))


def test_a_residual_net_steps_as_on_the_cpu():
    model, trainable = residual_net()
    x, labels = rand(6, 4, 8, 8), np.arange(6) % 5
    check_cuda_gradients(model, trainable, {"x": x}, labels, loss="cross_entropy")
    cpu = dnnx.load(model).finetune(trainable="all", lr=0.1, momentum=0.9)
    gpu = dnnx.load(model, device="cuda").finetune(trainable="all", lr=0.1, momentum=0.9)
    for _ in range(5):
        want, got = cpu.step(x, labels), gpu.step(x, labels)
    np.testing.assert_allclose(got, want, rtol=1e-4)


def test_zoo_resnet18_trains_whole_on_cuda():
    """Every gradient of the zoo's ResNet-18 on CUDA against the CPU, at 32x32 on an input whose
    distance from the ReLU and MaxPool kinks is measured first (bench/_relu_kinks.py: at 224x224
    some Relu input always lies within the two float32 runs' difference of 0, and a gradient then
    differs by that element's whole contribution, ~1e-3 below it; session 24)."""
    from _external_models import EXTERNAL, read_model
    from _relu_kinks import at_size, kink_margin

    if not (EXTERNAL / "zoo" / "resnet18.onnx").exists():
        pytest.skip("../shared/external/zoo is absent")
    model = at_size(read_model("zoo/resnet18.onnx"), 32, 32)
    x = np.random.default_rng(9).standard_normal((2, 3, 32, 32)).astype(np.float32)
    labels = np.array([3, 7])
    # The premise: no Relu input nor MaxPool gap within ~10x the CPU's and CUDA's float32 difference
    # (~1e-6 of activations of magnitude ~3 here); measured 1.4e-5 and 3.2e-4 with onnxruntime.
    assert min(kink_margin(model, {model.graph.input[0].name: x})) > 1e-5
    _, want = dnnx.load(model).finetune(trainable="all", loss="cross_entropy").gradients(x, labels)
    _, got = dnnx.load(model, device="cuda").finetune(trainable="all", loss="cross_entropy").gradients(x, labels)
    assert set(got) == set(want) and len(want) == 26, sorted(want)
    for name in want:  # ~20 layers of fp32 sums in other orders: each ~1e-6 of float64 (the probe)
        assert_grad_close(np.asarray(got[name]), np.asarray(want[name]), f"d{name}", atol=1e-4, l2=1e-4)
