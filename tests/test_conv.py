"""Conv against onnxruntime: 1-D, 2-D and 3-D; groups and depthwise; strides, dilations,
asymmetric pads and every auto_pad mode; the algorithm the CPU planner picks; load-time errors."""
import numpy as np
import pytest
from onnx import helper

import dnnx
from ort_check import FP32_ATOL, FP32_RTOL, assert_matches_ort, make_model, rand, run_ort

# The NCHW kernels (the channels-last ones: test_conv_channels_last_cpu.py).
pytestmark = pytest.mark.usefixtures("nchw_kernels")


def conv_model(x_shape, w_shape, bias=True, name="conv", seed=1, y_shape=None, **attrs):
    """One Conv node; W (scaled by 1/sqrt(fan_in), so outputs stay O(1)) and B are initializers.
    y_shape None lets the importer infer Y's shape."""
    fan_in = int(np.prod(w_shape[1:]))
    inits = {"w": (rand(*w_shape, seed=seed) / np.sqrt(fan_in)).astype(np.float32)}
    inputs = ["x", "w"]
    if bias:
        inits["b"] = rand(w_shape[0], seed=seed + 1)
        inputs.append("b")
    node = helper.make_node("Conv", inputs, ["y"], name=name, **attrs)
    return make_model([node], [("x", list(x_shape))], [("y", y_shape)], inits)


def check_conv(x_shape, w_shape, bias=True, **attrs):
    model = conv_model(x_shape, w_shape, bias=bias, **attrs)
    return assert_matches_ort(model, {"x": rand(*x_shape)})


