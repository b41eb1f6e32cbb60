"""Slice's and Split's gradients on CUDA against the CPU's (test_cuda_layer_grads.py's oracle and
tolerances; the CPU's are checked against float64 finite differences in
tests/test_gradients_slice_split.py)."""
from __future__ import annotations

import pytest

from test_cuda_layer_grads import check_cuda_gradients, out_shape, rand
from test_gradients_slice_split import SLICES, slice_model, split_concat_model, split_unread_model


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
