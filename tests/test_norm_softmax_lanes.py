"""The lane-split Softmax/LogSoftmax rows (Note [softmax lanes]), LayerNormalization's vector rows
(Note [norm lanes]) and BatchNormalization's per-row path for a plane of one (Note [batchnorm
rows]) against onnxruntime: row lengths around the 8- and 16-lane blocks, both tails, with and
without a bias, large logits, and the thread counts giving the same bits."""
import numpy as np
import pytest
from onnx import helper

import dnnx
from ort_check import assert_matches_ort, assert_same_bits_on_one_and_two_threads, make_model, rand, run_ort

LENGTHS = [1, 7, 8, 9, 15, 16, 17, 31, 33, 192, 197]


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
@pytest.mark.parametrize("n", LENGTHS)
def test_softmax_rows(op, n):
    x = rand(3, 5, n, seed=n) * 4
    x[0, 0, -1] = 80.0  # one dominant logit, in the tail when n is past a block
    model = make_model([helper.make_node(op, ["x"], ["y"], axis=-1)], [("x", list(x.shape))], [("y", list(x.shape))])
    assert_matches_ort(model, {"x": x}, rtol=1e-5, atol=1e-6)


def test_softmax_row_with_infinities_and_nan():
    x = np.array([[0.0, -np.inf, 1.0, 2.0] * 5, [np.nan] + [0.0] * 19], np.float32)
    model = make_model([helper.make_node("Softmax", ["x"], ["y"], axis=-1)], [("x", [2, 20])], [("y", [2, 20])])
    y = dnnx.load(model).run(x)
    assert y[0, 1] == 0.0 and np.isclose(y[0].sum(), 1.0, atol=1e-6)
    assert np.all(np.isnan(y[1]))  # a NaN logit makes its row NaN


@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("with_bias", [True, False])
def test_layer_norm_rows(n, with_bias):
    x = rand(4, 3, n, seed=n) * 3 + 5.0  # an offset mean: the deviations are what count
    inits = {"s": rand(n, seed=1), "b": rand(n, seed=2)}
    ins = ["x", "s", "b"] if with_bias else ["x", "s"]
    if not with_bias:
        del inits["b"]
    model = make_model([helper.make_node("LayerNormalization", ins, ["y"], axis=-1, epsilon=1e-5)],
                       [("x", list(x.shape))], [("y", list(x.shape))], initializers=inits)
    assert_matches_ort(model, {"x": x}, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("axis", [1, -2])
def test_layer_norm_over_two_axes(axis):
    x = rand(2, 5, 13, seed=3)
    shape = list(x.shape[axis:]) if axis > 0 else list(x.shape[axis:])
    inits = {"s": rand(*shape, seed=4), "b": rand(*shape, seed=5)}
    model = make_model([helper.make_node("LayerNormalization", ["x", "s", "b"], ["y"], axis=axis)],
                       [("x", list(x.shape))], [("y", list(x.shape))], initializers=inits)
    assert_matches_ort(model, {"x": x}, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("shape", [(196, 17), (3, 128), (1, 9), (5, 7, 1), (2, 6, 3), (4, 33, 5, 5)])
def test_batchnorm_inference_planes(shape):
    c = shape[1]
    inits = {"s": rand(c, seed=1), "b": rand(c, seed=2), "m": rand(c, seed=3),
             "v": np.abs(rand(c, seed=4)) + 0.1}
    x = rand(*shape, seed=5)
    model = make_model([helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], epsilon=1e-3)],
                       [("x", list(shape))], [("y", list(shape))], initializers=inits)
    assert_matches_ort(model, {"x": x}, rtol=1e-5, atol=1e-5)


def test_same_bits_at_one_and_two_threads():
    x = rand(2, 197, 197, seed=9)
    s, b = rand(197, seed=1), rand(197, seed=2)
    nodes = [helper.make_node("LayerNormalization", ["x", "s", "b"], ["h"], axis=-1),
             helper.make_node("Softmax", ["h"], ["y"], axis=-1)]
    model = make_model(nodes, [("x", list(x.shape))], [("y", list(x.shape))], initializers={"s": s, "b": b})
    assert_same_bits_on_one_and_two_threads(model, x)


def test_softmax_rows_reaching_the_subnormals_and_an_infinite_max():
    """Note [softmax exp with scalef] and Note [softmax in avx2]: rows of 256 whose logits span ~110 below their max, so that
    the smallest probabilities are subnormal (a detector's `score > 0` reads them), against a
    float64 softmax: the normal results within 1e-5 (fast_expf's polynomial and the row's float
    sum, as the tests above allow against onnxruntime), the subnormal ones zero exactly where
    onnxruntime's are on this CPU (Note [softmax's tiny probabilities]: kept with AVX-512F, flushed
    below e^-87.68 without), the others nonzero where float64's rounds to a nonzero float32 and
    within 1e-5 of it or one subnormal step; a row whose max is +inf takes the general row (NaN,
    as onnxruntime's); the same bits on one and two threads."""
    x = (-np.linspace(0.0, 110.0, 256, dtype=np.float32))[None].repeat(4, axis=0)
    x[1] = x[1][::-1]
    x[2, 17] = np.inf
    x[3, :3] = -np.inf
    model = make_model([helper.make_node("Softmax", ["x"], ["y"], axis=-1)], [("x", [4, 256])], [("y", [4, 256])])
    y = dnnx.load(model).run(x)
    ort_y = run_ort(model, {"x": x})["y"]
    with np.errstate(invalid="ignore"):  # row 2: inf - inf
        ref = np.exp(x.astype(np.float64) - x.astype(np.float64).max(axis=1, keepdims=True))
    ref /= ref.sum(axis=1, keepdims=True)
    for row in (0, 1, 3):
        want = ref[row].astype(np.float32)
        normal = want >= np.finfo(np.float32).tiny
        np.testing.assert_allclose(y[row][normal], want[normal], rtol=1e-5)
        np.testing.assert_array_equal(y[row] == 0, ort_y[row] == 0, err_msg=f"row {row}: zeros unlike onnxruntime's")
        tiny = ~normal & (want > 0) & (ort_y[row] > 0)
        assert tiny.any() and np.all(y[row][tiny] > 0)
        kept = y[row] > 0
        np.testing.assert_allclose(y[row][~normal & kept], want[~normal & kept], rtol=1e-5, atol=1.5e-45)
    assert np.all(np.isnan(y[2]))
    np.testing.assert_array_equal(y[3, :3], 0.0)
    assert_same_bits_on_one_and_two_threads(model, {"x": x})
