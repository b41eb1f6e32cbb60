"""QuantizeLinear and DequantizeLinear on their CUDA kernels (backends/cuda/quant/): per tensor,
per axis and blocked, int8, uint8, int16 and uint16 (and DequantizeLinear's int32), with and
without a zero point. The kernels repeat the CPU codec's float32 operations (a division, round
half to even, saturation; NaN gives 0), so the outputs are the CPU backend's bit for bit and
onnxruntime's. The plan row of the node names the device kernel. A QDQ model (quantize/dequantize
pairs around float Conv and MatMul) then runs with no host layer at all, its DequantizeLinear ->
MaxPool -> QuantizeLinear a float MaxPool on the device (the fuse_qdq_int8 pass makes 8-bit
MaxPools only beside the int8 layers it fuses, which CUDA has none of yet)."""
import warnings

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import dnnx
from ort_check import make_model, run_ort

RNG = np.random.default_rng(37)
ELEM = {np.int8: TensorProto.INT8, np.uint8: TensorProto.UINT8, np.int16: TensorProto.INT16,
        np.uint16: TensorProto.UINT16, np.int32: TensorProto.INT32, np.float32: TensorProto.FLOAT}


def load_device(model, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dnnx.HostFallbackWarning)
        m = dnnx.load(model, device="cuda", **kwargs)
    host = [r["name"] for r in m.plan() if r["algorithm"].startswith("on the host")]
    return m, host


