"""RoiAlign and MaxRoiPool against onnxruntime beyond the onnx node cases (onnxruntime runs none
of those: they are opset 22, which it lacks): random boxes inside, across and outside the image,
reversed boxes, every mode and coordinate transformation, adaptive and fixed sampling, batch
indices past 0, float64, an empty roi list ([0, C, h, w] out), float16 (computed in float32); and
the errors a user can cause."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import dnnx
from ort_check import assert_matches_ort, make_model, run_ort

_ELEM = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE, np.float16: TensorProto.FLOAT16}


def roi_align_model(opset, dtype=np.float32, **attrs):
    node = helper.make_node("RoiAlign", ["x", "rois", "batch_indices"], ["y"], **attrs)
    elem = _ELEM[dtype]
    return make_model([node], [("x", ["N", "C", "H", "W"], elem), ("rois", ["R", 4], elem),
                               ("batch_indices", ["R"], TensorProto.INT64)], [("y", None, elem)], opset=opset)


def random_boxes(rng, count, height, width, dtype=np.float32):
    """x1, y1, x2, y2: mostly inside, some across the border or wholly outside, some tiny."""
    x1 = rng.uniform(-0.3 * width, 1.1 * width, count)
    y1 = rng.uniform(-0.3 * height, 1.1 * height, count)
    boxes = np.stack([x1, y1, x1 + rng.uniform(0.1, 0.8 * width, count),
                      y1 + rng.uniform(0.1, 0.8 * height, count)], axis=1)
    boxes[-2] = [width + 3, height + 4, width + 9, height + 12]  # wholly outside
    boxes[-1] = [-9, -8, -3, -2]
    return boxes.astype(dtype)


def feeds(rng, n, c, h, w, rois, dtype=np.float32):
    return {"x": rng.standard_normal((n, c, h, w)).astype(dtype), "rois": random_boxes(rng, rois, h, w, dtype),
            "batch_indices": rng.integers(0, n, rois).astype(np.int64)}


@pytest.mark.parametrize("mode", ["avg", "max"])
@pytest.mark.parametrize("ctm", ["half_pixel", "output_half_pixel"])
@pytest.mark.parametrize("sampling_ratio", [0, 1, 2])
@pytest.mark.parametrize("out_hw,scale", [((1, 1), 1.0), ((3, 2), 0.5), ((7, 7), 0.25)])
def test_roi_align_opset16(mode, ctm, sampling_ratio, out_hw, scale):
    rng = np.random.default_rng(sampling_ratio * 7 + out_hw[0])
    model = roi_align_model(16, mode=mode, coordinate_transformation_mode=ctm, sampling_ratio=sampling_ratio,
                            output_height=out_hw[0], output_width=out_hw[1], spatial_scale=scale)
    f = feeds(rng, 3, 4, 11, 13, 9)
    f["rois"] /= scale  # boxes in the input image's pixels
    assert_matches_ort(model, f)


@pytest.mark.parametrize("mode", ["avg", "max"])
def test_roi_align_opset10_default_and_attribute_defaults(mode):
    # opset 10 is output_half_pixel; opset 16 without the attribute is half_pixel
    rng = np.random.default_rng(5)
    f = feeds(rng, 2, 3, 10, 10, 6)
    assert_matches_ort(roi_align_model(10, mode=mode, output_height=2, output_width=3, spatial_scale=0.8), f)
    assert_matches_ort(roi_align_model(16, mode=mode, output_height=2, output_width=3, sampling_ratio=2), f)


def test_roi_align_reversed_boxes():
    # x2 < x1 and y2 < y1: half_pixel keeps the negative size (no samples with adaptive sampling:
    # 0), output_half_pixel widens it to 1x1
    rng = np.random.default_rng(1)
    f = feeds(rng, 1, 2, 8, 8, 3)
    f["rois"] = np.array([[6, 5, 2, 1], [5, 5, 4.5, 4.5], [7.2, 3, 1, 0.5]], np.float32)
    for ctm in ("half_pixel", "output_half_pixel"):
        for ratio in (0, 2):
            model = roi_align_model(16, coordinate_transformation_mode=ctm, sampling_ratio=ratio,
                                    output_height=2, output_width=2)
            assert_matches_ort(model, f)


def test_roi_align_box_reversed_on_one_axis_gives_zeros():
    # half_pixel, adaptive sampling: no samples on the reversed axis, so 0 (onnxruntime fails on an
    # integer overflow sizing its sample table)
    x = np.ones((1, 2, 8, 8), np.float32)
    f = {"x": x, "rois": np.array([[6, 1, 2, 5], [1, 1, 5, 5]], np.float32), "batch_indices": np.zeros(2, np.int64)}
    y = dnnx.load(roi_align_model(16, output_height=2, output_width=2)).run_dict(f)["y"]
    np.testing.assert_array_equal(y[0], 0)
    np.testing.assert_allclose(y[1], 1, rtol=1e-6)


def test_roi_align_float64():
    rng = np.random.default_rng(2)
    model = roi_align_model(16, np.float64, output_height=4, output_width=3, spatial_scale=0.5)
    got = assert_matches_ort(model, feeds(rng, 2, 3, 9, 12, 7, np.float64), rtol=1e-12, atol=1e-12)
    assert got["y"].dtype == np.float64


def test_roi_align_float16_computes_in_float32():
    # onnxruntime has no float16 RoiAlign: the float32 result on the same (float16) values, rounded
    rng = np.random.default_rng(3)
    f16 = feeds(rng, 2, 3, 9, 12, 5, np.float16)
    want = run_ort(roi_align_model(16, output_height=3, output_width=3),
                   {k: v.astype(np.float32) if v.dtype == np.float16 else v for k, v in f16.items()})["y"]
    got = dnnx.load(roi_align_model(16, np.float16, output_height=3, output_width=3)).run_dict(f16)["y"]
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float32), want, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("mode", ["avg", "max"])
def test_roi_align_no_rois(mode):
    rng = np.random.default_rng(4)
    f = feeds(rng, 2, 5, 8, 8, 2)
    f["rois"], f["batch_indices"] = f["rois"][:0], f["batch_indices"][:0]
    got = assert_matches_ort(roi_align_model(16, mode=mode, output_height=3, output_width=2), f)
    assert got["y"].shape == (0, 5, 3, 2)
    no_channels = feeds(rng, 2, 0, 8, 8, 3)
    assert assert_matches_ort(roi_align_model(16, mode=mode), no_channels)["y"].shape == (3, 0, 1, 1)


def test_roi_align_batch_index_outside_x_is_a_clear_error():
    rng = np.random.default_rng(6)
    f = feeds(rng, 2, 2, 6, 6, 3)
    f["batch_indices"][1] = 2
    with pytest.raises(ValueError, match=r"RoiAlign.*batch_indices\[1\] = 2 is outside X's batch \[0, 2\)"):
        dnnx.load(roi_align_model(16)).run_dict(f)


@pytest.mark.parametrize("attrs,match", [
    (dict(mode="median"), r"mode 'median' must be 'avg' or 'max'"),
    (dict(coordinate_transformation_mode="asymmetric"), r"coordinate_transformation_mode 'asymmetric'"),
    (dict(sampling_ratio=-1), r"sampling_ratio -1 must be at least 0"),
    (dict(output_height=0), r"output_height 0 and output_width 1 must be at least 1"),
])
def test_roi_align_bad_attributes(attrs, match):
    node = helper.make_node("RoiAlign", ["x", "rois", "batch_indices"], ["y"], name="ra", **attrs)
    graph = helper.make_graph([node], "g", [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 4]),
        helper.make_tensor_value_info("rois", TensorProto.FLOAT, [2, 4]),
        helper.make_tensor_value_info("batch_indices", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)])
    with pytest.raises(dnnx.DnnxError, match=r"node 'ra' \(RoiAlign\).*" + match):
        dnnx.load(model)


def test_roi_align_bad_shapes():
    node = helper.make_node("RoiAlign", ["x", "rois", "batch_indices"], ["y"], name="ra")
    model = make_model([node], [("x", [1, 1, 4, 4]), ("rois", [2, 5]), ("batch_indices", [2], TensorProto.INT64)],
                       [("y", [2, 1, 1, 1])], opset=16)
    with pytest.raises(dnnx.InvalidModelError, match=r"node 'ra'.*rois \[2,5\] \(float32\) must be \[num_rois, 4\]"):
        dnnx.load(model).run_dict({"x": np.zeros((1, 1, 4, 4), np.float32), "rois": np.zeros((2, 5), np.float32),
                                   "batch_indices": np.zeros(2, np.int64)})


def max_roi_pool_model(dtype=np.float32, **attrs):
    node = helper.make_node("MaxRoiPool", ["x", "rois"], ["y"], **attrs)
    elem = _ELEM[dtype]
    return make_model([node], [("x", ["N", "C", "H", "W"], elem), ("rois", ["R", 5], elem)], [("y", None, elem)],
                      opset=16)


def pool_rois(rng, count, n, h, w, scale, dtype=np.float32):
    boxes = random_boxes(rng, count, h, w, np.float64) / scale
    batch = rng.integers(0, n, count)[:, None]
    return np.concatenate([batch, boxes], axis=1).astype(dtype)


@pytest.mark.parametrize("pooled,scale", [((1, 1), 1.0), ((2, 3), 0.5), ((7, 7), 0.0625), ((4, 4), 1.0)])
def test_max_roi_pool(pooled, scale):
    rng = np.random.default_rng(pooled[0] * 10 + pooled[1])
    x = rng.standard_normal((3, 4, 12, 14)).astype(np.float32) - 2.0  # mostly negative: the max is no 0
    f = {"x": x, "rois": pool_rois(rng, 10, 3, 12, 14, scale)}
    assert_matches_ort(max_roi_pool_model(pooled_shape=list(pooled), spatial_scale=scale), f)


def test_max_roi_pool_no_rois_and_float64():
    rng = np.random.default_rng(9)
    x = rng.standard_normal((2, 3, 8, 8))
    rois = pool_rois(rng, 4, 2, 8, 8, 1.0, np.float64)
    got = dnnx.load(max_roi_pool_model(np.float64, pooled_shape=[2, 2])).run_dict({"x": x, "rois": rois})["y"]
    want = run_ort(max_roi_pool_model(pooled_shape=[2, 2]),
                   {"x": x.astype(np.float32), "rois": rois.astype(np.float32)})["y"]  # onnxruntime: float32 only
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    empty = {"x": x.astype(np.float32), "rois": np.zeros((0, 5), np.float32)}
    assert assert_matches_ort(max_roi_pool_model(pooled_shape=[3, 2]), empty)["y"].shape == (0, 3, 3, 2)
    no_channels = {"x": np.zeros((2, 0, 8, 8), np.float32), "rois": rois.astype(np.float32)}
    assert assert_matches_ort(max_roi_pool_model(pooled_shape=[3, 2]), no_channels)["y"].shape == (4, 0, 3, 2)


def test_max_roi_pool_errors():
    f = {"x": np.zeros((2, 1, 4, 4), np.float32), "rois": np.array([[2, 0, 0, 1, 1]], np.float32)}
    with pytest.raises(ValueError, match=r"MaxRoiPool.*rois\[0, 0\] = 2.* is not a batch index of X's 2"):
        dnnx.load(max_roi_pool_model(pooled_shape=[1, 1])).run_dict(f)
    node = helper.make_node("MaxRoiPool", ["x", "rois"], ["y"], name="mrp")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 4]),
                                            helper.make_tensor_value_info("rois", TensorProto.FLOAT, [1, 5])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 1, 1])])
    with pytest.raises(dnnx.InvalidModelError, match=r"Required attribute 'pooled_shape' is missing"):
        dnnx.load(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)]))


def test_roi_align_huge_boxes():
    # a box of hundreds of pixels at adaptive sampling: 240,000 samples per bin, weighed in
    # chunks, as onnxruntime weighs them; one of billions of pixels is a clear error, not a hang
    rng = np.random.default_rng(12)
    f = feeds(rng, 1, 2, 16, 16, 2)
    f["rois"] = np.array([[-300, -200, 500, 400], [2, 3, 900, 14]], np.float32)
    assert_matches_ort(roi_align_model(16, output_height=1, output_width=2), f)
    assert_matches_ort(roi_align_model(16, mode="max", output_height=2, output_width=1), f)
    f["rois"][0] = [0, 0, 1e12, 1e12]
    with pytest.raises(ValueError, match=r"RoiAlign.*rois\[0\] needs .* samples \(more than 2\^30\)"):
        dnnx.load(roi_align_model(16)).run_dict(f)
