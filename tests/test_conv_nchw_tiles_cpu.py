"""Convs in ONNX's layout on the CPU's packed tiles through channels-last copies (Note [nchw convs
on the tiles] in engine/backends/cpu/conv/conv_nchw_tiles_cpu.cc) against onnxruntime at the
fp32 tolerance (tests/ort_check.py). 3-D: kernels of 1 to 7 taps a side, strides, padding on
every side (asymmetric too), dilations, groups, batch 2, a stem of 3 channels (gathered rows),
filter counts off the 16-wide tile columns, spatial sizes off the copies' 64-position blocks;
1-D and 2-D ones of 16+ channels a group (a narrow region keeps them in ONNX's layout: speech_gru's
11x11 convs); the fused forms (Relu, the residual Add, Clip, HardSwish); the same bits on 1 and
2 threads; and what keeps the NCHW kernels (a filter that is a graph input, a 1x1x1 kernel, a
2-D conv of few channels, DNNX_CONV_NHWC=off), named in the plan."""
import numpy as np
import pytest
from onnx import helper

import dnnx
from ort_check import assert_matches_ort, make_model, rand
from test_conv_channels_last_cpu import append_fused_tail
from test_packed_product_cpu import needs_packed
from thread_check import assert_same_bits_on_one_and_two_threads

TILES = "nchw->nhwc packed gemm"


