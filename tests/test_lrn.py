"""LRN against onnxruntime (odd windows over 4-D inputs, all it runs) and against the ONNX
formula in numpy (even windows, 3-D and 5-D inputs; onnx's reference evaluator takes 4-D only);
windows wider than the channel count."""
import numpy as np
import pytest
from onnx import helper

import dnnx
from ort_check import FP32_ATOL, FP32_RTOL, assert_matches_ort, make_model, rand


def lrn_model(x_shape, **attrs):
    node = helper.make_node("LRN", ["x"], ["y"], **attrs)
    return make_model([node], [("x", x_shape)], [("y", None)])


@pytest.mark.parametrize("x_shape,attrs", [
    ([2, 8, 5, 5], {"size": 5}),                                          # AlexNet's LRN
    ([1, 6, 4, 3], {"size": 3, "alpha": 1e-3, "beta": 0.5, "bias": 2.0}),
    ([2, 3, 4, 4], {"size": 7, "alpha": 0.1}),                            # window wider than C
    ([1, 5, 2, 3], {"size": 1}),
])
def test_lrn_matches_ort(x_shape, attrs):
    assert_matches_ort(lrn_model(x_shape, **attrs), {"x": rand(*x_shape)})


def lrn_numpy(x, size, alpha=1e-4, beta=0.75, bias=1.0):
    """The ONNX spec: the window of channel c is [c - floor((size-1)/2), c + ceil((size-1)/2)]."""
    channels = x.shape[1]
    square_sum = np.zeros_like(x, dtype=np.float64)
    for c in range(channels):
        lo, hi = max(0, c - (size - 1) // 2), min(channels - 1, c + size // 2)
        square_sum[:, c] = (x[:, lo:hi + 1].astype(np.float64) ** 2).sum(axis=1)
    return (x / (bias + alpha / size * square_sum) ** beta).astype(np.float32)


@pytest.mark.parametrize("x_shape,attrs", [
    ([1, 6, 4, 3], {"size": 4, "alpha": 1e-2}),  # even window: one more channel after than before
    ([2, 5, 7], {"size": 3, "alpha": 0.1}),
    ([1, 4, 2, 3, 2], {"size": 2, "beta": 0.9}),
])
def test_lrn_matches_the_onnx_formula(x_shape, attrs):
    model = lrn_model(x_shape, **attrs)
    x = rand(*x_shape)
    want = lrn_numpy(x, **attrs)
    np.testing.assert_allclose(dnnx.load(model).run(x), want, rtol=FP32_RTOL, atol=FP32_ATOL)
