"""Note [shapes in the tail] (engine/train/split.cc): a dynamic export computes a Reshape's shape
from its input's shape (Shape -> Gather -> Unsqueeze -> Concat); the trainer's tail folds those
at plan time as inference does, so such a model trains whole, at any batch, with the gradients
float64 finite differences give. What reads a trainable parameter never folds there (Note
[mutable constants]): a parameter that only constant inputs meet (a Transpose of a weight, an
embedding gathered by constant ids) still gets its gradient."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from grad_check import check_gradients
from ort_check import make_model
from seeded_rand import SeededRand

import dnnx

rand = SeededRand()


@pytest.fixture(autouse=True)
def seeded_rng(request):
    rand.reseed(request.node.nodeid)


def dynamic_flatten_net(batch="N"):
    """x [N, 2, 5, 5] -> Conv (3 filters) -> Reshape to [N, -1], the shape computed from Shape(x)
    -> Gemm -> y [N, 4]. The Shape chain comes first, before the first trainable node."""
    inits = {"w": rand(3, 2, 3, 3, scale=0.5), "b": rand(3, scale=0.1), "fc.w": rand(4, 75, scale=0.2),
             "fc.b": rand(4, scale=0.1), "zero": np.array(0, np.int64), "minus1": np.array([-1], np.int64)}
    nodes = [helper.make_node("Shape", ["x"], ["sx"]),
             helper.make_node("Gather", ["sx", "zero"], ["n"], axis=0),
             helper.make_node("Unsqueeze", ["n", "axes0"], ["n1"]),
             helper.make_node("Concat", ["n1", "minus1"], ["shape"], axis=0),
             helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("Reshape", ["c", "shape"], ["f"]),
             helper.make_node("Gemm", ["f", "fc.w", "fc.b"], ["y"], transB=1)]
    inits["axes0"] = np.array([0], np.int64)
    return make_model(nodes, [("x", [batch, 2, 5, 5])], [("y", [batch, 4])], inits)


def test_gradients_through_a_computed_reshape():
    model = dynamic_flatten_net()
    check_gradients(model, ["w", "b", "fc.w", "fc.b"], {"x": rand(3, 2, 5, 5)}, rand(3, 4))


@pytest.mark.parametrize("trainable", ["all", "last:1"])
def test_a_dynamic_batch_model_trains_at_two_batches(trainable):
    m = dnnx.load(dynamic_flatten_net())
    tuner = m.finetune(trainable=trainable, lr=0.05, momentum=0.9)
    for batch in (6, 3):
        x, labels = rand(batch, 2, 5, 5), np.arange(batch) % 4
        losses = [tuner.step(x, labels) for _ in range(15)]
        assert losses[-1] < losses[0], (batch, losses)


@pytest.mark.parametrize("name, loss", [("zoo/shufflenet_v2_x1_0.onnx", "cross_entropy"), ("zoo2/bert.onnx", "mse")])
def test_dynamic_exports_of_the_shared_models_train_whole(name, loss):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    from _external_models import EXTERNAL, make_inputs, read_model

    if not (EXTERNAL / name).exists():
        pytest.skip(f"../shared/external/{name} is absent")
    onnx_model = read_model(name)
    m = dnnx.load(onnx_model)
    feeds, _ = make_inputs(name, onnx_model, 2)
    x = [feeds[i.name] for i in m.inputs]
    target = np.array([1, 2]) if loss == "cross_entropy" else np.zeros_like(m.run(*x))
    tuner = m.finetune(trainable="all", loss=loss, lr=1e-3, momentum=0.0)
    losses = [tuner.step(x if len(x) > 1 else x[0], target) for _ in range(3)]
    assert np.all(np.isfinite(losses)) and losses[-1] < losses[0], losses


@pytest.mark.parametrize("optimize", [False, True])
def test_a_parameter_read_only_by_foldable_nodes_trains(optimize):
    # y = x @ Transpose(w) * Gather(scale, [2, 0, 2]): w and scale meet only constants before MatMul
    # and Mul; folded at plan time, both would keep their values and get no gradient.
    nodes = [helper.make_node("Transpose", ["w"], ["wt"], perm=[1, 0]),
             helper.make_node("Gather", ["scale", "pick"], ["s"], axis=0),
             helper.make_node("MatMul", ["x", "wt"], ["h"]),
             helper.make_node("Mul", ["h", "s"], ["y"])]
    inits = {"w": rand(3, 4), "scale": rand(4), "pick": np.array([2, 0, 2], np.int64)}
    model = make_model(nodes, [("x", [5, 4])], [("y", [5, 3])], inits)
    x, target = rand(5, 4), rand(5, 3)
    grads = check_gradients(model, ["w", "scale"], {"x": x}, target)
    # mse: dL/dy = 2 (y - t) / 15; dL/dw[j, :] = sum_n dy[n, j] s[j] x[n, :]; scale[2] gathers twice
    w, scale = inits["w"].astype(np.float64), inits["scale"].astype(np.float64)
    s = scale[[2, 0, 2]]
    dy = 2 * ((x @ w.T) * s - target) / 15
    np.testing.assert_allclose(grads["w"], (dy * s).T @ x, rtol=1e-4, atol=1e-6)
    want_scale = np.zeros(4)
    np.add.at(want_scale, [2, 0, 2], (dy * (x @ w.T)).sum(axis=0))
    np.testing.assert_allclose(grads["scale"], want_scale, rtol=1e-4, atol=1e-6)
    tuner = dnnx.load(model, optimize=optimize).finetune(trainable=["w", "scale"], loss="mse", momentum=0.0)
    assert not [r for r in tuner.plan() if "folded" in r["algorithm"]], tuner.plan()