def params(x_shape, form, axis, block, qtype):
    """scale and zero point of the form's shape: per tensor (scalar), per axis or blocked."""
    if form == "tensor":
        shape = []
    elif form == "axis":
        shape = [x_shape[axis]]
    else:
        shape = list(x_shape)
        shape[axis] = -(-x_shape[axis] // block)
    scale = RNG.uniform(0.01, 0.2, shape).astype(np.float32)
    info = np.iinfo(qtype)
    lo, hi = max(info.min, -100), min(info.max, 100)
    zp = RNG.integers(lo, hi + 1, shape).astype(qtype)
    return scale, zp


def one_node(op, x, scale, zp, out_type, axis, block):
    attrs = {"axis": axis}
    if block:
        attrs["block_size"] = block
    names = ["x", "s"] + (["z"] if zp is not None else [])
    inits = {"s": scale, **({"z": zp} if zp is not None else {})}
    node = helper.make_node(op, names, ["y"], name="under_test", **attrs)
    return make_model([node], [("x", list(x.shape), ELEM[x.dtype.type])], [("y", None, ELEM[out_type])], inits,
                      opset=21)


FORMS = [("tensor", 1, 0), ("axis", 1, 0), ("axis", 2, 0), ("blocked", 2, 4), ("blocked", 0, 2)]


@pytest.mark.parametrize("form,axis,block", FORMS, ids=lambda v: str(v))
@pytest.mark.parametrize("qtype", [np.int8, np.uint8, np.int16, np.uint16], ids=lambda t: t.__name__)
@pytest.mark.parametrize("with_zp", [True, False])
def test_quantize_linear_on_the_device_is_the_cpu_bit_for_bit(form, axis, block, qtype, with_zp):
    x_shape = (3, 6, 10)
    scale, zp = params(x_shape, form, axis, block, qtype)
    x = (RNG.standard_normal(x_shape) * 40).astype(np.float32)
    x.flat[:4] = [np.nan, np.inf, -np.inf, 1e9]  # NaN gives 0; the rest saturate
    if form == "tensor":  # exact ties of x / scale: half to even
        x.flat[4:8] = (np.array([0.5, 1.5, 2.5, -0.5], np.float32) * scale).astype(np.float32)
    if not with_zp:
        zp = None
        if qtype != np.uint8:
            pytest.skip("without a zero point QuantizeLinear writes uint8")
    model = one_node("QuantizeLinear", x, scale, zp, qtype, axis, block)
    m, host = load_device(model)
    assert host == [], m.plan()
    got = m.run_dict({"x": x})["y"]
    want = dnnx.load(model).run_dict({"x": x})["y"]
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(m.run_dict({"x": x})["y"], want)  # the captured graph's replay


@pytest.mark.parametrize("form,axis,block", FORMS, ids=lambda v: str(v))
@pytest.mark.parametrize("qtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32], ids=lambda t: t.__name__)
def test_dequantize_linear_on_the_device_is_the_cpu_bit_for_bit(form, axis, block, qtype):
    x_shape = (3, 6, 10)
    scale, zp = params(x_shape, form, axis, block, qtype)
    info = np.iinfo(qtype)
    x = RNG.integers(max(info.min, -2**31), min(info.max, 2**31 - 1), x_shape, endpoint=True).astype(qtype)
    model = one_node("DequantizeLinear", x, scale, zp, np.float32, axis, block)
    m, host = load_device(model)
    assert host == [], m.plan()
    got = m.run_dict({"x": x})["y"]
    want = dnnx.load(model).run_dict({"x": x})["y"]
    np.testing.assert_array_equal(got, want)
    if qtype in (np.int8, np.uint8, np.int32):  # onnxruntime's CPU kernels
        np.testing.assert_array_equal(got, run_ort(model, {"x": x})["y"])


def qdq_model():
    """x -> Q/DQ -> Conv (weights int8 per channel through DequantizeLinear) -> Relu -> Q/DQ ->
    MaxPool -> Q/DQ -> Flatten -> MatMul -> y: a QDQ file as quantize_static writes them."""
    w = RNG.integers(-127, 128, (8, 3, 3, 3)).astype(np.int8)
    ws = RNG.uniform(0.002, 0.01, 8).astype(np.float32)
    m_w = RNG.standard_normal((8 * 4 * 4, 5)).astype(np.float32) * 0.1
    s = lambda v: np.array(v, np.float32)  # noqa: E731
    z = lambda v: np.array(v, np.uint8)  # noqa: E731
    inits = {"ws": ws, "w_q": w, "wz": np.zeros(8, np.int8), "xs": s(0.02), "xz": z(128), "as": s(0.01), "az": z(0),
             "mw": m_w}
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["x_q"], name="q_x"),
        helper.make_node("DequantizeLinear", ["x_q", "xs", "xz"], ["x_dq"], name="dq_x"),
        helper.make_node("DequantizeLinear", ["w_q", "ws", "wz"], ["w"], name="dq_w", axis=0),
        helper.make_node("Conv", ["x_dq", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("QuantizeLinear", ["r", "as", "az"], ["r_q"], name="q_r"),
        helper.make_node("DequantizeLinear", ["r_q", "as", "az"], ["r_dq"], name="dq_r"),
        helper.make_node("MaxPool", ["r_dq"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("QuantizeLinear", ["p", "as", "az"], ["p_q"], name="q_p"),
        helper.make_node("DequantizeLinear", ["p_q", "as", "az"], ["p_dq"], name="dq_p"),
        helper.make_node("Flatten", ["p_dq"], ["f"], name="flatten"),
        helper.make_node("MatMul", ["f", "mw"], ["y"], name="fc"),
    ]
    return make_model(nodes, [("x", [2, 3, 8, 8])], [("y", None)], inits, opset=17)


def test_a_qdq_model_runs_on_the_device_with_no_host_layer():
    """The pairs themselves, the pass that makes int8 layers of them off (those, and the 8-bit
    MaxPool beside them that runs on the host: tests/cuda/test_cuda_int8.py)."""
    model = qdq_model()
    x = RNG.standard_normal((2, 3, 8, 8)).astype(np.float32)
    m, host = load_device(model, passes={"fuse_qdq_int8": False})
    assert host == [], m.plan()
    pool = [r for r in m.plan() if r["name"] == "pool"]
    assert pool and pool[0]["op"] == "MaxPool", m.plan()
    # The reference: the same float-between-pairs graph on the CPU (no int8 layers). A last-bit
    # difference of the float Conv (cuDNN's summation order) can move a value across a rounding
    # tie of the next QuantizeLinear: one step of 0.01 on the activations; the MatMul then sums
    # 128 of them with weights ~0.1: within 0.01 * sum|w| per output.
    want = dnnx.load(model, passes={"fuse_qdq_int8": False}).run_dict({"x": x})["y"]
    mw = numpy_helper.to_array([i for i in model.graph.initializer if i.name == "mw"][0])
    bound = 0.01 * float(np.abs(mw).sum(axis=0).max())
    for _ in range(3):  # eager, capture, replay
        got = m.run_dict({"x": x})["y"]
        np.testing.assert_allclose(got, want, rtol=0, atol=bound)
    np.testing.assert_allclose(got, run_ort(model, {"x": x})["y"], rtol=0, atol=bound)


@pytest.mark.parametrize("precision", ["fp16", "bf16"])
def test_half_precision_runs_the_quantization_nodes_on_the_device(precision):
    """Note [device dequantize at half precision]: at fp16 and bf16 the pairs run on the device
    kernels too, and the outputs are those of the same graph at fp32 within the half tolerance."""
    model = qdq_model()
    x = RNG.standard_normal((2, 3, 8, 8)).astype(np.float32)
    m = dnnx.load(model, device="cuda", precision=precision, measure_precision=False, passes={"fuse_qdq_int8": False})
    rows = {r["name"]: r for r in m.plan()}
    for name in ("q_x", "dq_x", "q_r", "dq_r"):
        if name in rows:  # (a pair next to the input may fold into the entry conversion)
            assert "quantize kernel" in rows[name]["algorithm"], rows[name]
    want = dnnx.load(model, passes={"fuse_qdq_int8": False}).run_dict({"x": x})["y"]
    got = m.run_dict({"x": x})["y"]
    # half activations move values across the 0.01 quantization steps: a few steps per output
    mw = numpy_helper.to_array([i for i in model.graph.initializer if i.name == "mw"][0])
    np.testing.assert_allclose(got, want, rtol=0, atol=0.01 * float(np.abs(mw).sum(axis=0).max()))
