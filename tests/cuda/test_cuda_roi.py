"""RoiAlign and MaxRoiPool on their CUDA kernels (backends/cuda/roi/): the plan row names the
device kernel, not the host, and the outputs are the CPU backend's (the kernels repeat its float32
operations in its order, without fused multiply-adds: roi_kernels.cu) and onnxruntime's, on
eager, captured and replayed runs, an empty roi list included. The cases cover both RoiAlign
coordinate modes, avg and max, fixed and adaptive sampling (large boxes: many samples per bin),
boxes reaching past X, and a reversed box. At precision fp16 and bf16 the roi layers stay float32
(a box's corners in half would move), with a Relu before them in half. A batch index outside X
gives zeros on CUDA where the CPU raises (Note [device roi range])."""
import warnings

import numpy as np
import pytest
from onnx import TensorProto, helper

import dnnx
from ort_check import make_model, run_ort

RNG = np.random.default_rng(36)
X_SHAPE = [2, 5, 13, 11]
# CPU and CUDA compute the same float32 operations in the same order; the tolerance is a few
# ulps in case a device math routine rounds differently (none is expected to).
RTOL, ATOL = 1e-6, 1e-6


def roi_model(op, **attrs):
    if op == "RoiAlign":
        node = helper.make_node("RoiAlign", ["r", "rois", "bi"], ["y"], name="under_test", **attrs)
        inputs = [("x", X_SHAPE), ("rois", ["R", 4]), ("bi", ["R"], TensorProto.INT64)]
    else:
        node = helper.make_node("MaxRoiPool", ["r", "rois"], ["y"], name="under_test", **attrs)
        inputs = [("x", X_SHAPE), ("rois", ["R", 5])]
    return make_model([helper.make_node("Relu", ["x"], ["r"]), node], inputs, [("y", None)], opset=16)


def roi_feeds(op, count, scale=1.0):
    """count boxes in X's pixels / scale, some reaching past X, one reversed (x2 < x1)."""
    h, w = X_SHAPE[2] / scale, X_SHAPE[3] / scale
    corners = RNG.uniform([-3, -3], [w + 3, h + 3], (count, 2, 2))
    boxes = np.sort(corners, axis=1).reshape(count, 4)[:, [0, 1, 2, 3]]  # x1, y1, x2, y2
    if count > 2:
        boxes[1] = boxes[1][[2, 1, 0, 3]]  # reversed along x
    batch = RNG.integers(0, X_SHAPE[0], count)
    feeds = {"x": RNG.standard_normal(X_SHAPE).astype(np.float32)}
    if op == "RoiAlign":
        feeds.update(rois=boxes.astype(np.float32), bi=batch.astype(np.int64))
    else:
        feeds["rois"] = np.concatenate([batch[:, None], boxes], axis=1).astype(np.float32)
    return feeds


def load_cuda(model, precision="fp32"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dnnx.HostFallbackWarning)
        m = dnnx.load(model, device="cuda", precision=precision)
    row = [r for r in m.plan() if r["name"] == "under_test"]
    assert row and not row[0]["algorithm"].startswith("on the host"), m.plan()
    return m, row[0]


ALIGN_CASES = [
    dict(output_height=3, output_width=2, sampling_ratio=2, spatial_scale=0.5),
    dict(output_height=4, output_width=3, sampling_ratio=0, spatial_scale=1.0),  # adaptive
    dict(output_height=2, output_width=2, sampling_ratio=0, spatial_scale=0.25, mode="max"),
    dict(output_height=3, output_width=3, sampling_ratio=3, spatial_scale=1.0,
         coordinate_transformation_mode="output_half_pixel"),
    dict(output_height=1, output_width=5, sampling_ratio=0, spatial_scale=0.125, mode="max",
         coordinate_transformation_mode="output_half_pixel"),
]


