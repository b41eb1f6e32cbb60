"""The torchvision detectors of ../shared/external/zoo2 (det_*.onnx: Faster R-CNN with a
MobileNetV3 FPN backbone, SSDlite), whole, against onnxruntime on the CPU (issue #36): If
(inlined where its condition is a plan constant), NonZero, TopK, NonMaxSuppression, RoiAlign,
GatherND and ScatterElements between staged plans (Note [staged plans]). One 3x320x320 image in
[0, 1), as PROVENANCE.md says.

Tolerances: labels and the number of detections exactly; scores to rtol 1e-4 (a softmax of
float32 logits); boxes to 0.5 px on a 320 px image: the weights are materialized from a seed, so
the box regressions are large, and the decode multiplies a width of up to 320 px by the exp() of
a delta clamped at log(1000/16), which turns float32 noise of 1e-5 in the head's features into
tenths of a pixel (measured: 0.18 px for Faster R-CNN, 0.0013 px for SSDlite). Two detections whose
scores differ by float32 noise may come out in either order: rows are matched first, only among
such near-ties (Note [detections compared as sets], bench/_sweep_worker.py)."""
import numpy as np
import pytest

import dnnx
from bench_modules import bench_module
from ort_check import run_ort
from zoo_check import zoo2_inputs, zoo2_model

DETECTORS = ["det_fasterrcnn_mobilenet_v3_large_320_fpn", "det_ssdlite320_mobilenet_v3_large"]


@pytest.mark.parametrize("name", DETECTORS)
def test_detector_matches_onnxruntime(name):
    model = zoo2_model(name)
    feeds = zoo2_inputs(name, model, 1)
    want = run_ort(model, feeds)
    m = dnnx.load(model)
    for _ in range(2):  # the second run reuses every stage's plan
        got = bench_module("_sweep_worker").align_near_ties(m.run_dict(feeds), want, 2e-3)
        assert list(got) == list(want)
        for out, w in want.items():
            g = got[out]
            assert g.shape == w.shape and g.dtype == w.dtype, (out, g.shape, w.shape)
            if w.dtype == np.int64:
                np.testing.assert_array_equal(g, w, err_msg=out)
            elif w.ndim == 2 and w.shape[-1] == 4:  # boxes
                np.testing.assert_allclose(g, w, rtol=0, atol=0.5, err_msg=out)
            else:
                np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-6, err_msg=out)
    assert len(want[list(want)[0]]) > 0  # the check is not vacuous: there are detections
    text = str(m.plan())
    assert "staged" in text, text[-400:]
