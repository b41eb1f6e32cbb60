"""The CPU's direct conv (engine/backends/cpu/conv/conv_direct_cpu.cc, Note [direct conv]) against
onnxruntime: a sweep of the shapes it takes (filter counts around its panel heights, output rows
around its 8- and 16-wide vectors and their short ends, groups, 1-D to 3-D, batch 1 split across threads),
its fused epilogues (Conv+Relu, Conv+Add+Relu), and the convs it leaves to im2col+gemm."""
import numpy as np
import pytest
from onnx import helper

import dnnx
from dnnx.threads import blas_core_name, get_num_threads, set_num_threads
from ort_check import assert_matches_ort, assert_same_bits_on_one_and_two_threads, make_model, rand
from residual_models import weights

pytestmark = [pytest.mark.skipif(blas_core_name() == "unknown", reason="no CPU backend"), pytest.mark.usefixtures("nchw_kernels")]


@pytest.fixture(autouse=True)
def restore_threads():
    before = get_num_threads()
    yield
    set_num_threads(before)


def conv_model(x_shape, w_shape, bias=True, relu=False, group=1, seed=1):
    inits = {"w": weights(*w_shape, seed=seed)}
    inputs = ["x", "w"]
    if bias:
        inits["b"] = rand(w_shape[0], seed=seed + 1)
        inputs.append("b")
    nodes = [helper.make_node("Conv", inputs, ["c" if relu else "y"], name="conv", group=group)]
    if relu:
        nodes.append(helper.make_node("Relu", ["c"], ["y"], name="relu"))
    return make_model(nodes, [("x", list(x_shape))], [("y", None)], inits)


def algorithm(model, **kwargs):
    (row,) = dnnx.load(model, **kwargs).plan()
    return row["algorithm"]


# (x shape, w shape, group): output widths 1-24 (full vectors, short ends, several per row),
# filter counts 1-50 (every panel height, short last panels), 1-D and 3-D windows, groups.
CASES = [
    ([3, 20, 12, 12], [50, 20, 5, 5], 1),   # LeNet conv2: OW 8
    ([2, 1, 28, 28], [20, 1, 5, 5], 1),     # LeNet conv1: OW 24, three vectors a row
    ([2, 3, 10, 14], [7, 3, 3, 3], 1),      # OW 12: a vector and a 4-lane end
    ([1, 2, 9, 15], [13, 2, 3, 3], 1),      # OW 13: a 5-lane end; 13 filters
    ([2, 4, 8, 10], [1, 4, 3, 3], 1),       # one filter
    ([1, 3, 7, 9], [2, 3, 2, 3], 1),        # two filters, OW 7 (one short vector a row)
    ([2, 5, 6, 8], [3, 5, 1, 2], 1),        # three filters, OW 7
    ([1, 2, 11, 21], [4, 2, 4, 4], 1),      # four filters, OW 18
    ([1, 3, 6, 11], [5, 3, 2, 4], 1),       # OW 8 from a wider input
    ([2, 2, 7, 26], [6, 2, 3, 3], 1),       # six filters, OW 24
    ([1, 6, 9, 17], [11, 6, 2, 2], 1),      # OW 16
    ([2, 4, 8, 17], [8, 2, 3, 3], 2),       # groups, OW 15
    ([1, 6, 9, 9], [9, 2, 2, 2], 3),        # three groups of three filters, OW 8
    ([1, 8, 6, 10], [8, 1, 3, 3], 8),       # depthwise, OW 8
    ([2, 3, 30], [5, 3, 7], 1),             # 1-D, OW 24
    ([1, 2, 4, 5, 10], [3, 2, 2, 2, 3], 1), # 3-D, OW 8
    # 16-wide tiles (Note [tap gemm in avx512]): short vectors inside a tile, up to 4 a tile
    ([2, 6, 14, 14], [16, 6, 5, 5], 1),     # LeNet-5 conv2: OW 10, a 10-lane vector a row
    ([1, 2, 5, 37], [5, 2, 3, 3], 1),       # OW 35: two 16-lane vectors and a 3-lane one
    ([1, 3, 6, 70], [6, 3, 2, 3], 1),       # OW 68: a row fills one tile and starts the next
]


@pytest.mark.parametrize("x_shape, w_shape, group", CASES)
@pytest.mark.parametrize("bias", [True, False])
def test_direct_conv_matches_ort(x_shape, w_shape, group, bias):
    model = conv_model(x_shape, w_shape, bias=bias, group=group)
    assert algorithm(model).startswith("direct")
    assert_matches_ort(model, {"x": rand(*x_shape, seed=3)})


@pytest.mark.parametrize("x_shape, w_shape, group", CASES[:4] + CASES[11:13])
def test_direct_conv_relu_matches_ort(x_shape, w_shape, group):
    model = conv_model(x_shape, w_shape, relu=True, group=group)
    (row,) = dnnx.load(model).plan()
    assert (row["op"], row["algorithm"].split(" ")[0]) == ("Conv+Relu", "direct")
    assert_matches_ort(model, {"x": rand(*x_shape, seed=4)})


