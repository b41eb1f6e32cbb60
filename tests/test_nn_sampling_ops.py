"""GridSample, AffineGrid, LpPool, MaxUnpool, Col2Im, DeformConv and the signal ops against
onnxruntime at sizes and attribute mixes the onnx node cases leave out (several channels and
images, grids reaching past the borders, groups), and the errors a user can cause."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import dnnx
from ort_check import assert_matches_ort, make_model, rand


@pytest.mark.parametrize("mode", ["linear", "nearest", "cubic"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [0, 1])
def test_grid_sample_2d(mode, padding, align):
    node = helper.make_node("GridSample", ["x", "g"], ["y"], mode=mode, padding_mode=padding, align_corners=align)
    model = make_model([node], [("x", [2, 3, 5, 7]), ("g", [2, 4, 6, 2])], [("y", None)], opset=20)
    grid = np.random.default_rng(1).uniform(-1.7, 1.7, (2, 4, 6, 2)).astype(np.float32)
    assert_matches_ort(model, {"x": rand(2, 3, 5, 7), "g": grid})


@pytest.mark.parametrize("mode", ["linear", "nearest"])
def test_grid_sample_3d_reflection(mode):
    node = helper.make_node("GridSample", ["x", "g"], ["y"], mode=mode, padding_mode="reflection")
    model = make_model([node], [("x", [1, 2, 3, 4, 5]), ("g", [1, 2, 3, 4, 3])], [("y", None)], opset=20)
    grid = np.random.default_rng(2).uniform(-2.5, 2.5, (1, 2, 3, 4, 3)).astype(np.float32)
    assert_matches_ort(model, {"x": rand(1, 2, 3, 4, 5), "g": grid})


@pytest.mark.parametrize("size", [[2, 3, 5, 7], [2, 3, 4, 1, 6]])
@pytest.mark.parametrize("align", [0, 1])
def test_affine_grid(size, align):
    r = len(size) - 2
    node = helper.make_node("AffineGrid", ["theta", "size"], ["grid"], align_corners=align)
    model = make_model([node], [("theta", [2, r, r + 1])], [("grid", None)],
                       {"size": np.array(size, np.int64)}, opset=20)
    assert_matches_ort(model, {"theta": rand(2, r, r + 1)})


@pytest.mark.parametrize("p", [1, 2, 3])
def test_lp_pool_ceil_dilated(p):
    node = helper.make_node("LpPool", ["x"], ["y"], kernel_shape=[3, 2], strides=[2, 2], pads=[1, 0, 1, 1],
                            dilations=[2, 1], ceil_mode=1, p=p)
    model = make_model([node], [("x", [2, 3, 9, 8])], [("y", None)], opset=18)
    assert_matches_ort(model, {"x": rand(2, 3, 9, 8)})


def test_max_unpool_after_max_pool():
    pool = helper.make_node("MaxPool", ["x"], ["v", "i"], kernel_shape=[2, 2], strides=[2, 2])
    unpool = helper.make_node("MaxUnpool", ["v", "i"], ["y"], kernel_shape=[2, 2], strides=[2, 2])
    model = make_model([pool, unpool], [("x", [2, 3, 6, 8])], [("y", None)], opset=11)
    assert_matches_ort(model, {"x": rand(2, 3, 6, 8)})


def test_max_unpool_index_out_of_range_is_an_input_error():
    node = helper.make_node("MaxUnpool", ["v", "i"], ["y"], kernel_shape=[2], strides=[2])
    model = make_model([node], [("v", [1, 1, 2]), ("i", [1, 1, 2], TensorProto.INT64)], [("y", None)], opset=11)
    with pytest.raises(ValueError, match=r"I\[1\] = 4 is outside the output's 4 elements"):
        dnnx.load(model).run_dict({"v": rand(1, 1, 2), "i": np.array([[[0, 4]]], np.int64)})


def test_col2im_strided_dilated_padded():
    node = helper.make_node("Col2Im", ["x", "image", "block"], ["y"], strides=[2, 1], dilations=[1, 2],
                            pads=[1, 0, 0, 1])
    image, block = [7, 6], [3, 2]
    # block positions: ((7 + 1 - 3) // 2 + 1) * ((6 + 1 - 3) // 1 + 1) = 3 * 5
    model = make_model([node], [("x", [2, 3 * 6, 15])], [("y", None)],
                       {"image": np.array(image, np.int64), "block": np.array(block, np.int64)}, opset=18)
    assert_matches_ort(model, {"x": rand(2, 18, 15)})


def test_deform_conv_groups_mask_bias():
    node = helper.make_node("DeformConv", ["x", "w", "off", "b", "m"], ["y"], group=2, offset_group=2,
                            strides=[2, 1], pads=[1, 1, 1, 1], dilations=[1, 2])
    x_shape, w_shape = [2, 4, 6, 7], [6, 2, 3, 2]
    oh, ow = (6 + 2 - 3) // 2 + 1, (7 + 2 - 3) // 1 + 1
    inputs = [("x", x_shape), ("w", w_shape), ("off", [2, 2 * 2 * 6, oh, ow]), ("b", [6]), ("m", [2, 2 * 6, oh, ow])]
    model = make_model([node], inputs, [("y", None)], opset=19)
    feeds = {name: rand(*shape, seed=i) for i, (name, shape) in enumerate(inputs)}
    feeds["off"] *= 2
    assert_matches_ort(model, feeds)


@pytest.mark.parametrize("op", ["HannWindow", "HammingWindow", "BlackmanWindow"])
@pytest.mark.parametrize("periodic", [0, 1])
def test_windows(op, periodic):
    model = make_model([helper.make_node(op, ["n"], ["w"], periodic=periodic)], [], [("w", None)],
                       {"n": np.array(33, np.int64)}, opset=17)
    assert_matches_ort(model, {})


def test_stft_complex_two_sided():
    node = helper.make_node("STFT", ["x", "step", "win"], ["y"], onesided=0)
    model = make_model([node], [("x", [2, 40, 2]), ("win", [12])], [("y", None)], {"step": np.array(5, np.int64)},
                       opset=17)
    assert_matches_ort(model, {"x": rand(2, 40, 2), "win": rand(12, seed=1)}, atol=1e-4)


@pytest.mark.parametrize("inverse,onesided", [(0, 0), (0, 1), (1, 0)])
def test_dft_with_length(inverse, onesided):
    node = helper.make_node("DFT", ["x", "len", "axis"], ["y"], inverse=inverse, onesided=onesided)
    model = make_model([node], [("x", [3, 9, 4, 2 - onesided])], [("y", None)],
                       {"len": np.array(12, np.int64), "axis": np.array(1, np.int64)}, opset=20)
    assert_matches_ort(model, {"x": rand(3, 9, 4, 2 - onesided)}, atol=1e-4)
