"""The channels-last int8 conv on the CPU (Note [int8 nhwc conv], engine/backends/cpu/quant/
int8_conv_nhwc_cpu.h): the channels_last pass makes Int8Conv "Int8Conv@NHWC" where X is uint8 with
channels a multiple of 4 (uint8, or int8 read as x + 128), W int8 of zero points 0 and one group, on a
CPU with AVX-512 VNNI.
- Its outputs equal the NCHW kernel's bit for bit (the same exact sums, the same epilogue steps lane
  by lane) and onnxruntime's within one quantization step: requantized, residual and float outputs,
  padding, strides, dilation, filter counts that leave a partial vector and pixel counts that leave
  a partial tile.
- The thread count changes no bit; DNNX_INT8_AVX2=1 keeps ONNX's layout; a conv it cannot take
  (uint8 W, a grouped conv, 3 channels) keeps ONNX's layout and still runs.
- onnxruntime's own QDQ ResNet block and dnnx.quantize's, end to end."""
import os
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import dnnx

from test_qdq_int8 import has_vnni, input_of, output_step, quantize_static_qdq, quantized

pytestmark = pytest.mark.skipif(not has_vnni(), reason="the channels-last int8 conv needs AVX-512 VNNI")


def nhwc_and_nchw(model, x, monkeypatch, threads=None):
    """(channels-last output, its plan's text, ONNX-layout output) of `model` on x, every region made channels-last."""
    monkeypatch.setenv("DNNX_CONV_NHWC_MIN_CHANNELS", "0")
    nhwc = dnnx.load(model)
    plan = str(nhwc.plan())
    nchw = dnnx.load(model, passes={"channels_last": False})
    return nhwc.run_dict({"x": x})["y"], plan, nchw.run_dict({"x": x})["y"]


def float_model(nodes, x_shape, inits):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)
    x.type.tensor_type.shape.dim[0].dim_param = "N"  # any batch, 0 included
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    model = helper.make_model(helper.make_graph(nodes, "m", [x], [y], inits), opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def conv_block(c, m, hw, kernel, stride=1, dilation=1, pad=None, residual=False, seed=0):
    """relu(conv(x) [+ x]) as a float model, for onnxruntime's quantize_static."""
    rng = np.random.default_rng(seed)
    pad = (kernel // 2) * dilation if pad is None else pad
    inits = [numpy_helper.from_array((rng.normal(size=(m, c, kernel, kernel)) * 0.1).astype(np.float32), "w"),
             numpy_helper.from_array((rng.normal(size=m) * 0.1).astype(np.float32), "b")]
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[pad] * 4, strides=[stride] * 2,
                              dilations=[dilation] * 2)]
    last = "c"
    if residual:
        nodes.append(helper.make_node("Add", ["c", "x"], ["s"]))
        last = "s"
    nodes.append(helper.make_node("Relu", [last], ["y"]))
    return float_model(nodes, [2, c, hw[0], hw[1]], inits)


def quantize(model, tmp_path, name, activation="uint8"):
    """onnxruntime's QDQ form: per-channel int8 weights, uint8 activations (its defaults) or int8 ones."""
    return quantize_static_qdq(model, tmp_path, name, True, activation, "int8", batches=6)


def against_onnxruntime(model, x, got):
    import onnxruntime as ort

    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    steps = np.abs(got.astype(np.float64) - want) / output_step(model)
    assert steps.max() <= 1.0 + 1e-3, f"{steps.max():.3f} steps apart"


# (C, M, H x W, kernel, stride, dilation, residual): 1x1 and 3x3, stride 2, dilation 2, a filter count
# that ends in a partial vector (40: 16 + 16 + 8 lanes) or block (72: 64 + 8), pixel counts that are
# not a multiple of the tile's 6, an odd 5x5 window, a 1x1 over a padded input
BLOCKS = [(32, 64, (7, 9), 1, 1, 1, False), (64, 40, (11, 13), 3, 1, 1, False), (16, 72, (9, 9), 3, 2, 1, False),
          (32, 32, (10, 10), 1, 1, 1, True), (8, 24, (12, 7), 3, 1, 2, False), (12, 20, (9, 11), 5, 2, 1, False),
          (128, 128, (7, 9), 1, 1, 1, True),
          # several blocks, the last a whole vector: 144 = 64 + 64 + 16 and 208 = 3 x 64 + 16 (the first
          # blocks' last vectors were stored under a mask shifted past 32 bits, so not at all:
          # RegNetY's 152- and 144-filter convs found it)
          (56, 144, (6, 7), 1, 1, 1, False), (24, 208, (5, 5), 1, 2, 1, False), (56, 152, (8, 8), 1, 2, 1, False)]


@pytest.mark.parametrize("activation", ["uint8", "int8"])
@pytest.mark.parametrize("c, m, hw, kernel, stride, dilation, residual", BLOCKS)
def test_nhwc_conv_equals_the_nchw_kernel_and_onnxruntime(c, m, hw, kernel, stride, dilation, residual, activation,
                                                         tmp_path, monkeypatch):
    """uint8 X as it is, int8 X read as x + 128 (its zero point with it)."""
    model = quantize(conv_block(c, m, hw, kernel, stride, dilation, residual=residual), tmp_path, "block", activation)
    x = input_of(model, 5)
    got, plan, nchw = nhwc_and_nchw(model, x, monkeypatch)
    assert "Int8Conv@NHWC" in plan and "nhwc" in plan, plan
    if residual:
        assert "residual add" in plan, plan
    np.testing.assert_array_equal(got, nchw)
    against_onnxruntime(model, x, got)


