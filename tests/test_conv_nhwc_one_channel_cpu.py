"""The CPU's channels-last conv of one input channel (Note [one-channel nhwc conv] in
engine/backends/cpu/conv/conv_nhwc_one_channel_cpu.cc) against onnxruntime at the fp32 tolerance
(tests/ort_check.py): 3x3, 5x5 and 11x11 kernels, strides 1, 2 and 3 (the constant-stride rows and
the general one), pads on every side (asymmetric too), dilation, filter counts off the 16-wide
vectors (every panel width, V = 1 to 4), batch 2, the fusions; the same bits on 1 and 2 threads,
and the portable rows (no AVX-512) in a child process."""
import os
import subprocess
import sys

import numpy as np
import pytest

import dnnx
from dnnx.threads import set_num_threads
from ort_check import assert_matches_ort
# every_region: that file's autouse fixture (every region channels-last, the thread count restored)
from test_conv_channels_last_cpu import REPO, conv_model, every_region, feeds_for, needs_nhwc  # noqa: F401


def one_channel_rows(model):
    return [row for row in dnnx.load(model).plan() if "one channel" in row["algorithm"]]


# (x shape, filters, kernel, strides, pads, dilations)
SHAPES = [
    ([1, 1, 32, 128], 32, 3, (1, 1), (1, 1, 1, 1), (1, 1)),  # crnn's stem
    ([2, 1, 17, 23], 20, 3, (2, 2), (1, 0, 1, 1), (1, 1)),
    ([1, 1, 19, 21], 5, 5, (1, 1), (2, 2, 2, 2), (1, 1)),
    ([1, 1, 30, 41], 40, 5, (2, 2), (2, 1, 0, 2), (1, 1)),
    ([1, 1, 28, 28], 70, 5, (1, 1), (0, 0, 0, 0), (1, 1)),
    ([1, 1, 16, 18], 48, 3, (2, 1), (1, 1, 1, 1), (2, 2)),
    ([1, 1, 20, 25], 24, 3, (3, 3), (1, 2, 0, 1), (1, 1)),
    ([1, 1, 40, 50], 16, 11, (2, 1), (5, 5, 5, 5), (1, 1)),
    ([2, 1, 9, 7], 100, (3, 5), (1, 2), (1, 2, 1, 2), (1, 1)),
    ([1, 1, 3, 4], 33, 5, (1, 1), (2, 2, 2, 2), (1, 1)),  # windows wider than X
]


@needs_nhwc
@pytest.mark.parametrize("x_shape,k,kernel,strides,pads,dilations", SHAPES)
def test_one_channel_conv_matches_ort(x_shape, k, kernel, strides, pads, dilations):
    model = conv_model(x_shape, k, kernel, strides, pads, dilations)
    assert one_channel_rows(model), dnnx.load(model).plan()
    assert_matches_ort(model, feeds_for(model))


@needs_nhwc
@pytest.mark.parametrize("fuse", [None, "relu", "add_relu", "relu6", "hardswish", "silu"])
@pytest.mark.parametrize("bias", [True, False])
def test_one_channel_fusions_match_ort(fuse, bias):
    model = conv_model([1, 1, 13, 30], 24, 3, strides=(1, 2), pads=(1, 1, 1, 1), bias=bias, fuse=fuse)
    assert one_channel_rows(model), dnnx.load(model).plan()
    feeds = feeds_for(model)
    feeds["x"] *= 3  # values past Clip's 6 and HardSwish's +-3
    assert_matches_ort(model, feeds)


@needs_nhwc
@pytest.mark.parametrize("x_shape,k,kernel,strides", [([2, 1, 33, 47], 24, 3, (1, 1)), ([1, 1, 64, 64], 40, 5, (2, 2))])
def test_one_channel_same_bits_on_one_and_two_threads(x_shape, k, kernel, strides):
    model = conv_model(x_shape, k, kernel, strides, pads=(1, 2, 1, 2), fuse="relu6")
    feeds = feeds_for(model)
    results = []
    for threads in (1, 2):
        set_num_threads(threads)
        m = dnnx.load(model)
        assert any("one channel" in row["algorithm"] for row in m.plan())
        results.append(m.run_dict(feeds)["y"])
    assert np.array_equal(results[0], results[1])


@needs_nhwc
def test_filter_as_an_input_takes_the_tiles():
    model = conv_model([1, 1, 12, 12], 16, 3, pads=(1, 1, 1, 1), weight_input=True)
    assert not one_channel_rows(model)
    assert_matches_ort(model, feeds_for(model))


CHILD = """
import sys
sys.path.insert(0, {tests!r})
import dnnx
import test_conv_nhwc_one_channel_cpu as t
from ort_check import assert_matches_ort
for shape, k, kernel, strides, pads, dil in t.SHAPES[:5]:
    model = t.conv_model(shape, k, kernel, strides, pads, dil, fuse="relu")
    print("algorithms", [row["algorithm"] for row in dnnx.load(model).plan()])
    assert_matches_ort(model, t.feeds_for(model))
print("ok")
"""


def test_portable_rows_in_a_child():
    env = dict(os.environ, DNNX_CONV_NHWC="portable", DNNX_CONV_NHWC_MIN_CHANNELS="0")
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "tests"), env.get("PYTHONPATH", "")])
    out = subprocess.run([sys.executable, "-c", CHILD.format(tests=str(REPO / "tests"))], env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    assert out.stdout.strip().endswith("ok")
    assert "one channel (portable)" in out.stdout, out.stdout[-2000:]
