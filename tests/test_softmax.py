"""Softmax and LogSoftmax: opset < 13 coerces the input to 2-D at `axis` and normalises over the
flattened tail; opset >= 13 normalises along the single `axis`. Checked against onnxruntime and
against a numpy reference of each meaning."""
import numpy as np
import pytest
from onnx import helper

import dnnx
from ort_check import assert_matches_ort, make_model, rand

OPS = ["Softmax", "LogSoftmax"]


def softmax_model(op, shape, opset, axis=None):
    attrs = {} if axis is None else {"axis": axis}
    node = helper.make_node(op, ["x"], ["y"], name="sm", **attrs)
    return make_model([node], [("x", shape)], [("y", shape)], opset=opset)


def reference(op, x, opset, axis):
    """numpy: the per-opset meaning of `axis` (None: the opset's default)."""
    rank = x.ndim
    if opset < 13:
        axis = (1 if axis is None else axis) % rank
        flat = x.reshape(int(np.prod(x.shape[:axis])), -1)
        return reference(op, flat, 13, -1).reshape(x.shape)
    axis = -1 if axis is None else axis
    shifted = x - x.max(axis=axis, keepdims=True)
    log_sum = np.log(np.exp(shifted).sum(axis=axis, keepdims=True))
    return shifted - log_sum if op == "LogSoftmax" else np.exp(shifted - log_sum)


SHAPES_AXES = [
    ([6, 10], [None, 0, 1, -1, -2]),
    ([2, 3, 5], [None, 0, 1, 2, -1, -2, -3]),
    ([2, 3, 4, 5], [None, 0, 1, 2, 3, -1, -3]),
    ([7], [None, 0, -1]),
]
CASES = [(shape, axis) for shape, axes in SHAPES_AXES for axis in axes
         if not (len(shape) == 1 and axis is None)]  # opset < 13 defaults to axis 1: none in 1-D


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("opset", [11, 13])
@pytest.mark.parametrize("shape,axis", CASES)
def test_softmax_axes(op, opset, shape, axis):
    x = rand(*shape)
    model = softmax_model(op, shape, opset, axis)
    got = assert_matches_ort(model, {"x": x})
    np.testing.assert_allclose(got["y"], reference(op, x.astype(np.float64), opset, axis),
                               rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("op", OPS)
def test_old_and_new_opsets_differ(op):
    """The same node means different things at opset 11 and 13 when axis is not the last."""
    x = rand(2, 3, 4)
    old = dnnx.load(softmax_model(op, [2, 3, 4], 11, axis=1)).run_dict({"x": x})["y"]
    new = dnnx.load(softmax_model(op, [2, 3, 4], 13, axis=1)).run_dict({"x": x})["y"]
    assert not np.allclose(old, new)
    if op == "Softmax":
        np.testing.assert_allclose(old.sum(axis=(1, 2)), 1.0, rtol=1e-5)
        np.testing.assert_allclose(new.sum(axis=1), 1.0, rtol=1e-5)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("opset", [11, 13])
@pytest.mark.parametrize("axis", [1, -1])
def test_large_logits_are_stable(op, opset, axis):
    x = (rand(4, 3, 8) * 1000.0).astype(np.float32)
    got = assert_matches_ort(softmax_model(op, [4, 3, 8], opset, axis=axis), {"x": x})
    assert np.isfinite(got["y"]).all()


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("axis", [0, 1])
def test_close_large_logits_keep_precision(op, axis):
    """Logits near 10000 differ by small amounts: x - max must come first, or the result
    rounds at float32's spacing for 10000 (about 1e-3)."""
    x = (10000.0 + np.arange(12, dtype=np.float32).reshape(3, 4) * 0.25).astype(np.float32)
    x = x if axis == 1 else x.T.copy()
    got = dnnx.load(softmax_model(op, list(x.shape), 13, axis=axis)).run_dict({"x": x})["y"]
    np.testing.assert_allclose(got, reference(op, x.astype(np.float64), 13, axis), rtol=1e-5, atol=1e-6)


def test_strided_axis_uses_workspace():
    """Along a middle axis at opset 13 the CPU kernel walks [n, inner] blocks with a workspace."""
    row = dnnx.load(softmax_model("Softmax", [2, 3, 4], 13, axis=-1)).plan()[0]
    mid = dnnx.load(softmax_model("Softmax", [2, 3, 4], 13, axis=1)).plan()[0]
    assert row["algorithm"] == "rows" and row["workspace"] == 0
    assert mid["algorithm"] == "strided axis" and mid["workspace"] == 2 * 4 * 4


@pytest.mark.parametrize("op", OPS)
def test_batch_of_rows(op):
    model = softmax_model(op, ["N", 10], 13)
    x = rand(64, 10)
    got = dnnx.load(model).run_dict({"x": x})["y"]
    np.testing.assert_allclose(got, reference(op, x.astype(np.float64), 13, None), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("opset", [11, 13])
def test_axis_out_of_range_raises(opset):
    model = softmax_model("Softmax", [2, 3], opset, axis=2)
    with pytest.raises((dnnx.InvalidModelError, dnnx.UnsupportedModelError)) as err:
        dnnx.load(model)
    assert "'sm'" in str(err.value)
