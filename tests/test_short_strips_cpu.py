"""Short strips of the CPU's packed tiles (Note [short strips] in
engine/backends/cpu/conv/conv_nhwc_tiles_cpu.h) and the packed product's 2-row bound (Note
[packed product] in conv/conv_nhwc_cpu.cc): a product or conv of at most half a strip's output
rows (of 6 at 64 filters per panel, 8 below) runs a strip of that many rows. Checked against onnxruntime
at the fp32 tolerance (tests/ort_check.py) on every panel width (16 to 64 filters, tails), on a
K of several channel blocks, with bias and Relu; and bit for bit against the full strip: each
output is the same sum in the same order whatever the strip's rows, so the first M rows of a
product of 8 rows are the M rows of the short one."""
import numpy as np
import pytest
from onnx import helper

import dnnx
from dnnx.threads import get_num_threads, set_num_threads
from ort_check import assert_matches_ort, make_model, rand
from test_conv_channels_last_cpu import conv_model, feeds_for, needs_nhwc, plan_ops
from test_packed_product_cpu import PACKED, needs_packed
from thread_check import assert_same_bits_on_one_and_two_threads


def gemm_model(m, k, n, relu=False, seed=1):
    """y = a @ b^T + c (Gemm, transB) on a constant b [n, k], then Relu."""
    inits = {"b": (rand(n, k, seed=seed) / np.sqrt(k)).astype(np.float32), "c": rand(n, seed=seed + 1)}
    nodes = [helper.make_node("Gemm", ["a", "b", "c"], ["g" if relu else "y"], transB=1)]
    if relu:
        nodes.append(helper.make_node("Relu", ["g"], ["y"]))
    return make_model(nodes, [("a", [m, k])], [("y", None)], inits)


@needs_packed
@pytest.mark.parametrize("m", [2, 3, 4, 5, 7])
@pytest.mark.parametrize("n", [16, 33, 48, 64, 100, 1000])  # panels of 16 to 64 filters, and tails
def test_short_products_match_ort(m, n):
    k = 700  # two channel blocks at 64 filters a panel (512 channels each at most)
    model = gemm_model(m, k, n, relu=n % 2 == 0)
    algorithm = dnnx.load(model).plan()[0]["algorithm"]
    assert algorithm.startswith(PACKED), algorithm
    rows, width = (int(v) for v in algorithm.split()[2].split("x"))
    full = 6 if width == 64 or "(avx2)" in algorithm else 8  # Note [avx2 tiles]: 6 x 16
    assert rows == (m if m <= full // 2 else full), algorithm
    assert_matches_ort(model, {"a": rand(m, k, seed=2)})


@needs_packed
@pytest.mark.parametrize("m", [2, 3, 4, 5])
@pytest.mark.parametrize("n", [40, 64, 130])
def test_short_strip_gives_the_full_strips_bits(m, n):
    k = 1300
    a = rand(8, k, seed=3)
    full = dnnx.load(gemm_model(8, k, n)).run(a)
    short = dnnx.load(gemm_model(m, k, n)).run(a[:m].copy())
    assert np.array_equal(short, full[:m])


@needs_packed
def test_one_row_keeps_openblas():
    model = gemm_model(1, 64, 48)
    algorithm = dnnx.load(model).plan()[0]["algorithm"]
    assert not algorithm.startswith(PACKED), algorithm
    assert_matches_ort(model, {"a": rand(1, 64, seed=4)})


@needs_packed
def test_short_product_same_bits_on_one_and_two_threads():
    model = gemm_model(3, 2000, 300)
    a = rand(3, 2000, seed=5)
    assert_same_bits_on_one_and_two_threads(model, {"a": a})


@needs_nhwc
@pytest.mark.parametrize("x_shape,k,kernel,pads", [
    ([1, 96, 1, 1], 24, 1, (0, 0, 0, 0)),   # a squeeze-and-excitation conv: one pixel
    ([1, 32, 3, 3], 40, 3, (0, 0, 0, 0)),   # one pixel, 9 taps
    ([1, 16, 2, 2], 64, 3, (1, 1, 1, 1)),   # 4 pixels of 64 filters, padded
    ([1, 48, 2, 3], 100, 1, (0, 0, 0, 0)),  # 6 pixels under the 8 of a narrower panel
])
def test_convs_of_few_pixels_match_ort(monkeypatch, x_shape, k, kernel, pads):
    monkeypatch.setenv("DNNX_CONV_NHWC_MIN_CHANNELS", "0")
    model = conv_model(x_shape, k, kernel, pads=pads, fuse="relu")
    ops = plan_ops(model)
    assert "Conv+Relu@NHWC" in ops, ops
    assert_matches_ort(model, feeds_for(model))


# Note [tail strips]: a call's last strip of m % P pixels runs on a tile of that many pixels.
@needs_packed
@pytest.mark.parametrize("m", [7, 9, 13, 49, 50])
@pytest.mark.parametrize("n", [40, 64, 130])
def test_tail_strip_gives_the_full_strips_bits(m, n):
    k = 1300  # several channel blocks: the tail accumulates across them too
    a = rand(56, k, seed=6)
    full = dnnx.load(gemm_model(56, k, n, relu=True)).run(a)
    tail = dnnx.load(gemm_model(m, k, n, relu=True)).run(a[:m].copy())
    assert np.array_equal(tail, full[:m])


@needs_nhwc
@pytest.mark.parametrize("threads", [1, 2])
def test_tail_strips_of_a_residual_conv_match_ort(monkeypatch, threads):
    # ResNet's 7x7 layers: 49 pixels, 8 strips of 6 and a tail of 1; the residual read at the tail
    monkeypatch.setenv("DNNX_CONV_NHWC_MIN_CHANNELS", "0")
    model = conv_model([1, 64, 7, 7], 256, 1, fuse="add_relu")
    before = get_num_threads()
    try:
        set_num_threads(threads)
        assert "Conv+Add+Relu@NHWC" in plan_ops(model), plan_ops(model)
        assert_matches_ort(model, feeds_for(model))
    finally:
        set_num_threads(before)


@needs_nhwc
def test_few_pixel_convs_same_bits_on_one_and_two_threads(monkeypatch):
    # Note [column-major items]: 2 threads split these by filter panels
    monkeypatch.setenv("DNNX_CONV_NHWC_MIN_CHANNELS", "0")
    for x_shape, k in (([1, 128, 7, 7], 512), ([2, 64, 14, 14], 256)):
        model = conv_model(x_shape, k, 1, fuse="add_relu")
        feeds = feeds_for(model)
        assert_same_bits_on_one_and_two_threads(model, feeds)
