"""The direct conv gradients on CUDA (engine/backends/cuda/conv/direct_conv_grad.h, Note [direct
conv gradients]): dW of small 2-D convs of group 1 and dB of every conv, against the CPU backend's
gradients (themselves checked against float64 finite differences in tests/test_gradients.py), with
the tolerances of test_cuda_layer_grads.py (fp32 FMAs on both sides, summed in other orders: a few
ulps of the largest partial sum). The shapes cover threads splitting the positions, many chunks of
images, filters that are not a multiple of the tile (8), pads, strides, dilations, asymmetric pads
and 1-D convs; convs of more than 256 weights a filter keep cuDNN's filter gradient. The plan names
the kernel that ran, and two runs give the same bits."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

import dnnx
from ort_check import make_model
from test_cuda_layer_grads import assert_grad_close, rand

# (x shape, w shape, Conv attributes, whether dW runs the direct kernel)
CASES = {
    "lenet-conv1": ((5, 1, 28, 28), (20, 1, 5, 5), {}, True),
    "lenet-conv2": ((7, 20, 12, 12), (50, 20, 5, 5), {}, False),  # 500 weights a filter: cuDNN's dW
    "3x3-pad1-odd-channels": ((3, 6, 9, 7), (13, 6, 3, 3), {"pads": [1, 1, 1, 1]}, True),
    "7x7-pad3": ((2, 5, 10, 11), (9, 5, 7, 7), {"pads": [3, 3, 3, 3]}, True),
    "5x3-asymmetric-pads": ((2, 3, 8, 9), (4, 3, 5, 3), {"pads": [0, 1, 2, 1]}, True),
    "stride2": ((3, 4, 11, 11), (6, 4, 3, 3), {"strides": [2, 2], "pads": [1, 1, 1, 1]}, True),
    "dilation2": ((2, 3, 12, 12), (5, 3, 3, 3), {"dilations": [2, 2], "pads": [2, 2, 2, 2]}, True),
    "256-weights-a-filter": ((4, 16, 9, 9), (10, 16, 4, 4), {}, True),  # one thread a weight, one group
    "1-d": ((4, 3, 30), (8, 3, 5), {"pads": [2, 2]}, True),
    "3-d": ((2, 2, 5, 6, 6), (3, 2, 3, 3, 3), {}, False),  # cuDNN's dW, the direct dB
}


def conv_model(x_shape, w_shape, attrs, seed):
    """x -> Mul by a trainable gate (so that dX is a parameter's gradient) -> Conv(w, b) -> y."""
    rng = np.random.default_rng(seed)
    inits = {"g": rand(*x_shape[1:], scale=0.5, rng=rng), "w": rand(*w_shape, scale=0.3, rng=rng),
             "b": rand(w_shape[0], scale=0.1, rng=rng)}
    nodes = [helper.make_node("Mul", ["x", "g"], ["xg"]),
             helper.make_node("Conv", ["xg", "w", "b"], ["y"], kernel_shape=list(w_shape[2:]), **attrs)]
    model = make_model(nodes, [("x", list(x_shape))], [("y", None)], inits)
    y_shape = [d.dim_value for d in model.graph.output[0].type.tensor_type.shape.dim]
    return model, list(inits), y_shape


def tuner(model, device, trainable):
    m = dnnx.load(model, device=device, optimize=False)
    return m.finetune(trainable=trainable, loss="mse", momentum=0.0)


@pytest.mark.parametrize("case", list(CASES))
def test_direct_gradients_match_the_cpu_and_repeat_bit_for_bit(case):
    x_shape, w_shape, attrs, filter_direct = CASES[case]
    model, trainable, y_shape = conv_model(x_shape, w_shape, attrs, seed=len(case))
    rng = np.random.default_rng(1)
    x, target = rand(*x_shape, rng=rng), rand(*y_shape, rng=rng)
    want_loss, want = tuner(model, "cpu", trainable).gradients(x, target)
    gpu = tuner(model, "cuda", trainable)
    plan = str(gpu.plan())
    assert ("bwd filter direct kernel" in plan) == filter_direct, plan
    assert "bwd bias direct kernel" in plan and "bwd data BWD_DATA_" in plan, plan
    got_loss, got = gpu.gradients(x, target)
    np.testing.assert_allclose(got_loss, want_loss, rtol=1e-5)
    for name in trainable:
        assert_grad_close(np.asarray(got[name]), np.asarray(want[name]), f"{case}: d{name}")
    # The direct kernels' results repeat bit for bit (dg comes from cuDNN's data gradient, whose
    # algorithm may use atomics when deterministic=False).
    _, again = tuner(model, "cuda", trainable).gradients(x, target)
    for name in ["w", "b"] if filter_direct else ["b"]:
        np.testing.assert_array_equal(np.asarray(again[name]), np.asarray(got[name]), err_msg=f"{case}: d{name}")


def test_many_chunks_of_images_sum_in_order():
    # 300 images: dW sums the partial sums of many chunks; conv1's 25 weights a filter leave
    # groups of threads splitting the positions too.
    model, trainable, y_shape = conv_model((300, 1, 28, 28), (20, 1, 5, 5), {}, seed=3)
    rng = np.random.default_rng(2)
    x, target = rand(300, 1, 28, 28, rng=rng), rand(*y_shape, rng=rng)
    _, want = tuner(model, "cpu", trainable).gradients(x, target)
    _, got = tuner(model, "cuda", trainable).gradients(x, target)
    for name in trainable:
        assert_grad_close(np.asarray(got[name]), np.asarray(want[name]), f"d{name}")


def test_the_probe_switch_sends_every_gradient_to_cudnn(monkeypatch):
    monkeypatch.setenv("DNNX_PROBE_DIRECT_CONV_GRAD", "0")
    model, trainable, _ = conv_model((2, 1, 28, 28), (20, 1, 5, 5), {}, seed=4)
    plan = str(tuner(model, "cuda", trainable).plan())
    backward = [line for line in plan.splitlines() if "Conv backward" in line]
    assert len(backward) == 1, plan
    assert "direct kernel" not in backward[0], plan
    assert "BWD_DATA_" in backward[0] and "BWD_FILTER_" in backward[0] and "bwd bias" in backward[0], plan


def test_lenet_every_layer_steps_match_the_cpu():
    from dnnx.examples.lenet import build_lenet

    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((64, 1, 28, 28)).astype(np.float32), rng.integers(0, 10, size=64)
    losses, weights = {}, {}
    for device in ("cpu", "cuda"):
        t = dnnx.load(build_lenet(seed=0), device=device).finetune(trainable="all", lr=0.001, momentum=0.9)
        if device == "cuda":
            plan = str(t.plan(batch_size=64))
            # conv1 (25 weights a filter) takes the direct dW, conv2 (500) cuDNN's; both the direct dB.
            assert plan.count("bwd filter direct kernel") == 1 and plan.count("bwd bias direct kernel") == 2, plan
        losses[device] = [t.step(x, y) for _ in range(3)]
        weights[device] = t.weights()
    # Three SGD steps from the same weights: the losses and the weights agree as one step's
    # gradients do (fp32, summed in other orders; test_cuda_finetune.py's bounds).
    np.testing.assert_allclose(losses["cuda"], losses["cpu"], rtol=1e-4)
    for name, w in weights["cpu"].items():
        np.testing.assert_allclose(np.asarray(weights["cuda"][name]), np.asarray(w), rtol=1e-3, atol=1e-5,
                                   err_msg=name)
