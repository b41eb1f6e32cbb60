"""The residual written over in place (Note [residual in place] in
engine/backends/cpu/conv/conv_nhwc_cpu.cc, Note [output over an input] in runtime/planner.cc): a
channels-last Conv+Add+Relu of one channel block writes its output over its residual's bytes
where nothing reads the residual later. Checked against onnxruntime at the fp32 tolerance, bit
for bit on 1 and 2 threads, and the cases that must keep the residual apart: a residual read
again later, a graph output, and a conv of several channel blocks; a graph input's array is
left as it was."""
import numpy as np
import pytest
from onnx import helper

import dnnx
from ort_check import assert_matches_ort, make_model, rand
from residual_models import weights
from test_conv_channels_last_cpu import needs_nhwc
from thread_check import assert_same_bits_on_one_and_two_threads

IN_PLACE = "output over input 3"


def block_model(c=64, k=256, hw=14, reread=False, z_is_output=False):
    """x -> conv a (c -> k) + Relu = z; conv b (k -> c) + Relu = t; conv c (c -> k) + z, Relu = y
    (a bottleneck's residual path). reread: z also feeds a later Add; z_is_output: z is a graph output."""
    inits = {"wa": weights(k, c, 1, 1, seed=1), "wb": weights(c, k, 1, 1, seed=2), "wc": weights(k, c, 1, 1, seed=3),
             "bc": rand(k, seed=4)}
    nodes = [helper.make_node("Conv", ["x", "wa"], ["za"]), helper.make_node("Relu", ["za"], ["z"]),
             helper.make_node("Conv", ["z", "wb"], ["tb"]), helper.make_node("Relu", ["tb"], ["t"]),
             helper.make_node("Conv", ["t", "wc", "bc"], ["c"]), helper.make_node("Add", ["c", "z"], ["s"]),
             helper.make_node("Relu", ["s"], ["y" if not reread else "r"])]
    outputs = [("y", None)]
    if reread:
        nodes.append(helper.make_node("Add", ["r", "z"], ["y"]))
    if z_is_output:
        outputs.append(("z", None))
    return make_model(nodes, [("x", [1, c, hw, hw])], outputs, inits)


def fused_rows(model):
    return [row for row in dnnx.load(model).plan() if row["op"] == "Conv+Add+Relu@NHWC"]


def check_threads(model, feeds):
    assert_same_bits_on_one_and_two_threads(model, feeds)


@needs_nhwc
@pytest.mark.parametrize("c,k,hw", [(64, 256, 14), (64, 256, 7), (32, 48, 9)])
def test_residual_overwritten_in_place(c, k, hw):
    model = block_model(c, k, hw)
    rows = fused_rows(model)
    assert len(rows) == 1 and rows[0]["algorithm"].endswith(IN_PLACE), rows
    feeds = {"x": rand(1, c, hw, hw, seed=5)}
    assert_matches_ort(model, feeds)
    check_threads(model, feeds)


@needs_nhwc
@pytest.mark.parametrize("reread,z_is_output", [(True, False), (False, True)])
def test_residual_read_again_stays_apart(reread, z_is_output):
    model = block_model(reread=reread, z_is_output=z_is_output)
    rows = fused_rows(model)
    assert len(rows) == 1 and IN_PLACE not in rows[0]["algorithm"], rows
    feeds = {"x": rand(1, 64, 14, 14, seed=6)}
    assert_matches_ort(model, feeds)
    check_threads(model, feeds)


@needs_nhwc
def test_several_channel_blocks_stay_apart():
    # 2400 channels: more than one channel block over 64-filter panels (512 channels at most) and
    # over the AVX2 tiles' 16-filter ones (2048 at most)
    model = block_model(c=2400, k=64, hw=5)
    rows = fused_rows(model)
    assert len(rows) == 1 and IN_PLACE not in rows[0]["algorithm"], rows
    assert_matches_ort(model, {"x": rand(1, 2400, 5, 5, seed=7)})


@needs_nhwc
def test_graph_input_residual_left_as_it_was():
    # the residual is the graph input's channels-last copy: that copy is overwritten, the
    # caller's array is not
    from test_conv_channels_last_cpu import conv_model, feeds_for
    model = conv_model([1, 64, 8, 8], 64, 1, fuse="add_relu")
    rows = fused_rows(model)
    assert len(rows) == 1 and rows[0]["algorithm"].endswith(IN_PLACE), rows
    feeds = feeds_for(model)
    z = feeds["z"].copy()
    assert_matches_ort(model, feeds)
    assert np.array_equal(feeds["z"], z)