CASES = {
    "lenet_conv1_batch1": ([1, 1, 28, 28], [20, 1, 5, 5], {}),
    "lenet_conv2": ([3, 20, 12, 12], [50, 20, 5, 5], {}),
    "odd_asymmetric_pads": ([2, 3, 9, 7], [4, 3, 3, 2], {"pads": [1, 0, 2, 1]}),
    "strides": ([1, 3, 11, 13], [5, 3, 3, 3], {"strides": [2, 3]}),
    "strides_and_pads": ([2, 4, 10, 9], [6, 4, 4, 3], {"strides": [3, 2], "pads": [2, 1, 0, 2]}),
    "dilations": ([1, 2, 10, 9], [3, 2, 3, 3], {"dilations": [2, 3], "pads": [2, 1, 1, 3]}),
    "dilation_stride": ([2, 3, 15, 12], [4, 3, 3, 2], {"dilations": [3, 2], "strides": [2, 2]}),
    "pad_wider_than_kernel": ([1, 2, 5, 5], [3, 2, 2, 2], {"pads": [3, 0, 1, 4]}),
    "groups": ([2, 8, 7, 7], [6, 4, 3, 3], {"group": 2, "pads": [1, 1, 1, 1]}),
    "depthwise": ([1, 16, 9, 9], [16, 1, 3, 3], {"group": 16, "pads": [1, 1, 1, 1]}),
    "depthwise_multiplier": ([2, 4, 8, 8], [8, 1, 3, 3], {"group": 4, "strides": [2, 2]}),
    "large_channels": ([1, 256, 6, 6], [128, 256, 3, 3], {"pads": [1, 1, 1, 1]}),
    "pointwise": ([2, 32, 5, 7], [16, 32, 1, 1], {}),
    "pointwise_groups": ([1, 12, 4, 5], [9, 4, 1, 1], {"group": 3}),
    "pointwise_stride": ([1, 8, 7, 7], [4, 8, 1, 1], {"strides": [2, 2]}),
    "pointwise_padded": ([1, 8, 4, 4], [4, 8, 1, 1], {"pads": [1, 0, 0, 1]}),
    "kernel_shape_given": ([1, 3, 8, 8], [2, 3, 3, 3], {"kernel_shape": [3, 3]}),
    "kernel_covers_input": ([2, 3, 5, 4], [7, 3, 5, 4], {}),
    "conv1d": ([2, 3, 17], [4, 3, 5], {"strides": [2], "pads": [2, 1], "dilations": [2]}),
    "conv1d_depthwise": ([1, 6, 20], [6, 1, 3], {"group": 6, "pads": [1, 1]}),
    "conv3d": ([1, 2, 5, 6, 7], [3, 2, 3, 2, 3], {"pads": [1, 0, 1, 0, 1, 1], "strides": [1, 2, 1]}),
    "conv3d_dilated_groups": ([2, 4, 6, 5, 7], [4, 2, 2, 2, 3],
                              {"group": 2, "dilations": [2, 1, 2], "strides": [1, 1, 2]}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_conv_matches_ort(case):
    x_shape, w_shape, attrs = CASES[case]
    check_conv(x_shape, w_shape, **attrs)


def test_conv_without_bias():
    check_conv([2, 3, 8, 6], [5, 3, 3, 3], bias=False, pads=[0, 1, 2, 0])


@pytest.mark.parametrize("auto_pad", ["NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"])
@pytest.mark.parametrize("x_shape,w_shape,strides", [
    ([1, 3, 9, 8], [4, 3, 3, 3], [1, 1]),
    ([2, 3, 10, 7], [4, 3, 4, 2], [2, 3]),  # even kernel: SAME pads are asymmetric
    ([1, 2, 13], [3, 2, 4], [3]),
])
def test_conv_auto_pad(auto_pad, x_shape, w_shape, strides):
    check_conv(x_shape, w_shape, auto_pad=auto_pad, strides=strides)


def random_conv_case(rng):
    """A random valid Conv: rank, batch, groups, kernel, strides, dilations and pads."""
    spatial = int(rng.integers(1, 4))
    group = int(rng.choice([1, 1, 2, 3]))
    c = group * int(rng.integers(1, 5))
    m = group * int(rng.integers(1, 5))
    kernel = [int(k) for k in rng.integers(1, 4, spatial)]
    dilations = [int(d) for d in rng.integers(1, 3, spatial)]
    strides = [int(s) for s in rng.integers(1, 4, spatial)]
    pads = [int(p) for p in rng.integers(0, 3, 2 * spatial)]
    size = [int(rng.integers((k - 1) * d + 1, (k - 1) * d + 9)) for k, d in zip(kernel, dilations)]
    x_shape = [int(rng.integers(1, 4)), c] + size
    w_shape = [m, c // group] + kernel
    attrs = {"group": group, "dilations": dilations, "strides": strides, "pads": pads}
    return x_shape, w_shape, attrs


@pytest.mark.parametrize("seed", range(16))
def test_conv_random(seed):
    x_shape, w_shape, attrs = random_conv_case(np.random.default_rng(seed))
    check_conv(x_shape, w_shape, bias=seed % 2 == 0, **attrs)


def test_conv_weights_as_graph_inputs():
    node = helper.make_node("Conv", ["x", "w", "b"], ["y"], name="conv", pads=[1, 1, 1, 1], group=2)
    model = make_model([node], [("x", [2, 4, 6, 5]), ("w", [6, 2, 3, 3]), ("b", [6])], [("y", None)])
    assert_matches_ort(model, {"x": rand(2, 4, 6, 5), "w": rand(6, 2, 3, 3, seed=1), "b": rand(6, seed=2)})


def test_conv_symbolic_batch_replans():
    node = helper.make_node("Conv", ["x", "w"], ["y"], name="conv", strides=[2, 2])
    model = make_model([node], [("x", ["N", 3, 9, 9])], [("y", None)], {"w": rand(4, 3, 3, 3, seed=1)})
    dnnx_model = dnnx.load(model)
    for batch in (1, 5, 2):
        x = rand(batch, 3, 9, 9, seed=batch)
        want = run_ort(model, {"x": x})["y"]
        np.testing.assert_allclose(dnnx_model.run(x), want, rtol=FP32_RTOL, atol=FP32_ATOL)


def test_conv_batch_256():
    check_conv([256, 1, 28, 28], [20, 1, 5, 5])


def plan_row(model):
    (row,) = dnnx.load(model).plan()
    return row


def test_pointwise_conv_is_a_plain_gemm():
    row = plan_row(conv_model([2, 32, 5, 7], [16, 32, 1, 1]))
    assert row["algorithm"] == "gemm(1x1)"
    assert row["workspace"] == 0


def test_im2col_workspace_and_rejected_reason():
    # LeNet's conv2 padded by 1 and strided (unstrided, it is a direct conv: tests/test_conv_direct.py),
    # of 12 channels (16 or more run on the packed tiles: tests/test_conv_nchw_tiles_cpu.py).
    row = plan_row(conv_model([1, 12, 12, 12], [50, 12, 5, 5], pads=[1, 1, 1, 1], strides=[2, 2]))
    assert row["algorithm"] == "im2col+gemm"
    assert row["workspace"] == 12 * 5 * 5 * 5 * 5 * 4  # col is [C*kh*kw, OH*OW] float32
    assert ("gemm(1x1)", "kernel is 5x5") in [tuple(r) for r in row["rejected"]]
    assert ("direct", "strides are [1,2,2]") in [tuple(r) for r in row["rejected"]]


def test_conv_4d_spatial_is_unsupported():
    model = conv_model([1, 1, 3, 3, 3, 3], [1, 1, 2, 2, 2, 2], name="conv_4d")
    with pytest.raises(dnnx.UnsupportedModelError, match="conv_4d.*1 to 3 spatial dims"):
        dnnx.load(model)


def test_conv_channel_mismatch_names_node_and_shapes():
    model = conv_model([1, 4, 6, 6], [2, 3, 3, 3], name="conv_bad_c")
    with pytest.raises(dnnx.InvalidModelError, match=r"conv_bad_c.*\[1,4,6,6\].*\[2,3,3,3\]"):
        dnnx.load(model)


def test_conv_kernel_larger_than_input():
    model = conv_model([1, 1, 4, 4], [1, 1, 5, 5], name="conv_big_k")
    with pytest.raises(dnnx.InvalidModelError, match=r"conv_big_k.*larger than the padded input"):
        dnnx.load(model)


def test_conv_bad_auto_pad():
    model = conv_model([1, 1, 4, 4], [1, 1, 3, 3], name="conv_auto", auto_pad="SAME")
    with pytest.raises(dnnx.InvalidModelError, match="conv_auto.*auto_pad 'SAME'"):
        dnnx.load(model)


def test_conv_wrong_strides_length():
    model = conv_model([1, 1, 6, 6], [1, 1, 3, 3], name="conv_strides", y_shape=[1, 1, 4, 4],
                       strides=[1, 1, 1])
    with pytest.raises(dnnx.InvalidModelError, match=r"conv_strides.*strides \[1,1,1\]"):
        dnnx.load(model)


# --- 1x1 convs with a stride: a strided gather, then the pointwise GEMM ---------------------------

@pytest.mark.parametrize("stride", [2, 3])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("x_shape", [[1, 16, 14, 14], [8, 5, 13, 11], [3, 7, 9, 10]])
def test_strided_pointwise_conv_gathers_then_gemms(x_shape, bias, stride):
    model = conv_model(x_shape, [6, x_shape[1], 1, 1], bias=bias, strides=[stride, stride])
    row = plan_row(model)
    assert row["algorithm"] == "gather+gemm(1x1)"
    assert ("im2col+gemm", "not needed: 1x1 kernel, no padding, one group") in [tuple(r) for r in row["rejected"]]
    oh, ow = (x_shape[2] - 1) // stride + 1, (x_shape[3] - 1) // stride + 1
    assert row["workspace"] == x_shape[1] * oh * ow * 4  # one gathered image [C, OH*OW] float32
    assert_matches_ort(model, {"x": rand(*x_shape, seed=stride)})


@pytest.mark.parametrize("x_shape, w_shape, strides", [
    ([2, 3, 17], [4, 3, 1], [2]),                      # 1-D
    ([2, 3, 5, 7, 9], [4, 3, 1, 1, 1], [2, 3, 2]),     # 3-D, a stride per axis
    ([2, 4, 9, 9], [5, 4, 1, 1], [1, 2]),              # strided along W only
])
def test_strided_pointwise_conv_of_other_ranks(x_shape, w_shape, strides):
    model = conv_model(x_shape, w_shape, strides=strides)
    assert plan_row(model)["algorithm"] == "gather+gemm(1x1)"
    assert_matches_ort(model, {"x": rand(*x_shape)})


@pytest.mark.parametrize("stride", [2, 3])
def test_strided_pointwise_conv_with_the_relu_epilogue(stride):
    w = (rand(8, 6, 1, 1, seed=3) / np.sqrt(6)).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", strides=[stride, stride]),
             helper.make_node("Relu", ["c"], ["y"], name="relu")]
    model = make_model(nodes, [("x", [4, 6, 11, 13])], [("y", None)], {"w": w, "b": rand(8, seed=4)})
    (row,) = dnnx.load(model).plan()
    assert (row["op"], row["algorithm"]) == ("Conv+Relu", "gather+gemm(1x1)")
    assert_matches_ort(model, {"x": rand(4, 6, 11, 13)})


@pytest.mark.parametrize("attrs", [{"group": 2}, {"pads": [1, 1, 1, 1]}])
def test_strided_pointwise_conv_with_groups_or_padding_takes_im2col(attrs):
    model = conv_model([2, 4, 9, 9], [6, 4 // attrs.get("group", 1), 1, 1], strides=[2, 2], **attrs)
    assert plan_row(model)["algorithm"] == "im2col+gemm"
    assert_matches_ort(model, {"x": rand(2, 4, 9, 9)})