@pytest.mark.parametrize("x_shape, w_shape", [([2, 4, 10, 14], [6, 4, 3, 3]), ([1, 3, 9, 15], [7, 3, 3, 3])])
def test_direct_conv_add_relu_matches_ort(x_shape, w_shape):
    out = [x_shape[0], w_shape[0], x_shape[2] - w_shape[2] + 1, x_shape[3] - w_shape[3] + 1]
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv"),
             helper.make_node("Add", ["c", "z"], ["s"], name="add"),
             helper.make_node("Relu", ["s"], ["y"], name="relu")]
    model = make_model(nodes, [("x", x_shape), ("z", out)], [("y", None)],
                       {"w": weights(*w_shape, seed=1), "b": rand(w_shape[0], seed=2)})
    rows = dnnx.load(model).plan()
    assert [(r["op"], r["algorithm"].split(" ")[0]) for r in rows] == [("Conv+Add+Relu", "direct")]
    assert_matches_ort(model, {"x": rand(*x_shape, seed=5), "z": rand(*out, seed=6)})


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("batch", [1, 2, 5])
def test_direct_conv_split_across_threads_gives_the_same_bits(threads, batch):
    # Fewer images than twice the threads: each image's filter panels are split as well.
    model = conv_model([batch, 20, 12, 12], [50, 20, 5, 5], relu=True)
    x = rand(batch, 20, 12, 12, seed=7)
    set_num_threads(1)
    want = dnnx.load(model).run(x)
    set_num_threads(threads)
    m = dnnx.load(model)
    assert m.plan()[0]["algorithm"].startswith("direct")
    np.testing.assert_array_equal(m.run(x), want)
    assert_matches_ort(model, {"x": x})


@pytest.mark.parametrize("x_shape, w_shape, pads", [
    ([3, 1, 28, 28], [6, 1, 5, 5], [2, 2, 2, 2]),             # the LeNet-5 exports' conv1
    ([2, 3, 12, 20], [5, 3, 3, 3], [0, 1, 2, 0]),             # asymmetric pads, 3x3 (winograd: few filters)
    ([2, 4, 30], [7, 4, 5], [3, 1]),                          # 1-D
    ([1, 2, 5, 6, 9], [3, 2, 3, 2, 3], [1, 0, 2, 0, 1, 1]),   # 3-D
])
def test_padded_convs_run_direct_on_a_padded_copy(x_shape, w_shape, pads):
    # Note [padded direct conv]: each image-group is copied into a zero-padded workspace
    node = helper.make_node("Conv", ["x", "w", "b"], ["y"], name="conv", pads=pads)
    model = make_model([node], [("x", x_shape)], [("y", None)],
                       {"w": weights(*w_shape, seed=3), "b": rand(w_shape[0], seed=4)})
    (row,) = dnnx.load(model).plan()
    assert row["algorithm"].startswith("direct (padded copy)") and row["workspace"] > 0, row
    x = rand(*x_shape, seed=5)
    assert_matches_ort(model, {"x": x})
    assert_same_bits_on_one_and_two_threads(model, x)


def test_a_padded_conv_with_many_filters_or_a_winograd_kernel_keeps_its_algorithm():
    many = conv_model([1, 3, 12, 12], [40, 3, 5, 5])
    many.graph.node[0].attribute.extend([helper.make_attribute("pads", [2, 2, 2, 2])])
    (row,) = dnnx.load(many).plan()
    assert row["algorithm"].startswith("im2col+gemm")
    assert ("direct", "padded, with more than 32 filters") in [tuple(r) for r in row["rejected"]]
    node = helper.make_node("Conv", ["x", "w"], ["y"], name="conv", pads=[1, 1, 1, 1])
    square = make_model([node], [("x", [1, 16, 24, 24])], [("y", None)], {"w": weights(16, 16, 3, 3, seed=1)})
    (row,) = dnnx.load(square).plan()
    assert row["algorithm"].startswith("winograd")
    assert ("direct", "padded, and a 3x3 kernel (winograd)") in [tuple(r) for r in row["rejected"]]


@pytest.mark.parametrize("attrs, reason", [
    ({"strides": [2, 1]}, "strides are [1,2,1]"),  # as 3-D (D, H, W)
    ({"dilations": [1, 2]}, "dilations are [1,1,2]"),
])
def test_strided_or_dilated_convs_take_im2col(attrs, reason):
    node = helper.make_node("Conv", ["x", "w"], ["y"], name="conv", **attrs)
    model = make_model([node], [("x", [2, 3, 12, 20])], [("y", None)], {"w": weights(5, 3, 3, 3, seed=1)})
    (row,) = dnnx.load(model).plan()
    assert row["algorithm"].startswith("im2col+gemm")
    assert ("direct", reason) in [tuple(r) for r in row["rejected"]]
    assert_matches_ort(model, {"x": rand(2, 3, 12, 20)})


def test_narrow_output_rows_and_large_images_leave_the_direct_conv():
    narrow = conv_model([2, 3, 8, 6], [4, 3, 3, 3])  # OW 4: half of every vector idle
    assert algorithm(narrow).startswith("im2col+gemm")
    assert_matches_ort(narrow, {"x": rand(2, 3, 8, 6)})
    large = conv_model([1, 64, 40, 40], [8, 64, 3, 3])  # 102,400 floats an image
    # im2col+gemm, or the packed tiles where they run (Note [nchw convs on the tiles])
    assert algorithm(large).startswith(("im2col+gemm", "nchw->nhwc packed gemm"))
    assert_matches_ort(large, {"x": rand(1, 64, 40, 40)})
