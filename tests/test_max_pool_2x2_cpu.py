"""MaxPool's 2x2 stride-2 path on float32 (engine/backends/cpu/pool/max_pool_2x2_cpu.cc, Note [max
pool 2x2]) against onnxruntime and, bit for bit, against the general kernel's order of maxima
(NaNs and signed zeros included): even and odd planes (the rows of all planes paired as one, or a
plane at a time with the last row left out), rows of one to several 16-wide outputs with a short
end, ceil_mode where it rounds nothing up; what keeps the general kernel; and the same bits on 1
and 2 threads."""
import numpy as np
import pytest
from onnx import helper

import dnnx
from dnnx.threads import get_num_threads, set_num_threads
from ort_check import assert_matches_ort, make_model, rand


def pool_model(x_shape, **attrs):
    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], **attrs)
    return make_model([node], [("x", list(x_shape))], [("y", None)])


def algorithm(model):
    (row,) = dnnx.load(model).plan()
    return row["algorithm"]


def square_on() -> bool:
    return algorithm(pool_model([1, 1, 4, 4], strides=[2, 2])) == "direct 2x2"


needs_square = pytest.mark.skipif(not square_on(), reason="no AVX-512: the general kernel runs every pool")


def reference(x):
    """The general kernel's order: std::max(row 0, row 1), then std::max(even column, odd column),
    std::max(a, b) being b where a < b, else a."""
    h, w = x.shape[-2] // 2 * 2, x.shape[-1] // 2 * 2
    top, bottom = x[..., 0:h:2, :w], x[..., 1:h:2, :w]
    rows = np.where(top < bottom, bottom, top)
    left, right = rows[..., 0::2], rows[..., 1::2]
    return np.where(left < right, right, left)


SHAPES = [[10, 6, 28, 28], [10, 16, 10, 10], [1, 3, 7, 9], [2, 4, 6, 70], [1, 2, 2, 2], [3, 5, 9, 2],
          [1, 1, 4, 33], [2, 3, 8, 64]]


@needs_square
@pytest.mark.parametrize("x_shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_matches_ort_and_the_general_order(x_shape):
    model = pool_model(x_shape, strides=[2, 2])
    assert algorithm(model) == "direct 2x2"
    x = rand(*x_shape, seed=sum(x_shape))
    got = assert_matches_ort(model, {"x": x})["y"]
    np.testing.assert_array_equal(got.view(np.int32), reference(x).view(np.int32))


@needs_square
def test_nans_and_signed_zeros_keep_the_general_order():
    x = rand(2, 3, 6, 40, seed=7)
    flat = x.reshape(-1)
    rng = np.random.default_rng(7)
    flat[rng.choice(flat.size, 60, replace=False)] = np.nan
    flat[rng.choice(flat.size, 60, replace=False)] = 0.0
    flat[rng.choice(flat.size, 60, replace=False)] = -0.0
    got = dnnx.load(pool_model(x.shape, strides=[2, 2])).run(x)
    np.testing.assert_array_equal(got.view(np.int32), reference(x).view(np.int32))


@needs_square
def test_ceil_mode_that_rounds_nothing_up():
    assert algorithm(pool_model([1, 2, 8, 6], strides=[2, 2], ceil_mode=1)) == "direct 2x2"
    # odd sizes: ceil mode adds a last window past the input, which the general kernel runs
    model = pool_model([1, 2, 7, 6], strides=[2, 2], ceil_mode=1)
    assert algorithm(model) == "direct"
    assert_matches_ort(model, {"x": rand(1, 2, 7, 6)})


@pytest.mark.parametrize("attrs", [{"strides": [1, 1]}, {"strides": [2, 2], "pads": [0, 0, 1, 1]},
                                   {"strides": [2, 2], "dilations": [1, 2]}])
def test_other_windows_keep_the_general_kernel(attrs):
    model = pool_model([1, 3, 9, 10], **attrs)
    assert algorithm(model) == "direct"
    assert_matches_ort(model, {"x": rand(1, 3, 9, 10)})


def test_same_bits_on_one_and_two_threads():
    model = pool_model([8, 32, 56, 56], strides=[2, 2])
    x = rand(8, 32, 56, 56, seed=3)
    before, out = get_num_threads(), []
    try:
        for threads in (1, 2):
            set_num_threads(threads)
            out.append(dnnx.load(model).run(x))
    finally:
        set_num_threads(before)
    np.testing.assert_array_equal(out[0], out[1])
