"""Issue #15's CUDA kernels and gradients against the CPU backend's (the CPU's are checked against
float64 finite differences in tests/test_gradients_resample.py): Resize / Upsample (nearest and
linear on the device; cubic on the host inside the CUDA plan), ConvTranspose (cuDNN's backward
data as the forward, its forward and backward filter as the gradient, under both searches) and
the Reduce* ops. Tolerances are test_cuda_layer_grads.py's (fp32, no TF32): the Resize gradient
sums each dX element's terms in another order than the CPU's walk, and cuDNN's algorithms in
other orders than the CPU's GEMMs, so elements may differ by a few ulps of the largest partial
sum. The Resize gradient is a gather with no atomics (Note [resize gradient as a gather]): the
same bits on every run."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from onnx import helper

import dnnx
from ort_check import make_model
from test_cuda_layer_grads import check_cuda_gradients, out_shape, rand


def conv_then(node, extra_inits, opset=13):
    inits = {"w": rand(3, 2, 3, 3, scale=0.4), "b": rand(3, scale=0.1), **extra_inits}
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]), node]
    return make_model(nodes, [("x", [2, 2, 6, 5])], [("y", None)], inits, opset=opset)


RESIZE_CASES = [
    (dict(mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor"), [1, 1, 2, 3], None),
    (dict(mode="nearest", nearest_mode="round_prefer_ceil"), None, [2, 3, 9, 7]),
    (dict(mode="nearest", coordinate_transformation_mode="half_pixel"), None, [2, 3, 4, 3]),
    (dict(mode="linear"), [1, 1, 2, 2], None),
    (dict(mode="linear", coordinate_transformation_mode="align_corners"), None, [2, 3, 11, 8]),
    (dict(mode="linear", coordinate_transformation_mode="pytorch_half_pixel"), None, [2, 3, 4, 3]),
    (dict(mode="linear"), None, [2, 3, 3, 2]),                                   # downsampling
    (dict(mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor"), None, [2, 3, 2, 4]),
]


@pytest.mark.parametrize("attrs, scales, sizes", RESIZE_CASES, ids=lambda v: str(v))
def test_resize(attrs, scales, sizes):
    extra = {"roi": np.zeros(0, np.float32)}
    inputs = ["c", "roi"]
    if scales:
        extra["scales"] = np.array(scales, np.float32)
        inputs.append("scales")
    else:
        extra["sizes"] = np.array(sizes, np.int64)
        inputs += ["", "sizes"]
    model = conv_then(helper.make_node("Resize", inputs, ["y"], **attrs), extra)
    m = dnnx.load(model, device="cuda")
    assert not [r for r in m.plan() if r["algorithm"].startswith("on the host")], m.plan()
    x = rand(2, 2, 6, 5)
    np.testing.assert_allclose(m.run(x), dnnx.load(model).run(x), rtol=1e-5, atol=1e-6)
    check_cuda_gradients(model, ["w", "b"], {"x": x}, rand(*out_shape(model)))


def test_upsample_nearest():
    model = conv_then(helper.make_node("Upsample", ["c", "scales"], ["y"], mode="nearest"),
                      {"scales": np.array([1, 1, 2, 2], np.float32)}, opset=9)
    check_cuda_gradients(model, ["w", "b"], {"x": rand(2, 2, 6, 5)}, rand(*out_shape(model)))


def test_cubic_resize_runs_on_the_host_inside_the_cuda_plan():
    model = conv_then(helper.make_node("Resize", ["c", "roi", "scales"], ["y"], mode="cubic", name="cubic"),
                      {"roi": np.zeros(0, np.float32), "scales": np.array([1, 1, 2, 2], np.float32)})
    with pytest.warns(dnnx.HostFallbackWarning, match="cubic"):
        m = dnnx.load(model, device="cuda")
    rows = [r for r in m.plan() if r["algorithm"].startswith("on the host")]
    assert [r["name"] for r in rows] == ["cubic"], m.plan()
    x = rand(2, 2, 6, 5)
    np.testing.assert_allclose(m.run(x), dnnx.load(model).run(x), rtol=1e-5, atol=1e-5)


CONVT_CASES = [
    dict(kernel_shape=[3, 3]),
    dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 1]),
    dict(kernel_shape=[2, 3], strides=[2, 1], pads=[0, 1, 1, 0]),   # asymmetric: padded Y cropped, dY padded
    dict(kernel_shape=[3, 3], group=2, dilations=[2, 1]),
    dict(kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_UPPER"),
    dict(kernel_shape=[3, 3], strides=[3, 2], output_shape=[13, 10]),
    dict(kernel_shape=[1, 1]),
]


@pytest.mark.parametrize("search", ["heuristic", "exhaustive"])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("attrs", CONVT_CASES, ids=lambda a: "-".join(f"{k}{v}" for k, v in a.items()))
def test_conv_transpose(attrs, bias, search):
    group = attrs.get("group", 1)
    kh, kw = attrs["kernel_shape"]
    inits = {"w1": rand(4, 3, 3, 3, scale=0.3), "b1": rand(4, scale=0.1), "w2": rand(4, 6 // group, kh, kw, scale=0.3)}
    inputs = ["r", "w2"]
    if bias:
        inits["b2"] = rand(6, scale=0.1)
        inputs.append("b2")
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r"]), helper.make_node("ConvTranspose", inputs, ["y"], **attrs)]
    model = make_model(nodes, [("x", [2, 3, 4, 4])], [("y", None)], inits)
    x = rand(2, 3, 4, 4)
    gpu = dnnx.load(model, device="cuda", algo_search=search)
    np.testing.assert_allclose(gpu.run(x), dnnx.load(model).run(x), rtol=1e-4, atol=1e-5)
    check_cuda_gradients(model, list(inits), {"x": x}, rand(*out_shape(model)), algo_search=search)


@pytest.mark.parametrize("dims", [1, 3])
def test_conv_transpose_1d_3d(dims):
    inits = {"q": rand(2, 2, *([3] * dims)), "w": rand(2, 3, *([2] * dims), scale=0.5), "b": rand(3)}
    nodes = [helper.make_node("Mul", ["x", "q"], ["h"]),
             helper.make_node("ConvTranspose", ["h", "w", "b"], ["y"], strides=[2] * dims, pads=[1] * dims + [0] * dims)]
    model = make_model(nodes, [("x", [2, 2, *([3] * dims)])], [("y", None)], inits)
    check_cuda_gradients(model, list(inits), {"x": rand(2, 2, *([3] * dims))}, rand(*out_shape(model)))


@pytest.mark.parametrize("op", ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL2",
                                "ReduceL1", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"])
@pytest.mark.parametrize("axes, keepdims", [([1], 1), ([0, 2], 0), (None, 1)])
def test_reduce(op, axes, keepdims):
    q = rand(3, 4, 5)
    x = rand(3, 4, 5)
    if op in ("ReduceProd", "ReduceLogSum"):  # values near 1: the product stays of order 1, the sums positive
        q, x = (1 + 0.2 * q).astype(np.float32), (1 + 0.2 * x).astype(np.float32)
    inits, inputs = {"q": q}, ["h"]
    if axes is not None:
        inits["axes"] = np.array(axes, np.int64)
        inputs.append("axes")
    nodes = [helper.make_node("Mul", ["x", "q"], ["h"]), helper.make_node(op, inputs, ["y"], keepdims=keepdims)]
    model = make_model(nodes, [("x", [3, 4, 5])], [("y", None)], inits, opset=18)
    with warnings.catch_warnings():
        warnings.simplefilter("error", dnnx.HostFallbackWarning)  # every Reduce* has a CUDA kernel
        check_cuda_gradients(model, ["q"], {"x": x}, rand(*out_shape(model)))


def test_cubic_resize_does_not_train_on_cuda():
    model = conv_then(helper.make_node("Resize", ["c", "roi", "scales"], ["y"], mode="cubic", name="cubic"),
                      {"roi": np.zeros(0, np.float32), "scales": np.array([1, 1, 2, 2], np.float32)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dnnx.HostFallbackWarning)
        m = dnnx.load(model, device="cuda", optimize=False)
    with pytest.raises(dnnx.UnsupportedModelError, match="cubic"):
        m.finetune(trainable=["w", "b"], loss="mse", momentum=0.0).gradients([rand(2, 2, 6, 5)], rand(2, 3, 12, 10))


def test_resize_crop_with_positions_outside_x():
    # tf_crop_and_resize: a roi past X's edges gives extrapolation_value there, and no gradient
    roi = np.array([0, 0, -0.2, 0.1, 1, 1, 0.9, 1.3], np.float32)
    node = helper.make_node("Resize", ["c", "roi", "", "sizes"], ["y"], mode="linear",
                            coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=0.5)
    model = conv_then(node, {"roi": roi, "sizes": np.array([2, 3, 7, 6], np.int64)})
    check_cuda_gradients(model, ["w", "b"], {"x": rand(2, 2, 6, 5)}, rand(*out_shape(model)))


def test_resize_gradient_is_the_same_on_every_run():
    # a bilinear 8x upsample: up to 256 terms of dY meet in one dX element
    node = helper.make_node("Resize", ["c", "roi", "scales"], ["y"], mode="linear")
    model = conv_then(node, {"roi": np.zeros(0, np.float32), "scales": np.array([1, 1, 8, 8], np.float32)})
    x, target = rand(2, 2, 6, 5), rand(*out_shape(model))
    got = check_cuda_gradients(model, ["w", "b"], {"x": x}, target)
    tuner = dnnx.load(model, device="cuda", optimize=False).finetune(trainable=["w", "b"], loss="mse",
                                                                      deterministic=True)
    plan = [r["algorithm"] for r in tuner.plan()]
    assert any("adjoint as a gather" in a for a in plan), plan
    for _ in range(3):
        grads = tuner.gradients(x, target)[1]
        for name in ("w", "b"):
            np.testing.assert_array_equal(np.asarray(grads[name]), got[name])