def test_float_output_and_its_elementwise_readers_stay_channels_last(monkeypatch):
    """dnnx.quantize's residual join: Int8Conv with a float output, then the float Add and Relu,
    then QuantizeLinear, all in the channels-last region (Note [int8 residual join])."""
    rng = np.random.default_rng(3)
    c = 32
    inits = [numpy_helper.from_array((rng.normal(size=(c, c, 3, 3)) * 0.1).astype(np.float32), "w1"),
             numpy_helper.from_array((rng.normal(size=(c, c, 1, 1)) * 0.1).astype(np.float32), "w2")]
    nodes = [helper.make_node("Conv", ["x", "w1"], ["a"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["a"], ["r"]),
             helper.make_node("Conv", ["r", "w2"], ["b"]),
             helper.make_node("Add", ["b", "x"], ["s"]),
             helper.make_node("Relu", ["s"], ["y"])]
    model = float_model(nodes, [1, c, 10, 10], inits)
    calib = rng.normal(size=(4, c, 10, 10)).astype(np.float32)
    x = rng.normal(size=(1, c, 10, 10)).astype(np.float32)
    m = dnnx.load(model, precision="int8", calibration=calib, passes={"channels_last": False})
    monkeypatch.setenv("DNNX_CONV_NHWC_MIN_CHANNELS", "0")
    m_nhwc = dnnx.load(model, precision="int8", calibration=calib)
    plan = str(m_nhwc.plan())
    assert "Int8Conv@NHWC" in plan and "float output" in plan, plan
    got, want = m_nhwc.run(x), m.run(x)
    # the float parts between the int8 layers (the Add, the Relu) are the same arithmetic in either layout
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("seed", range(10))
def test_random_geometries_and_batches(seed, tmp_path, monkeypatch):
    """Seeded random convs (channels, filters, window, stride, pads, dilation, odd sizes) at batch
    0, 1 and 3: the channels-last conv's outputs are the NCHW kernel's."""
    rng = np.random.default_rng(seed)
    c, m = int(rng.choice([4, 8, 20, 36])), int(rng.choice([1, 5, 16, 17, 64, 65, 130, 144, 160]))
    kernel, stride, dilation = int(rng.choice([1, 2, 3, 5])), int(rng.choice([1, 2, 3])), int(rng.choice([1, 2]))
    pad = int(rng.integers(0, kernel))
    span = (kernel - 1) * dilation + 1
    hw = (int(rng.integers(max(1, span - 2 * pad), 12)), int(rng.integers(max(1, span - 2 * pad), 12)))
    model = quantize(conv_block(c, m, hw, kernel, stride, dilation, pad=pad, seed=seed), tmp_path, f"random{seed}")
    monkeypatch.setenv("DNNX_CONV_NHWC_MIN_CHANNELS", "0")
    for batch in (0, 1, 3):
        x = np.random.default_rng(seed + batch).normal(size=(batch, c) + hw).astype(np.float32)
        nhwc = dnnx.load(model, batch_size=batch)
        assert "Int8Conv@NHWC" in str(nhwc.plan()), str(nhwc.plan())
        nchw = dnnx.load(model, batch_size=batch, passes={"channels_last": False})
        got, want = nhwc.run_dict({"x": x})["y"], nchw.run_dict({"x": x})["y"]
        assert got.shape == want.shape and got.shape[0] == batch
        np.testing.assert_array_equal(got, want)


def test_thread_count_changes_no_bit(tmp_path, monkeypatch):
    model = quantize(conv_block(64, 72, (13, 17), 3), tmp_path, "threads")
    x = input_of(model, 9)
    monkeypatch.setenv("DNNX_CONV_NHWC_MIN_CHANNELS", "0")
    saved = dnnx.threads.get_num_threads()
    try:
        outs = []
        for threads in (1, 2):
            dnnx.threads.set_num_threads(threads)
            m = dnnx.load(model)
            assert "Int8Conv@NHWC" in str(m.plan())
            outs.append(m.run_dict({"x": x})["y"])
    finally:
        dnnx.threads.set_num_threads(saved)
    np.testing.assert_array_equal(outs[0], outs[1])


@pytest.mark.parametrize("kind, per_channel, activation, weight, why", [
    ("conv", True, "uint8", "uint8", "uint8 W"), ("conv_group", True, "uint8", "int8", "grouped"),
    ("conv7x7_s2", True, "uint8", "int8", "3 channels")])
def test_a_conv_it_cannot_take_keeps_onnx_layout(kind, per_channel, activation, weight, why, tmp_path, monkeypatch):
    model = quantized(kind, tmp_path, per_channel, activation, weight)
    x = input_of(model, 4)
    got, plan, nchw = nhwc_and_nchw(model, x, monkeypatch)
    assert "Int8Conv@NHWC" not in plan and "Int8Conv" in plan, (why, plan)
    np.testing.assert_array_equal(got, nchw)


def test_avx2_switch_keeps_onnx_layout(tmp_path):
    model = quantize(conv_block(32, 64, (8, 8), 3), tmp_path, "avx2")
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    code = ("import dnnx; m = dnnx.load(%r); p = str(m.plan()); print('NHWC' if '@NHWC' in p else 'NCHW')" % str(path))
    for env, want in (({"DNNX_INT8_AVX2": "1"}, "NCHW"), ({}, "NHWC")):
        out = subprocess.run([sys.executable, "-c", code], env={**os.environ, "DNNX_CONV_NHWC_MIN_CHANNELS": "0", **env},
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == want, (env, out.stdout)
