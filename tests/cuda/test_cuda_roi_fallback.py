"""RoiAlign and MaxRoiPool have no CUDA kernels: in a CUDA plan they run on the host (Note [host
fallback]), the plan says so, and the outputs are the CPU backend's exactly (the device Relu
around them is exact), on eager, captured and replayed runs, an empty roi list included."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import dnnx
from ort_check import make_model

RNG = np.random.default_rng(36)


def roi_model(op):
    if op == "RoiAlign":
        node = helper.make_node("RoiAlign", ["r", "rois", "bi"], ["y"], output_height=3, output_width=2,
                                sampling_ratio=2, spatial_scale=0.5, name="under_test")
        inputs = [("x", [2, 3, 8, 8]), ("rois", ["R", 4]), ("bi", ["R"], TensorProto.INT64)]
    else:
        node = helper.make_node("MaxRoiPool", ["r", "rois"], ["y"], pooled_shape=[2, 2], spatial_scale=0.5,
                                name="under_test")
        inputs = [("x", [2, 3, 8, 8]), ("rois", ["R", 5])]
    return make_model([helper.make_node("Relu", ["x"], ["r"]), node], inputs, [("y", None)], opset=16)


def roi_feeds(op, count):
    boxes = np.sort(RNG.uniform(-2, 18, (count, 2, 2)), axis=1).reshape(count, 4).astype(np.float32)
    boxes = boxes[:, [0, 2, 1, 3]]  # x1, y1, x2, y2
    batch = RNG.integers(0, 2, count)
    feeds = {"x": RNG.standard_normal((2, 3, 8, 8)).astype(np.float32)}
    if op == "RoiAlign":
        feeds.update(rois=boxes, bi=batch.astype(np.int64))
    else:
        feeds["rois"] = np.concatenate([batch[:, None], boxes], axis=1).astype(np.float32)
    return feeds


@pytest.mark.parametrize("op", ["RoiAlign", "MaxRoiPool"])
def test_roi_op_runs_on_the_host_in_a_cuda_plan(op):
    model = roi_model(op)
    with pytest.warns(dnnx.HostFallbackWarning, match="under_test"):
        gpu = dnnx.load(model, device="cuda")
    cpu = dnnx.load(model)
    for count in (5, 5, 5, 0):  # eager, capture, replay; then no rois
        feeds = roi_feeds(op, count)
        np.testing.assert_array_equal(gpu.run_dict(feeds)["y"], cpu.run_dict(feeds)["y"])
    assert [r["name"] for r in gpu.plan() if r["algorithm"].startswith("on the host")] == ["under_test"]
