"""Slice's and Split's gradients on CUDA against the CPU's (test_cuda_layer_grads.py's oracle and
tolerances; the CPU's are checked against float64 finite differences in
tests/test_gradients_slice_split.py)."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from test_cuda_layer_grads import check_cuda_gradients, out_shape, rand
from test_gradients_slice_split import SLICES, conv_then


@pytest.mark.parametrize("starts, ends, axes, steps", SLICES)
def test_slice(starts, ends, axes, steps):
    consts = {"starts": np.array(starts, np.int64), "ends": np.array(ends, np.int64),
              "axes": np.array(axes, np.int64), "steps": np.array(steps, np.int64)}
    model = conv_then([helper.make_node("Slice", ["c", "starts", "ends", "axes", "steps"], ["y"])], consts)
    check_cuda_gradients(model, ["w", "b"], {"x": rand(2, 2, 6, 7)}, rand(*out_shape(model)))


@pytest.mark.parametrize("axis, split", [(1, None), (1, [1, 2]), (3, [2, 4, 1])])
def test_split_feeding_a_concat(axis, split):
    parts = len(split) if split else 3
    inits = {"split": np.array(split, np.int64)} if split else {}
    nodes = [helper.make_node("Split", ["c", "split"] if split else ["c"], [f"p{i}" for i in range(parts)], axis=axis),
             helper.make_node("Concat", [f"p{i}" for i in reversed(range(parts))], ["y"], axis=axis)]
    model = conv_then(nodes, inits)
    check_cuda_gradients(model, ["w", "b"], {"x": rand(2, 2, 6, 7)}, rand(*out_shape(model)))


def test_split_with_an_unread_output():
    nodes = [helper.make_node("Split", ["c"], ["p0", "p1", "p2"], axis=1), helper.make_node("Relu", ["p1"], ["y"])]
    model = conv_then(nodes, {})
    check_cuda_gradients(model, ["w", "b"], {"x": rand(2, 2, 6, 7)}, rand(*out_shape(model)))
