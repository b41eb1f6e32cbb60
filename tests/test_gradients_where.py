"""Where's backward on the CPU against float64 finite differences (tests/grad_check.py): dX is dY
where the condition holds, dY's other elements go to Y, each summed over the dims its side was
broadcast along (the masks of BERT's and GPT-2's attention)."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from grad_check import check_gradients
from ort_check import make_model
from seeded_rand import SeededRand
from test_gradients_slice_split import conv_then, out_shape

import dnnx

rand = SeededRand()


@pytest.fixture(autouse=True)
def seeded_rng(request):
    rand.reseed(request.node.nodeid)


def condition(shape, seed):
    return np.asarray(np.random.default_rng(seed).random(shape) > 0.4)


# condition shapes (tests/cuda/test_cuda_slice_split_grads.py runs the same models on CUDA)
CONDITIONS = [(2, 3, 6, 7), (1, 3, 1, 7), (7,), ()]
CONDITION_IDS = ["full", "broadcast", "row", "scalar"]


def both_sides_model(cond_shape):
    """X = c * 0.5 + the mean over rows (broadcast along H), Y = c: both sides reach w and b."""
    nodes = [helper.make_node("Mul", ["c", "half"], ["c2"]),
             helper.make_node("ReduceMean", ["c"], ["m"], axes=[2], keepdims=1),
             helper.make_node("Add", ["c2", "m"], ["xv"]),
             helper.make_node("Where", ["cond", "xv", "c"], ["y"])]
    return conv_then(nodes, {"half": np.float32(0.5), "cond": condition(cond_shape, 3)})


def broadcast_x_model():
    """X = the mean over rows [2, 3, 1, 7], broadcast against Y = c."""
    nodes = [helper.make_node("ReduceMean", ["c"], ["m"], axes=[2], keepdims=1),
             helper.make_node("Where", ["cond", "m", "c"], ["y"])]
    return conv_then(nodes, {"cond": condition((2, 3, 6, 7), 5)})


@pytest.mark.parametrize("cond_shape", CONDITIONS, ids=CONDITION_IDS)
def test_where_both_sides_trained(cond_shape):
    model = both_sides_model(cond_shape)
    check_gradients(model, ["w", "b"], {"x": rand(2, 2, 6, 7)}, rand(*out_shape(model)))


def test_where_with_a_broadcast_x():
    model = broadcast_x_model()
    check_gradients(model, ["w", "b"], {"x": rand(2, 2, 6, 7)}, rand(*out_shape(model)))


def test_the_masks_split_dy_exactly():
    cond = np.array([[True, False, True]])
    nodes = [helper.make_node("Where", ["cond", "a", "b"], ["y"])]
    model = make_model(nodes, [("cond", [1, 3], TensorProto.BOOL)], [("y", [1, 3])],
                       {"a": np.zeros((1, 3), np.float32), "b": np.zeros((1, 1), np.float32)})
    _, grads = dnnx.load(model, optimize=False).finetune(trainable=["a", "b"], loss="mse").gradients(
        cond, np.full((1, 3), -1.5, np.float32))  # dL/dy = 2 (0 + 1.5) / 3 = 1 each
    np.testing.assert_allclose(grads["a"], [[1.0, 0.0, 1.0]], rtol=1e-6)
    np.testing.assert_allclose(grads["b"], [[1.0]], rtol=1e-6)
