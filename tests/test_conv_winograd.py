"""The CPU's Winograd F(2x2, 3x3) conv (engine/backends/cpu/conv/conv_winograd_cpu.cc, Note [winograd
conv]) against onnxruntime: ResNet's 3x3 shapes and odd ones (odd output sizes, so partial tiles;
pads 0, 1, 2 and asymmetric; with and without bias; Relu and Add+Relu fused), batch 1 and 3 on 1
and 2 threads with the same bits, and the convs it leaves to im2col+gemm."""
import numpy as np
import pytest
from onnx import helper

import dnnx
from dnnx.threads import blas_core_name, get_num_threads, set_num_threads
from ort_check import assert_matches_ort, make_model, rand
from residual_models import weights

pytestmark = [pytest.mark.skipif(blas_core_name() == "unknown", reason="no CPU backend"), pytest.mark.usefixtures("nchw_kernels")]

WINOGRAD = "winograd F(2x2,3x3)"


@pytest.fixture(autouse=True)
def restore_threads():
    before = get_num_threads()
    yield
    set_num_threads(before)


def conv_model(x_shape, m, pads=(1, 1, 1, 1), bias=True, fuse=None, seed=1):
    """Conv 3x3 (stride 1) of x_shape [N, C, H, W] to m filters; fuse: None, "relu" or "add_relu"
    (the residual z an input)."""
    n, c, h, w = x_shape
    inits = {"w": weights(m, c, 3, 3, seed=seed)}
    inputs = ["x", "w"]
    if bias:
        inits["b"] = rand(m, seed=seed + 1)
        inputs.append("b")
    out = [n, m, h + pads[0] + pads[2] - 2, w + pads[1] + pads[3] - 2]
    nodes = [helper.make_node("Conv", inputs, ["c" if fuse else "y"], name="conv", kernel_shape=[3, 3],
                              pads=list(pads))]
    graph_inputs = [("x", list(x_shape))]
    if fuse == "relu":
        nodes.append(helper.make_node("Relu", ["c"], ["y"], name="relu"))
    elif fuse == "add_relu":
        nodes += [helper.make_node("Add", ["c", "z"], ["s"], name="add"),
                  helper.make_node("Relu", ["s"], ["y"], name="relu")]
        graph_inputs.append(("z", out))
    return make_model(nodes, graph_inputs, [("y", None)], inits), out


def algorithm(model):
    (row,) = dnnx.load(model).plan()
    return row["algorithm"]


# (x shape, filters, pads): ResNet-50's layer1-3 shapes at batch 1, odd sizes (partial tiles in
# either dim), every pad from 0 to 2, asymmetric pads, filters and channels not multiples of 8.
CASES = [
    ([1, 64, 56, 56], 64, (1, 1, 1, 1)),
    ([1, 128, 28, 28], 128, (1, 1, 1, 1)),
    ([1, 256, 14, 14], 256, (1, 1, 1, 1)),
    ([2, 17, 13, 15], 19, (1, 1, 1, 1)),   # OH 13, OW 15: the last tile row and column half used
    ([1, 16, 12, 12], 16, (1, 1, 1, 1)),   # 12x12: exactly 36 tiles, the fewest taken
    ([1, 64, 34, 34], 16, (0, 0, 0, 0)),   # unpadded (an image too large for the direct conv)
    ([1, 20, 12, 17], 24, (2, 2, 2, 2)),   # pad 2
    ([1, 18, 15, 12], 21, (1, 0, 2, 1)),   # asymmetric
    ([3, 33, 16, 21], 40, (1, 1, 1, 1)),
]


@pytest.mark.parametrize("x_shape, m, pads", CASES)
@pytest.mark.parametrize("bias", [True, False])
def test_winograd_conv_matches_ort(x_shape, m, pads, bias):
    model, _ = conv_model(x_shape, m, pads, bias=bias)
    assert algorithm(model).startswith(WINOGRAD)
    assert_matches_ort(model, {"x": rand(*x_shape, seed=3)})


@pytest.mark.parametrize("x_shape, m, pads", CASES[2:5])
@pytest.mark.parametrize("fuse", ["relu", "add_relu"])
def test_winograd_conv_fused_epilogues_match_ort(x_shape, m, pads, fuse):
    model, out = conv_model(x_shape, m, pads, fuse=fuse)
    (row,) = dnnx.load(model).plan()
    assert row["op"] == {"relu": "Conv+Relu", "add_relu": "Conv+Add+Relu"}[fuse]
    assert row["algorithm"].startswith(WINOGRAD)
    feeds = {"x": rand(*x_shape, seed=4)}
    if fuse == "add_relu":
        feeds["z"] = rand(*out, seed=5)
    assert_matches_ort(model, feeds)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("batch", [1, 3])
def test_winograd_conv_gives_the_same_bits_on_any_threads(threads, batch):
    # Batch 1 splits each stage (channels, the 16 GEMMs, filters); batch 3 splits the images.
    model, out = conv_model([batch, 33, 17, 19], 40, fuse="add_relu")
    feeds = {"x": rand(batch, 33, 17, 19, seed=7), "z": rand(*out, seed=8)}
    set_num_threads(1)
    want = dnnx.load(model).run_dict(feeds)["y"]
    set_num_threads(threads)
    m = dnnx.load(model)
    assert m.plan()[0]["algorithm"].startswith(WINOGRAD)
    np.testing.assert_array_equal(m.run_dict(feeds)["y"], want)
    assert_matches_ort(model, feeds)


@pytest.mark.parametrize("x_shape, m, attrs, reason", [
    ([1, 64, 7, 7], 64, {}, "fewer than 36 output tiles"),         # ResNet's layer4: narrow GEMMs
    ([1, 8, 20, 20], 64, {}, "fewer than 16 filters or channels"),
    ([1, 32, 20, 20], 32, {"strides": [2, 2]}, "strides are [1,2,2]"),
    ([1, 32, 20, 20], 32, {"dilations": [2, 2]}, "dilations are [1,2,2]"),
    ([1, 128, 20, 20], 128, {"group": 2}, "grouped"),
])
def test_convs_winograd_leaves_to_im2col(x_shape, m, attrs, reason):
    # (64 or more filters a group: a padded direct conv takes 32 or fewer, tests/test_conv_direct.py;
    # 16 or more channels a group run on the packed tiles where they do: Note [nchw convs on the tiles])
    c = x_shape[1] // attrs.get("group", 1)
    node = helper.make_node("Conv", ["x", "w"], ["y"], name="conv", pads=[1, 1, 1, 1], **attrs)
    model = make_model([node], [("x", x_shape)], [("y", None)], {"w": weights(m, c, 3, 3, seed=1)})
    (row,) = dnnx.load(model).plan()
    assert row["algorithm"].startswith(("im2col+gemm", "nchw->nhwc packed gemm"))
    assert (WINOGRAD, reason) in [tuple(r) for r in row["rejected"]]
    assert_matches_ort(model, {"x": rand(*x_shape, seed=2)})
