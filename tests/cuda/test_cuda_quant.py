"""Quantized models on CUDA (issue #37's first part): QuantizeLinear and DequantizeLinear run on
their device kernels (backends/cuda/quant/, tests/cuda/test_cuda_quantize_linear.py), so a QDQ
file's float layers run on the device between its pairs; the integer ops (QLinearConv,
MatMulInteger, com.microsoft's, ...) have no CUDA kernels yet and run on the host inside the CUDA
plan (Note [host fallback]), and plan() says so per layer; the outputs are the CPU's. Checked on
zoo2's q_* files (skipped without them) and on one-node models of com.microsoft's ops."""
import warnings

import numpy as np
import pytest
from onnx import TensorProto

import dnnx
from quant_cases import MS, node_model
from zoo_check import zoo2_inputs, zoo2_model

QUANT_OPS = {"QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "MatMulInteger", "ConvInteger",
             "QLinearMatMul", "QLinearConv"}
DEVICE_OPS = {"QuantizeLinear", "DequantizeLinear"}  # with CUDA kernels (8- and 16-bit integers)


def load_quietly(model, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dnnx.HostFallbackWarning)
        return dnnx.load(model, **kwargs)


@pytest.mark.parametrize("name", ["q_qdq_regnety_002", "q_qop_efficientnet_b0", "q_dyn_bert"])
@pytest.mark.parametrize("batch", [1, 2])
def test_quantized_zoo_model_on_cuda_matches_the_cpu(name, batch):
    model = zoo2_model(name)
    feeds = zoo2_inputs(name, model, batch)
    # The CPU reference runs the same graph as CUDA: the QDQ file's int8 layers (the CPU's bits on
    # both: tests/cuda/test_cuda_int8.py) and its float layers between. A quantized model
    # re-quantizes float values, so a last-bit difference in a float layer (cuDNN's and OpenBLAS's
    # summation orders) can move a value across a rounding tie of a later QuantizeLinear: one
    # quantization step, which on these files is up to ~1% of the output range (issue #37 asks
    # for a match within one step). The bound is 2% of the largest output.
    cpu = dnnx.load(model)
    want = cpu.run_dict(feeds)
    m = load_quietly(model, device="cuda")
    for step in range(3):  # eager, graph capture, replay
        got = m.run_dict(feeds)
        for key, ref in want.items():
            assert got[key].dtype == ref.dtype and got[key].shape == ref.shape
            scale = max(float(np.max(np.abs(ref))), 1e-30)
            assert float(np.max(np.abs(got[key].astype(np.float64) - ref))) / scale < 2e-2, (name, step, key)
    rows = [r for r in m.plan() if r["op"] in QUANT_OPS or r["op"].startswith("com.microsoft::")]
    live = [r for r in rows if "folded" not in r["algorithm"]]
    assert live, "the quantized layers should still be in the plan"
    on_host = {r["name"]: r["algorithm"].startswith("on the host") for r in live}
    assert not [r for r in live if r["op"] in DEVICE_OPS and on_host[r["name"]]], live
    assert all(on_host[r["name"]] for r in live if r["op"] not in DEVICE_OPS), live


def test_a_com_microsoft_op_is_a_host_layer_on_cuda():
    inputs = [("x", (TensorProto.UINT8, [2, 8])), ("xs", np.array(0.05, np.float32)), ("xz", np.array(128, np.uint8)),
              ("ys", np.array(1 / 255, np.float32)), ("yz", np.array(0, np.uint8))]
    model = node_model("QLinearSigmoid", inputs, ["y"], domain=MS, opset=17, out_types=[(TensorProto.UINT8, [2, 8])])
    x = np.arange(16, dtype=np.uint8).reshape(2, 8) * 16
    with pytest.warns(dnnx.HostFallbackWarning, match="QLinearSigmoid"):
        m = dnnx.load(model, device="cuda")
    np.testing.assert_array_equal(m.run(x), dnnx.load(model).run(x))
    row = m.plan()[0]
    assert row["op"] == "com.microsoft::QLinearSigmoid" and row["algorithm"].startswith("on the host"), row


def test_fp16_precision_keeps_the_quantized_layers_on_the_host():
    model = zoo2_model("q_qop_efficientnet_b0")
    feeds = zoo2_inputs("q_qop_efficientnet_b0", model, 1)
    m = load_quietly(model, device="cuda", precision="fp16")
    got = m.run_dict(feeds)
    want = dnnx.load(model).run_dict(feeds)
    for key, ref in want.items():
        assert np.max(np.abs(got[key] - ref)) / np.max(np.abs(ref)) < 0.05  # one quantization step (zoo.tol)


def test_dynamic_quantize_lstm_is_a_host_layer_on_cuda(tmp_path):
    # quantize_dynamic's LSTM (tests/test_dynamic_quantize_lstm.py): the CPU kernel inside the CUDA
    # plan, the CPU's bits
    from test_dynamic_quantize_lstm import lstm_model, quantized

    model = quantized(lstm_model("bidirectional", 16, 8, 5, 3, False, ("y", "y_h")), tmp_path, "int8", False)
    rng = np.random.default_rng(3)
    feeds = {"x": rng.normal(size=(5, 3, 8)).astype(np.float32), "h0": np.zeros((2, 3, 16), np.float32),
             "c0": np.zeros((2, 3, 16), np.float32)}
    with pytest.warns(dnnx.HostFallbackWarning, match="DynamicQuantizeLSTM"):
        m = dnnx.load(model, device="cuda")
    got, want = m.run_dict(feeds), dnnx.load(model).run_dict(feeds)
    for key, ref in want.items():
        np.testing.assert_array_equal(got[key], ref)