def conv3d_model(x_shape, k, kernel, strides=(1, 1, 1), pads=(0,) * 6, dilations=(1, 1, 1), group=1, fuse=None,
                 weight_input=False):
    """A Conv of any spatial rank (the name is the common case): pads as [begin..., end...]."""
    n, c, *spatial = x_shape
    rank = len(spatial)
    fan_in = c // group * int(np.prod(kernel))
    inits = {"b": rand(k, seed=2)}
    inputs = [("x", list(x_shape))]
    if weight_input:
        inputs.append(("w", [k, c // group, *kernel]))
    else:
        inits["w"] = (rand(k, c // group, *kernel, seed=1) / np.sqrt(fan_in)).astype(np.float32)
    attrs = dict(kernel_shape=list(kernel), strides=list(strides), pads=list(pads), dilations=list(dilations),
                 group=group)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c" if fuse else "y"], **attrs)]
    out = [(size + pads[i] + pads[i + rank] - ((kernel[i] - 1) * dilations[i] + 1)) // strides[i] + 1
           for i, size in enumerate(spatial)]
    append_fused_tail(fuse, nodes, inputs, inits, [n, k, *out])
    return make_model(nodes, inputs, [("y", None)], inits)


def feeds_for(model, scale=1.0):
    feeds = {}
    for i, vi in enumerate(model.graph.input):
        shape = [d.dim_value for d in vi.type.tensor_type.shape.dim]
        feeds[vi.name] = rand(*shape, seed=3 + i) * np.float32(scale)
    return feeds


def conv_row(model):
    return next(row for row in dnnx.load(model).plan() if row["op"].startswith("Conv"))


# (x shape, filters, kernel, strides, pads, dilations, group); a small unit-stride conv of up to
# 32 filters keeps the direct conv (Note [padded direct conv]), so these have more or a stride.
CASES = [
    ([1, 64, 4, 10, 10], 64, (3, 3, 3), (1, 1, 1), (1,) * 6, (1, 1, 1), 1),    # r3d_18's layers
    ([2, 3, 5, 17, 17], 32, (3, 7, 7), (1, 2, 2), (1, 3, 3, 1, 3, 3), (1, 1, 1), 1),  # its stem: gathered
    ([1, 16, 3, 9, 8], 20, (1, 3, 3), (2, 2, 2), (0,) * 6, (1, 1, 1), 1),       # a 2-D window, strided
    ([1, 8, 6, 7, 7], 24, (3, 3, 3), (1, 1, 1), (1,) * 6, (2, 1, 1), 2),        # dilated depth, groups
    ([1, 12, 5, 6, 9], 70, (2, 3, 1), (2, 1, 3), (0, 2, 1, 1, 0, 0), (1, 2, 1), 1),  # asymmetric everything
    ([1, 5, 4, 5, 6], 40, (3, 3, 3), (1, 1, 1), (2, 2, 2, 2, 2, 2), (1, 1, 1), 1),  # padding past the taps
    ([1, 3, 4, 9, 11], 40, (1, 5, 5), (1, 1, 1), (0, 2, 3, 0, 2, 1), (1, 1, 2), 1),  # gathered, dilated along W
]


# 1-D and 2-D convs of 16+ channels a group, alone in a narrow region (under 32 channels and
# filters: Note [narrow regions]), so in ONNX's layout.
LOWER_RANKS = [
    ([1, 16, 40, 50], 16, (11, 11), (2, 1), (5, 5, 5, 5), (1, 1), 1),  # speech_gru's second conv
    ([2, 20, 9, 13], 24, (3, 5), (1, 2), (0, 2, 1, 1), (2, 1), 1),    # dilated, asymmetric pads
    ([1, 32, 7, 7], 20, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 2),      # groups of 16
    ([1, 24, 100], 40, (5,), (1,), (2, 2), (1,), 1),                   # 1-D
]


@needs_packed
@pytest.mark.parametrize("x_shape,k,kernel,strides,pads,dilations,group", CASES + LOWER_RANKS)
def test_conv_on_the_tiles_matches_ort(x_shape, k, kernel, strides, pads, dilations, group):
    model = conv3d_model(x_shape, k, kernel, strides, pads, dilations, group)
    assert conv_row(model)["algorithm"].startswith(TILES)
    assert_matches_ort(model, feeds_for(model))


@needs_packed
def test_a_2d_conv_of_few_channels_keeps_im2col():
    model = conv3d_model([1, 1, 80, 100], 16, (11, 11), (2, 2), (5, 5, 5, 5), (1, 1))  # speech_gru's stem
    row = conv_row(model)
    assert row["algorithm"].startswith("im2col+gemm"), row
    assert any("1 channels per group" in why for _, why in row["rejected"]), row["rejected"]


@needs_packed
def test_the_off_switch_keeps_im2col(monkeypatch):
    monkeypatch.setenv("DNNX_CONV_NHWC", "off")
    model = conv3d_model(*CASES[0][:5])
    assert conv_row(model)["algorithm"].startswith("im2col+gemm")


@needs_packed
@pytest.mark.parametrize("fuse,op", [("relu", "Conv+Relu"), ("add_relu", "Conv+Add+Relu"), ("relu6", "Conv+Clip"),
                                     ("hardswish", "Conv+HardSwish")])
def test_fused_conv3d_matches_ort(fuse, op):
    model = conv3d_model([1, 16, 4, 6, 7], 40, (3, 3, 3), pads=(1,) * 6, fuse=fuse)
    row = conv_row(model)
    assert row["op"] == op and row["algorithm"].startswith(TILES), row
    assert_matches_ort(model, feeds_for(model, scale=4))  # values past Clip's 6 and HardSwish's +-3


@needs_packed
def test_conv3d_same_bits_on_one_and_two_threads():
    model = conv3d_model([1, 32, 5, 12, 12], 48, (3, 3, 3), pads=(1,) * 6, fuse="add_relu")
    feeds = feeds_for(model)
    assert_same_bits_on_one_and_two_threads(model, feeds)


@needs_packed
def test_a_1x1x1_kernel_keeps_its_gemm():
    model = conv3d_model([1, 16, 3, 9, 8], 20, (1, 1, 1), (2, 2, 2))
    assert conv_row(model)["algorithm"] == "gather+gemm(1x1)"


@needs_packed
def test_a_filter_input_keeps_the_nchw_kernels():
    model = conv3d_model([1, 8, 3, 6, 6], 40, (3, 3, 3), pads=(1,) * 6, weight_input=True)
    row = conv_row(model)
    assert row["algorithm"].startswith("im2col+gemm"), row
    assert any("not a constant" in why for _, why in row["rejected"]), row["rejected"]
    assert_matches_ort(model, feeds_for(model))
