"""Slice's, Split's, Gather's and Where's gradients on CUDA against the CPU's (test_cuda_layer_grads.py's oracle and
tolerances; the CPU's are checked against float64 finite differences in
tests/test_gradients_slice_split.py and tests/test_gradients_where.py). Gather's sums each index's
dY rows in index order with no atomics (Note [keyed row sums]): the same bits
on every run."""
from __future__ import annotations

import numpy as np
import pytest

from test_cuda_layer_grads import check_cuda_gradients, out_shape, rand
from test_gradients_slice_split import (GATHER_IDS, GATHERS, SLICES, embedding_model, gather_model, slice_model,
                                        split_concat_model, split_unread_model)
from test_gradients_where import CONDITION_IDS, CONDITIONS, both_sides_model, broadcast_x_model

import dnnx


@pytest.mark.parametrize("starts, ends, axes, steps", SLICES)
def test_slice(starts, ends, axes, steps):
    model = slice_model(starts, ends, axes, steps)
    check_cuda_gradients(model, ["w", "b"], {"x": rand(2, 2, 6, 7)}, rand(*out_shape(model)))


@pytest.mark.parametrize("axis, split", [(1, None), (1, [1, 2]), (3, [2, 4, 1])])
def test_split_feeding_a_concat(axis, split):
    model = split_concat_model(axis, split)
    check_cuda_gradients(model, ["w", "b"], {"x": rand(2, 2, 6, 7)}, rand(*out_shape(model)))


def test_split_with_an_unread_output():
    model = split_unread_model()
    check_cuda_gradients(model, ["w", "b"], {"x": rand(2, 2, 6, 7)}, rand(*out_shape(model)))


@pytest.mark.parametrize("axis, indices", GATHERS, ids=GATHER_IDS)
def test_gather(axis, indices):
    model = gather_model(axis, indices)
    check_cuda_gradients(model, ["w", "b"], {"x": rand(2, 2, 6, 7)}, rand(*out_shape(model)))


def test_gather_with_int32_indices():
    model = gather_model(2, [[5, 0, 5], [-2, 1, 5]], np.int32)
    check_cuda_gradients(model, ["w", "b"], {"x": rand(2, 2, 6, 7)}, rand(*out_shape(model)))


def test_an_embedding_table_is_the_same_on_every_run():
    # 600 token ids over 50 rows (most repeated, a few rows never read): the radix sort's runs
    ids = np.random.default_rng(7).integers(-50, 50, size=(4, 150))
    model = embedding_model(50, 64, ids)
    x, target = rand(4, 150, 64), rand(4, 150, 64)
    got = check_cuda_gradients(model, ["table"], {"x": x}, target)
    tuner = dnnx.load(model, optimize=False, device="cuda").finetune(trainable=["table"], loss="mse")
    for _ in range(3):
        np.testing.assert_array_equal(np.asarray(tuner.gradients([x], target)[1]["table"]), got["table"])


@pytest.mark.parametrize("cond_shape", CONDITIONS, ids=CONDITION_IDS)
def test_where_both_sides(cond_shape):
    model = both_sides_model(cond_shape)
    check_cuda_gradients(model, ["w", "b"], {"x": rand(2, 2, 6, 7)}, rand(*out_shape(model)))


def test_where_with_a_broadcast_x():
    model = broadcast_x_model()
    check_cuda_gradients(model, ["w", "b"], {"x": rand(2, 2, 6, 7)}, rand(*out_shape(model)))
