"""precision="fp16" that does not silently return NaN (issue 18; Note [fp16 range] in
engine/runtime/passes/half_range.cc): onnx's light ResNet-50 and ZFNet-512 (every weight 0.02,
activations up to ~1e10 in float32) give finite outputs in fp16 from their weights alone, the
layers past fp16's range kept float32 with the reason in plan(); a run whose output is still not
finite raises dnnx.NonFiniteWarning naming the first layer whose output is not finite, and a
calibration batch keeps that layer float32. The decision logic without a GPU: tests/test_fp16_range.py.

Tolerance: the whole-model bounds of tests/cuda/test_cuda_fp16.py (its docstring): rtol 3e-2,
atol 3e-2 x max|want|, relative L2 2e-2, against the CPU's float32 result."""
import os
import warnings

import numpy as np
import onnx
import pytest
from onnx import helper

import dnnx
from ort_check import make_model
from test_cuda_fp16 import MODEL_ATOL, MODEL_L2, MODEL_RTOL, assert_fp16_close
from test_onnx_model_suites import DATA, _light_feeds as light_feeds

LIGHT = os.path.join(DATA, "light")


@pytest.mark.parametrize("name", ["resnet50", "zfnet512"])
def test_light_model_is_finite_in_fp16(name):
    path = os.path.join(LIGHT, f"light_{name}.onnx")
    feeds = light_feeds(onnx.load(path))
    want = dnnx.load(path).run_dict(feeds)
    gpu = dnnx.load(path, device="cuda", precision="fp16", measure_precision=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", dnnx.NonFiniteWarning)
        got = gpu.run_dict(feeds)
    for out, w in want.items():
        assert np.isfinite(got[out]).all(), out
        assert_fp16_close(got[out], w, f"light {name} fp16 vs cpu", MODEL_RTOL, MODEL_ATOL, MODEL_L2)
    plan = gpu.plan()
    kept = [r for r in plan if "kept in fp32" in r["math"]]
    assert kept, [r["math"] for r in plan]
    for row in kept:
        assert row["math"].startswith("fp32") and "exceed fp16's range (65504)" in row["math"], row
    # the first layers (input in [0, 1], activations small) still run in half
    assert any(r["math"].startswith("fp16") for r in plan), [r["math"] for r in plan]


def _relu_add():
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Add", ["r", "k"], ["y"], name="add")]
    return make_model(nodes, [("x", [4, 8])], [("y", None)], {"k": np.full(8, 0.5, np.float32)})


def test_nonfinite_output_warns_naming_the_first_layer():
    """Inputs far past the assumed [0, 1] and no calibration: x = 1e5 becomes inf at the entry
    conversion to fp16, so the Relu's output is the first that is not finite."""
    x = np.full((4, 8), 1e5, np.float32)
    gpu = dnnx.load(_relu_add(), device="cuda", precision="fp16", measure_precision=False)
    with pytest.warns(dnnx.NonFiniteWarning, match=r"output\(s\) 'y' hold inf or NaN.*relu") as caught:
        got = gpu.run(x)
    assert not np.isfinite(got).all()
    assert len([w for w in caught if issubclass(w.category, dnnx.NonFiniteWarning)]) == 1
    with pytest.warns(dnnx.NonFiniteWarning, match="relu"):  # the layer is looked for once, named every time
        gpu.run(x)


def test_calibration_keeps_that_layer_in_fp32():
    x = np.full((4, 8), 1e5, np.float32)
    gpu = dnnx.load(_relu_add(), device="cuda", precision="fp16", measure_precision=False, calibration=x)
    with warnings.catch_warnings():
        warnings.simplefilter("error", dnnx.NonFiniteWarning)
        got = gpu.run(x)
    np.testing.assert_allclose(got, x + 0.5, rtol=1e-6)
    rows = {r["name"]: r["math"] for r in gpu.plan()}
    assert "kept in fp32" in rows["relu"] and "(calibration)" in rows["relu"], rows


def test_finite_fp16_runs_do_not_warn():
    x = np.linspace(-1, 1, 32, dtype=np.float32).reshape(4, 8)
    gpu = dnnx.load(_relu_add(), device="cuda", precision="fp16", measure_precision=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", dnnx.NonFiniteWarning)
        np.testing.assert_allclose(gpu.run(x), np.maximum(x, 0) + 0.5, rtol=1e-3, atol=1e-3)
