"""Issue #15's small CUDA additions against the CPU backend (and onnxruntime where it takes the
case; tolerances in cuda_check.py): Pad's edge, reflect and wrap modes (the gather kernel of
layout/pad_kernels.cu, any element type; it must run on the device, never as a host layer nor as
a constant pad) and Pad's gradient in every mode (a gather, Note [separable adjoint]: the same
bits on every run; a computed constant_value's by atomic adds; against the CPU's, which
tests/test_gradients_pad.py checks against float64 finite differences; test_cuda_layer_grads.py's
tolerances), and Selu (elementwise/param_activation_kernels.cu), fp32 and fp16."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import dnnx
from cuda_check import assert_close, check_cuda
from ort_check import make_model, rand
from test_cuda_layer_grads import check_cuda_gradients


def pad_model(x_shape, pads, mode, opset=19, dtype=TensorProto.FLOAT, axes=None):
    inputs = ["x", "pads", "", "axes"] if axes is not None else ["x", "pads"]
    inits = {"pads": np.array(pads, np.int64)}
    if axes is not None:
        inits["axes"] = np.array(axes, np.int64)
    node = helper.make_node("Pad", inputs, ["y"], name="pad", mode=mode)
    return make_model([node], [("x", x_shape, dtype)], [("y", None, dtype)], inits, opset=opset)


def assert_pad_on_device(m):
    rows = [r for r in m.plan() if r["name"] == "pad"]
    assert rows and "pad kernel" in rows[0]["algorithm"] and not rows[0]["algorithm"].startswith("on the host"), \
        m.plan()


MODES = ["edge", "reflect", "wrap"]
CASES = [  # (x shape, pads)
    ([2, 3, 8, 9], [0, 0, 1, 2, 0, 0, 2, 1]),
    ([4, 7], [3, 1, 2, 5]),
    ([2, 5, 4], [0, -1, 2, 1, 2, -1]),  # crop one side, pad the other
    ([1, 2, 3, 2, 3, 4], [0, 0, 1, 1, 1, 2, 0, 1, 0, 1, 2, 1]),  # rank 6
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("x_shape,pads", CASES)
def test_pad_modes_match_cpu_and_onnxruntime(mode, x_shape, pads):
    model = pad_model(x_shape, pads, mode)
    assert_pad_on_device(dnnx.load(model, device="cuda"))
    check_cuda(model, {"x": rand(*x_shape)})


@pytest.mark.parametrize("mode", MODES)
def test_pad_modes_past_one_period_match_cpu(mode):
    # onnxruntime refuses some of these amounts; the CPU follows numpy.pad (tests/test_pad.py).
    model = pad_model([2, 3, 4], [1, 7, 9, 0, 6, 5], mode)
    check_cuda(model, {"x": rand(2, 3, 4)}, ort=False)


@pytest.mark.parametrize("dtype,np_type", [(TensorProto.INT64, np.int64), (TensorProto.INT32, np.int32)])
def test_pad_modes_integer_data(dtype, np_type):
    x = np.arange(60).reshape(3, 4, 5).astype(np_type)
    for mode in MODES:
        model = pad_model([3, 4, 5], [2, 3, 1, 0], mode, dtype=dtype, axes=[2, 0])
        gpu = dnnx.load(model, device="cuda").run(x)
        assert_close(gpu, dnnx.load(model).run(x), f"{mode} (cuda vs cpu)")


@pytest.mark.parametrize("mode", MODES)
def test_pad_modes_fp16(mode):
    model = pad_model([2, 3, 6, 5], [0, 0, 2, 3, 0, 0, 3, 2], mode)
    x = rand(2, 3, 6, 5)
    m = dnnx.load(model, device="cuda", precision="fp16", measure_precision=False)
    assert "fp16" in [r for r in m.plan() if r["name"] == "pad"][0]["math"], m.plan()
    got = m.run(x)
    # A gather moves elements unchanged: the fp16 result is the float32 one rounded once.
    want = dnnx.load(model).run(x.astype(np.float16).astype(np.float32))
    np.testing.assert_array_equal(got.astype(np.float32), want.astype(np.float16).astype(np.float32))


@pytest.mark.parametrize("mode", ["constant"] + MODES)
@pytest.mark.parametrize("pads,axes", [([0, 0, 2, 1, 0, 0, 1, 3], None), ([0, 1, -1, 2, 1, 0, 2, -1], None),
                                       ([6, 7, 9, 5], [2, 3])], ids=["pad", "crop+pad", "past-a-period"])
def test_pad_gradient_matches_cpu(mode, pads, axes):
    g = np.random.default_rng(5)
    inits = {"w": (g.standard_normal((3, 2, 3, 3)) * 0.4).astype(np.float32),
             "b": (g.standard_normal(3) * 0.1).astype(np.float32), "pads": np.array(pads, np.int64)}
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("ReduceMean", ["c"], ["v"], keepdims=0)]  # a computed constant_value
    inputs = ["c", "pads", "v"] + (["axes"] if axes is not None else [])
    if axes is not None:
        inits["axes"] = np.array(axes, np.int64)
    nodes.append(helper.make_node("Pad", inputs, ["y"], name="pad", mode=mode))
    model = make_model(nodes, [("x", [2, 2, 5, 4])], [("y", None)], inits, opset=19)
    y_shape = [d.dim_value for d in model.graph.output[0].type.tensor_type.shape.dim]
    check_cuda_gradients(model, ["w", "b"], {"x": rand(2, 2, 5, 4, seed=3)}, rand(*y_shape, seed=4))


def test_reflect_pad_gradient_is_the_same_on_every_run():
    # pads past a period: each dX element receives several reflected dY terms
    g = np.random.default_rng(6)
    inits = {"w": (g.standard_normal((3, 2, 3, 3)) * 0.4).astype(np.float32),
             "b": (g.standard_normal(3) * 0.1).astype(np.float32), "pads": np.array([0, 0, 9, 7, 0, 0, 8, 6], np.int64)}
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("Pad", ["c", "pads"], ["y"], name="pad", mode="reflect")]
    model = make_model(nodes, [("x", [2, 2, 5, 4])], [("y", None)], inits, opset=19)
    y_shape = [d.dim_value for d in model.graph.output[0].type.tensor_type.shape.dim]
    x, target = rand(2, 2, 5, 4, seed=3), rand(*y_shape, seed=4)
    got = check_cuda_gradients(model, ["w", "b"], {"x": x}, target)
    tuner = dnnx.load(model, device="cuda", optimize=False).finetune(trainable=["w", "b"], loss="mse",
                                                                      deterministic=True)
    assert any("adjoint as a gather" in r["algorithm"] for r in tuner.plan()), tuner.plan()
    for _ in range(3):
        grads = tuner.gradients(x, target)[1]
        for name in ("w", "b"):
            np.testing.assert_array_equal(np.asarray(grads[name]), got[name])


@pytest.mark.parametrize("attrs", [{}, {"alpha": 2.0, "gamma": 3.0}, {"alpha": 0.5}])
@pytest.mark.parametrize("shape", [[7], [2, 3, 5, 4], [64, 500]])
def test_selu(attrs, shape):
    node = helper.make_node("Selu", ["x"], ["y"], name="selu", **attrs)
    model = make_model([node], [("x", shape)], [("y", None)])
    m = dnnx.load(model, device="cuda")
    rows = [r for r in m.plan() if r["name"] == "selu"]
    assert rows and "elementwise kernel" in rows[0]["algorithm"], m.plan()
    check_cuda(model, {"x": 3 * rand(*shape)})


def test_selu_fp16():
    node = helper.make_node("Selu", ["x"], ["y"])
    model = make_model([node], [("x", [8, 33])], [("y", None)])
    x = 3 * rand(8, 33)
    got = dnnx.load(model, device="cuda", precision="fp16", measure_precision=False).run(x).astype(np.float32)
    want = dnnx.load(model).run(x)
    np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3)
