"""Resize and Upsample forward against onnxruntime (tests/ort_check.py's fp32 tolerances) for
what onnx's node tests leave out: Upsample's linear mode (onnx's reference has none), Resize-10,
3-D and 5-D inputs, non-integer scales and every nearest rounding with every coordinate mode."""
import numpy as np
import pytest
from onnx import helper

from ort_check import assert_matches_ort, make_model

RNG = np.random.default_rng(5)


def resize_model(x_shape, attrs, scales=None, sizes=None, opset=13):
    inits, inputs = {"roi": np.zeros(0, np.float32)}, ["x", "roi"]
    if scales is not None:
        inits["scales"] = np.array(scales, np.float32)
        inputs.append("scales")
    else:
        inits["sizes"] = np.array(sizes, np.int64)
        inputs += ["", "sizes"]
    return make_model([helper.make_node("Resize", inputs, ["y"], **attrs)], [("x", x_shape)], [("y", None)], inits,
                      opset=opset)


@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize("scales", [[1, 1, 2, 3], [1, 1, 0.5, 0.75]])
def test_upsample_and_resize_10(mode, scales):
    x = RNG.standard_normal((2, 3, 4, 4)).astype(np.float32)
    if min(scales) >= 1:  # Upsample only upsamples
        up = make_model([helper.make_node("Upsample", ["x", "s"], ["y"], mode=mode)], [("x", x.shape)], [("y", None)],
                        {"s": np.array(scales, np.float32)}, opset=9)
        assert_matches_ort(up, {"x": x})
    r10 = make_model([helper.make_node("Resize", ["x", "s"], ["y"], mode=mode)], [("x", x.shape)], [("y", None)],
                     {"s": np.array(scales, np.float32)}, opset=10)
    assert_matches_ort(r10, {"x": x})


@pytest.mark.parametrize("coord", ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"])
@pytest.mark.parametrize("nearest", ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"])
@pytest.mark.parametrize("sizes", [[1, 2, 7, 10], [1, 2, 3, 2]])
def test_nearest_modes(coord, nearest, sizes):
    model = resize_model([1, 2, 5, 4], dict(mode="nearest", coordinate_transformation_mode=coord, nearest_mode=nearest),
                         sizes=sizes)
    assert_matches_ort(model, {"x": RNG.standard_normal((1, 2, 5, 4)).astype(np.float32)})


@pytest.mark.parametrize("x_shape, scales", [([2, 3, 7], [1, 1, 1.5]), ([1, 2, 3, 4, 5], [1, 1, 2, 0.5, 1.4])])
def test_linear_of_other_ranks(x_shape, scales):
    # 1.4 * 5: 7 output columns in onnxruntime's float arithmetic (6 in double)
    model = resize_model(x_shape, dict(mode="linear"), scales=scales)
    assert_matches_ort(model, {"x": RNG.standard_normal(x_shape).astype(np.float32)})


@pytest.mark.parametrize("x_shape, scales, planar", [
    ((2, 3, 5, 7), [1, 1, 2.5, 1.5], True),       # an image's H and W: Note [planar resize]
    ((1, 4, 6, 6), [1, 1, 0.5, 0.75], True),
    ((9, 11), [1.5, 0.6], True),                  # rank 2: one plane
    ((2, 3, 5, 7), [1, 2, 2, 1], False),          # the channels too: the general walk
    ((2, 3, 4), [2, 1, 1.5], False),
])
@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
def test_planar_and_general_walks(x_shape, scales, planar, mode):
    import dnnx
    if mode == "cubic" and len(x_shape) == 3:
        pytest.skip("onnxruntime takes cubic on 2-D and 4-D inputs only")
    model = resize_model(list(x_shape), {"mode": mode}, scales=scales)
    (row,) = dnnx.load(model).plan()
    assert row["algorithm"].endswith("(planar)") == planar, row["algorithm"]
    assert (row["workspace"] > 0) == planar
    assert_matches_ort(model, {"x": RNG.standard_normal(x_shape).astype(np.float32)})
