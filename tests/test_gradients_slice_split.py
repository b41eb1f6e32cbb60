"""Slice's, Split's and Gather's backward on the CPU against float64 finite differences
(tests/grad_check.py), a trainable Conv before each so the gradient flows through it: steps of 1,
2 and -1, a subset of axes, opset 9's attributes; Split into equal and given parts, with an output
that nothing reads (its part of dX is 0)."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from grad_check import check_gradients
from ort_check import make_model
from seeded_rand import SeededRand

rand = SeededRand()


@pytest.fixture(autouse=True)
def seeded_rng(request):
    rand.reseed(request.node.nodeid)


def out_shape(model):
    return [d.dim_value for d in model.graph.output[0].type.tensor_type.shape.dim]


def conv_then(nodes, inits, opset=13):
    """x [2, 2, 6, 7] -> Conv (3 filters, pads 1) -> c [2, 3, 6, 7] -> nodes -> y."""
    inits = {"w": rand(3, 2, 3, 3, scale=0.5), "b": rand(3, scale=0.1), **inits}
    conv = helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    return make_model([conv, *nodes], [("x", [2, 2, 6, 7])], [("y", None)], inits, opset=opset)


# (starts, ends, axes, steps)
SLICES = [
    ([1], [5], [2], [1]),
    ([0, 1], [3, 7], [1, 3], [2, 2]),
    ([-1], [-100], [3], [-1]),                  # the last axis reversed
    ([5, 0], [0, 6], [2, 3], [-2, 3]),
    ([0, 0, 0, 0], [1, 3, 6, 7], [0, 1, 2, 3], [1, 1, 1, 1]),
]


def slice_model(starts, ends, axes, steps):
    consts = {"starts": np.array(starts, np.int64), "ends": np.array(ends, np.int64),
              "axes": np.array(axes, np.int64), "steps": np.array(steps, np.int64)}
    return conv_then([helper.make_node("Slice", ["c", "starts", "ends", "axes", "steps"], ["y"])], consts)


def split_concat_model(axis, split):
    """Split's parts concatenated back in reverse order."""
    parts = len(split) if split else 3
    inits = {"split": np.array(split, np.int64)} if split else {}
    nodes = [helper.make_node("Split", ["c", "split"] if split else ["c"], [f"p{i}" for i in range(parts)], axis=axis),
             helper.make_node("Concat", [f"p{i}" for i in reversed(range(parts))], ["y"], axis=axis)]
    return conv_then(nodes, inits)


def split_unread_model():
    """Only p1 reaches the loss: dX is dY in p1's part and 0 in p0's and p2's."""
    nodes = [helper.make_node("Split", ["c"], ["p0", "p1", "p2"], axis=1), helper.make_node("Relu", ["p1"], ["y"])]
    return conv_then(nodes, {})


@pytest.mark.parametrize("starts, ends, axes, steps", SLICES)
def test_slice(starts, ends, axes, steps):
    model = slice_model(starts, ends, axes, steps)
    check_gradients(model, ["w", "b"], {"x": rand(2, 2, 6, 7)}, rand(*out_shape(model)))


def test_slice_opset9_attributes():
    node = helper.make_node("Slice", ["c"], ["y"], starts=[1, 2], ends=[3, 6], axes=[1, 3])
    model = conv_then([node], {}, opset=9)
    check_gradients(model, ["w", "b"], {"x": rand(2, 2, 6, 7)}, rand(*out_shape(model)))


@pytest.mark.parametrize("axis, split", [(1, None), (1, [1, 2]), (3, [2, 4, 1]), (2, [6])])
def test_split_feeding_a_concat(axis, split):
    model = split_concat_model(axis, split)
    check_gradients(model, ["w", "b"], {"x": rand(2, 2, 6, 7)}, rand(*out_shape(model)))


def test_split_with_an_unread_output():
    model = split_unread_model()
    check_gradients(model, ["w", "b"], {"x": rand(2, 2, 6, 7)}, rand(*out_shape(model)))


# --- Gather (tests/cuda/test_cuda_slice_split_grads.py runs the same cases on CUDA) --------------
# (axis, indices): a repeated index adds its dY rows up
GATHERS = [(1, [2, 0]), (3, [[6, -1], [0, 6]]), (0, 1), (2, [3, 3, 1])]
GATHER_IDS = ["channels", "repeated-2d-negative", "scalar", "repeated"]


def gather_model(axis, indices, index_type=np.int64):
    nodes = [helper.make_node("Gather", ["c", "idx"], ["y"], axis=axis)]
    return conv_then(nodes, {"idx": np.array(indices, index_type)})


def embedding_model(rows, width, indices):
    """An embedding table [rows, width] (the parameter) gathered by constant token ids [batch, seq],
    then scaled by x: the gradient of the table is Gather's own (BERT's and GPT-2's first layer)."""
    nodes = [helper.make_node("Gather", ["table", "ids"], ["e"], axis=0),
             helper.make_node("Mul", ["e", "x"], ["y"])]
    ids = np.asarray(indices)
    return make_model(nodes, [("x", [*ids.shape, width])], [("y", None)],
                      {"table": rand(rows, width), "ids": ids})


@pytest.mark.parametrize("axis, indices", GATHERS, ids=GATHER_IDS)
def test_gather(axis, indices):
    model = gather_model(axis, indices)
    check_gradients(model, ["w", "b"], {"x": rand(2, 2, 6, 7)}, rand(*out_shape(model)))


def test_gather_of_an_embedding_table():
    ids = np.array([[3, 0, 3, 5], [5, 5, -1, 2]], np.int64)  # repeated, negative, row 1 unread
    model = embedding_model(7, 5, ids)
    check_gradients(model, ["table"], {"x": rand(2, 4, 5)}, rand(2, 4, 5))