@pytest.mark.parametrize("attrs", ALIGN_CASES, ids=lambda a: "-".join(f"{k}={v}" for k, v in a.items()))
def test_roi_align_on_the_device_matches_the_cpu_and_onnxruntime(attrs):
    model = roi_model("RoiAlign", **attrs)
    gpu, row = load_cuda(model)
    assert row["algorithm"] == "bilinear samples", row
    cpu = dnnx.load(model)
    for count in (7, 7, 7, 0):  # eager, capture, replay; then no rois
        feeds = roi_feeds("RoiAlign", count, attrs["spatial_scale"])
        got, want = gpu.run_dict(feeds)["y"], cpu.run_dict(feeds)["y"]
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
        if count:  # onnxruntime without the reversed box (it fails on one with adaptive sampling)
            rows = [i for i in range(count) if i != 1]
            ort_feeds = dict(feeds, rois=feeds["rois"][rows], bi=feeds["bi"][rows])
            np.testing.assert_allclose(got[rows], run_ort(model, ort_feeds)["y"], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("pooled", [(2, 2), (3, 4)])
def test_max_roi_pool_on_the_device_matches_the_cpu_and_onnxruntime(pooled):
    model = roi_model("MaxRoiPool", pooled_shape=list(pooled), spatial_scale=0.5)
    gpu, row = load_cuda(model)
    assert row["algorithm"] == "direct", row
    cpu = dnnx.load(model)
    for count in (6, 6, 6, 0):
        feeds = roi_feeds("MaxRoiPool", count, 0.5)
        got, want = gpu.run_dict(feeds)["y"], cpu.run_dict(feeds)["y"]
        np.testing.assert_array_equal(got, want)  # a maximum of X's values: exact
        if count:
            np.testing.assert_array_equal(got, run_ort(model, feeds)["y"])


@pytest.mark.parametrize("precision", ["fp16", "bf16"])
def test_roi_layers_stay_float32_at_half_precision(precision):
    model = roi_model("RoiAlign", output_height=2, output_width=2, sampling_ratio=2, spatial_scale=1.0)
    gpu, row = load_cuda(model, precision)
    assert row["math"].startswith("fp32"), row
    feeds = roi_feeds("RoiAlign", 5)
    dtype = np.float16 if precision == "fp16" else None
    x = feeds["x"].astype(dtype) if dtype else feeds["x"]
    want = dnnx.load(model).run_dict({**feeds, "x": np.asarray(x, np.float32)})["y"]
    # The Relu runs in half: X's values rounded to 8 (bf16) or 11 (fp16) significant bits, then
    # the float32 roi layer averages them.
    tol = 1e-2 if precision == "bf16" else 2e-3
    np.testing.assert_allclose(gpu.run_dict(feeds)["y"], want, rtol=tol, atol=tol)


@pytest.mark.parametrize("op", ["RoiAlign", "MaxRoiPool"])
def test_a_batch_index_outside_x_gives_zeros_on_the_device(op):
    model = (roi_model(op, output_height=2, output_width=2, sampling_ratio=2) if op == "RoiAlign"
             else roi_model(op, pooled_shape=[2, 2]))
    gpu, row = load_cuda(model)
    assert any(algo == "range check" for algo, _ in row["rejected"]), row
    feeds = roi_feeds(op, 3)
    if op == "RoiAlign":
        feeds["bi"][1] = X_SHAPE[0]
    else:
        feeds["rois"][1, 0] = X_SHAPE[0]
    got = gpu.run_dict(feeds)["y"]
    assert np.all(got[1] == 0)
    with pytest.raises(ValueError, match="under_test"):
        dnnx.load(model).run_dict(feeds)
    ok = dict(feeds)
    rows = [0, 2]
    if op == "RoiAlign":
        ok.update(rois=feeds["rois"][rows], bi=feeds["bi"][rows])
    else:
        ok["rois"] = feeds["rois"][rows]
    np.testing.assert_allclose(got[rows], dnnx.load(model).run_dict(ok)["y"], rtol=RTOL, atol=ATOL)
