"""com.microsoft's quantized ops (as onnxruntime's quantization tool writes them) on the CPU
against onnxruntime: outputs within one quantization step where requantized, tight where float."""
import numpy as np
import pytest
from onnx import TensorProto

from quant_cases import MS, node_model, reference_outputs, run_dnnx
from test_quant_integer import ELEM, assert_within_one_step, rand_q

RNG = np.random.default_rng(1)


def compare_ms(model, feeds):
    want, by = reference_outputs(model, feeds)
    assert by == "onnxruntime"
    got, m = run_dnnx(model, feeds)
    return list(got.values()), want, m


@pytest.mark.parametrize("op", ["QLinearAdd", "QLinearMul"])
@pytest.mark.parametrize("t", [np.uint8, np.int8])
@pytest.mark.parametrize("b_shape", [[2, 3, 4, 5], [3, 1, 1], []])
def test_qlinear_binary(op, t, b_shape):
    a, b = rand_q(t, (2, 3, 4, 5)), rand_q(t, b_shape)
    zp = (lambda v: np.array(v if t == np.uint8 else v - 128, t))
    inputs = [("a", (ELEM[t], [2, 3, 4, 5])), ("as", np.array(0.05, np.float32)), ("az", zp(130)),
              ("b", (ELEM[t], b_shape)), ("bs", np.array(0.03, np.float32)), ("bz", zp(120)),
              ("cs", np.array(0.07 if op == "QLinearAdd" else 0.6, np.float32)), ("cz", zp(125))]
    got, want, _ = compare_ms(node_model(op, inputs, ["c"], domain=MS, opset=17,
                                     out_types=[(ELEM[t], [2, 3, 4, 5])]), {"a": a, "b": b})
    assert_within_one_step(got[0], want[0])


def test_qlinear_add_without_zero_points():
    # onnxruntime refuses the omitted zero points its schema allows ("Input data type does not
    # match"): the reference is MLAS's formula in float32, zero points 0
    a, b = rand_q(np.uint8, (4, 6)), rand_q(np.uint8, (6,))
    inputs = [("a", (TensorProto.UINT8, [4, 6])), ("as", np.array(0.05, np.float32)), ("", None),
              ("b", (TensorProto.UINT8, [6])), ("bs", np.array(0.03, np.float32)), ("", None),
              ("cs", np.array(0.2, np.float32))]
    got, _ = run_dnnx(node_model("QLinearAdd", inputs, ["c"], domain=MS, opset=17,
                                 out_types=[(TensorProto.UINT8, [4, 6])]), {"a": a, "b": b})
    f32 = np.float32
    want = np.clip(np.rint((f32(0.05) * a.astype(f32) + f32(0.03) * b.astype(f32)) / f32(0.2)), 0, 255).astype(np.uint8)
    assert_within_one_step(got["c"], want)


@pytest.mark.parametrize("op, attrs", [("QLinearSigmoid", {}), ("QLinearLeakyRelu", {"alpha": 0.2})])
@pytest.mark.parametrize("t", [np.uint8, np.int8])
def test_qlinear_lookup(op, attrs, t):
    x = np.arange(256).astype(np.uint8).view(t).reshape(4, 64)  # every value
    zp = np.array(128 if t == np.uint8 else 0, t)
    inputs = [("x", (ELEM[t], [4, 64])), ("xs", np.array(0.06, np.float32)), ("xz", zp),
              ("ys", np.array(1 / 256 if op == "QLinearSigmoid" else 0.05, np.float32)),
              ("yz", np.array(0 if op == "QLinearSigmoid" and t == np.uint8 else -100 if t == np.int8 else 60, t))]
    got, want, _ = compare_ms(node_model(op, inputs, ["y"], domain=MS, opset=17, out_types=[(ELEM[t], [4, 64])], **attrs), {"x": x})
    assert_within_one_step(got[0], want[0])


@pytest.mark.parametrize("t", [np.uint8, np.int8])
@pytest.mark.parametrize("channels_last", [0, 1])
def test_qlinear_global_average_pool(t, channels_last):
    shape = [2, 5, 6, 3] if channels_last else [2, 3, 5, 6]
    x = rand_q(t, shape)
    zp = np.array(100 if t == np.uint8 else -20, t)
    inputs = [("x", (ELEM[t], shape)), ("xs", np.array(0.05, np.float32)), ("xz", zp),
              ("ys", np.array(0.02, np.float32)), ("yz", np.array(90 if t == np.uint8 else 5, t))]
    got, want, _ = compare_ms(node_model("QLinearGlobalAveragePool", inputs, ["y"], domain=MS, opset=17,
                                         out_types=[(ELEM[t], [2, 1, 1, 3] if channels_last else [2, 3, 1, 1])],
                                         channels_last=channels_last), {"x": x})
    assert_within_one_step(got[0], want[0])


@pytest.mark.parametrize("ta, tb", [(np.uint8, np.uint8), (np.uint8, np.int8), (np.int8, np.int8)])
@pytest.mark.parametrize("quantized_out", [True, False])
@pytest.mark.parametrize("trans_b, per_column, c_shape", [(0, False, [5]), (1, True, [3, 5]), (1, False, None)])
@pytest.mark.parametrize("alpha", [0.75, 1.0])
def test_qgemm(ta, tb, quantized_out, trans_b, per_column, c_shape, alpha):
    a = rand_q(ta, (3, 8))
    b = rand_q(tb, (5, 8) if trans_b else (8, 5))
    bs = (np.linspace(0.01, 0.03, 5) if per_column else np.array(0.02)).astype(np.float32)
    bz = (np.zeros(5, tb) if per_column else np.array(0, tb)) + (128 if tb == np.uint8 else 0)
    inputs = [("a", (ELEM[ta], [3, 8])), ("as", np.array(0.04, np.float32)), ("az", np.array(9, ta)),
              ("b", b), ("bs", bs), ("bz", bz.astype(tb))]
    inputs.append(("c", RNG.integers(-3000, 3000, c_shape).astype(np.int32)) if c_shape else ("", None))
    if quantized_out:
        inputs += [("ys", np.array(0.5, np.float32)), ("yz", np.array(100 if ta == np.uint8 else -7, ta))]
    model = node_model("QGemm", inputs, ["y"], domain=MS, opset=17, transB=trans_b, alpha=alpha,
                       out_types=[(ELEM[ta] if quantized_out else TensorProto.FLOAT, [3, 5])])
    got, want, m = compare_ms(model, {"a": a})
    # alpha 1 and C per column (or none): Int8Gemm's kernel (qdq_int8_cpu.h), its path in the plan
    int8_kernel = alpha == 1.0 and c_shape != [3, 5]
    assert ("(" in m.plan()[0]["algorithm"]) == int8_kernel, m.plan()[0]["algorithm"]
    if quantized_out:
        assert_within_one_step(got[0], want[0])
    else:
        np.testing.assert_allclose(got[0], want[0], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("op", ["QLinearAdd", "QLinearMul", "QLinearSigmoid", "QLinearLeakyRelu",
                                "QLinearGlobalAveragePool", "QGemm", "QLinearConcat", "MatMulIntegerToFloat",
                                "DynamicQuantizeMatMul", "QLinearAveragePool", "QLinearSoftmax"])
def test_empty_dims_match_onnxruntime(op):
    """tests/test_empty_every_op.py's check for the contrib ops (onnx has no node case of them)."""
    u8, f = TensorProto.UINT8, (lambda v: np.array(v, np.float32))
    z = np.array(3, np.uint8)
    if op in ("QLinearAdd", "QLinearMul"):
        inputs, feeds, out = [("a", (u8, [0, 4])), ("as", f(0.1)), ("az", z), ("b", (u8, [4])), ("bs", f(0.2)),
                              ("bz", z), ("cs", f(0.3)), ("cz", z)], {"a": np.zeros((0, 4), np.uint8),
                                                                       "b": np.ones(4, np.uint8)}, [0, 4]
    elif op == "QGemm":
        inputs, feeds, out = [("a", (u8, [0, 6])), ("as", f(0.1)), ("az", z), ("b", np.ones((6, 2), np.uint8)),
                              ("bs", f(0.2)), ("bz", z), ("", None), ("ys", f(0.3)), ("yz", z)], \
            {"a": np.zeros((0, 6), np.uint8)}, [0, 2]
    elif op == "QLinearConcat":
        inputs, feeds, out = [("ys", f(0.1)), ("yz", z), ("x0", (u8, [0, 2])), ("s0", f(0.2)), ("z0", z),
                              ("x1", (u8, [0, 3])), ("s1", f(0.1)), ("z1", z)], \
            {"x0": np.zeros((0, 2), np.uint8), "x1": np.zeros((0, 3), np.uint8)}, [0, 5]
    elif op in ("MatMulIntegerToFloat", "DynamicQuantizeMatMul"):
        dynamic = op == "DynamicQuantizeMatMul"
        a = ("a", (TensorProto.FLOAT if dynamic else u8, [0, 6]))
        rest = [("bs", f(0.2))] if dynamic else [("as", f(0.1)), ("bs", f(0.2)), ("az", z)]
        inputs = [a, ("b", np.ones((6, 2), np.uint8))] + rest
        feeds, out = {"a": np.zeros((0, 6), np.float32 if dynamic else np.uint8)}, [0, 2]
        model = node_model(op, inputs, ["y"], domain=MS, opset=17, out_types=[(TensorProto.FLOAT, out)])
        got, want, _ = compare_ms(model, feeds)
        assert got[0].shape == want[0].shape == tuple(out) and got[0].dtype == want[0].dtype
        return
    elif op == "QLinearAveragePool":
        inputs, feeds, out = [("x", (u8, [0, 3, 4, 4])), ("xs", f(0.1)), ("xz", z), ("ys", f(0.2)), ("yz", z)], \
            {"x": np.zeros((0, 3, 4, 4), np.uint8)}, [0, 3, 2, 2]
    elif op == "QLinearGlobalAveragePool":
        inputs, feeds, out = [("x", (u8, [0, 3, 2, 2])), ("xs", f(0.1)), ("xz", z), ("ys", f(0.2)), ("yz", z)], \
            {"x": np.zeros((0, 3, 2, 2), np.uint8)}, [0, 3, 1, 1]
    else:
        inputs, feeds, out = [("x", (u8, [2, 0])), ("xs", f(0.1)), ("xz", z), ("ys", f(0.2)), ("yz", z)], \
            {"x": np.zeros((2, 0), np.uint8)}, [2, 0]
    attrs = {"QLinearConcat": {"axis": 1}, "QLinearAveragePool": {"kernel_shape": [2, 2], "strides": [2, 2]},
             "QLinearSoftmax": {"node_attrs": {"opset": 13}}}.get(op, {})
    model = node_model(op, inputs, ["y"], domain=MS, opset=17, out_types=[(u8, out)], **attrs)
    got, want, _ = compare_ms(model, feeds)
    assert got[0].shape == want[0].shape == tuple(out) and got[0].dtype == want[0].dtype


@pytest.mark.parametrize("t", [np.uint8, np.int8])
def test_qlinear_concat(t):
    y_scale, y_zp = np.array(0.05, np.float32), np.array(10 if t == np.uint8 else -3, t)
    xs = [rand_q(t, (2, 3, 4)), rand_q(t, (2, 5, 4)), rand_q(t, (2, 1, 4))]
    params = [(np.array(0.08, np.float32), np.array(120 if t == np.uint8 else 4, t)),  # requantized
              (y_scale, y_zp),                                                         # copied
              (np.array(0.02, np.float32), np.array(0, t))]
    inputs = [("ys", y_scale), ("yz", y_zp)]
    for i, (x, (s, z)) in enumerate(zip(xs, params)):
        inputs += [(f"x{i}", (ELEM[t], list(x.shape))), (f"s{i}", s), (f"z{i}", z)]
    model = node_model("QLinearConcat", inputs, ["y"], domain=MS, opset=17, axis=-2,
                       out_types=[(ELEM[t], [2, 9, 4])])
    got, want, _ = compare_ms(model, {f"x{i}": x for i, x in enumerate(xs)})
    assert_within_one_step(got[0], want[0])
    np.testing.assert_array_equal(got[0][:, 3:8], xs[1])  # the copied input is bit for bit


@pytest.mark.parametrize("tb", [np.uint8, np.int8])
@pytest.mark.parametrize("per_column, bias", [(False, False), (True, True)])
def test_matmul_integer_to_float(tb, per_column, bias):
    a, b = rand_q(np.uint8, (2, 3, 16)), rand_q(tb, (16, 5))
    bs = (np.linspace(0.01, 0.05, 5) if per_column else np.array(0.02)).astype(np.float32)
    bz = rand_q(tb, (5,)) if per_column else np.array(3, tb)
    inputs = [("a", (TensorProto.UINT8, [2, 3, 16])), ("b", b), ("as", np.array(0.03, np.float32)), ("bs", bs),
              ("az", np.array(128, np.uint8)), ("bz", bz)]
    if bias:
        inputs.append(("bias", RNG.standard_normal(5).astype(np.float32)))
    model = node_model("MatMulIntegerToFloat", inputs, ["y"], domain=MS, opset=17,
                       out_types=[(TensorProto.FLOAT, [2, 3, 5])])
    got, want, m = compare_ms(model, {"a": a})
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-5)
    assert "int32 accumulation" in m.plan()[0]["math"]


@pytest.mark.parametrize("tb", [np.uint8, np.int8])
@pytest.mark.parametrize("per_column, bias", [(False, True), (True, False)])
def test_dynamic_quantize_matmul(tb, per_column, bias):
    a, b = RNG.standard_normal((4, 32)).astype(np.float32), rand_q(tb, (32, 6))
    bs = (np.linspace(0.01, 0.05, 6) if per_column else np.array(0.02)).astype(np.float32)
    bz = np.zeros(6 if per_column else (), tb)
    inputs = [("a", (TensorProto.FLOAT, [4, 32])), ("b", b), ("bs", bs), ("bz", bz)]
    if bias:
        inputs.append(("bias", RNG.standard_normal(6).astype(np.float32)))
    model = node_model("DynamicQuantizeMatMul", inputs, ["y"], domain=MS, opset=17,
                       out_types=[(TensorProto.FLOAT, [4, 6])])
    got, want, _ = compare_ms(model, {"a": a})
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("t", [np.uint8, np.int8])
@pytest.mark.parametrize("attrs", [{"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
                                   {"kernel_shape": [3, 2], "pads": [1, 0, 1, 1], "count_include_pad": 1},
                                   {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1},
                                   {"kernel_shape": [3, 3], "channels_last": 1, "pads": [1, 1, 1, 1]}])
def test_qlinear_average_pool(t, attrs):
    channels_last = attrs.get("channels_last", 0)
    shape = [2, 7, 6, 3] if channels_last else [2, 3, 7, 6]
    x = rand_q(t, shape)
    inputs = [("x", (ELEM[t], shape)), ("xs", np.array(0.05, np.float32)), ("xz", np.array(100 if t == np.uint8 else -5, t)),
              ("ys", np.array(0.04, np.float32)), ("yz", np.array(90 if t == np.uint8 else 7, t))]
    import onnxruntime as ort  # the output shape from onnxruntime's own run: contrib ops have no onnx inference

    probe = node_model("QLinearAveragePool", inputs, ["y"], domain=MS, opset=17, out_types=[(ELEM[t], None)], **attrs)
    sess = ort.InferenceSession(probe.SerializeToString(), providers=["CPUExecutionProvider"])
    out_shape = list(sess.run(None, {"x": x})[0].shape)
    model = node_model("QLinearAveragePool", inputs, ["y"], domain=MS, opset=17, out_types=[(ELEM[t], out_shape)],
                       **attrs)
    got, want, _ = compare_ms(model, {"x": x})
    assert_within_one_step(got[0], want[0])


@pytest.mark.parametrize("t", [np.uint8, np.int8])
@pytest.mark.parametrize("opset, axis", [(13, -1), (13, 1), (12, 1)])
def test_qlinear_softmax(t, opset, axis):
    x = rand_q(t, (2, 5, 7))
    inputs = [("x", (ELEM[t], [2, 5, 7])), ("xs", np.array(0.08, np.float32)), ("xz", np.array(0, t)),
              ("ys", np.array(1 / 256, np.float32)), ("yz", np.array(0 if t == np.uint8 else -128, t))]
    model = node_model("QLinearSoftmax", inputs, ["y"], domain=MS, opset=17, out_types=[(ELEM[t], [2, 5, 7])],
                       node_attrs={"opset": opset, "axis": axis})
    got, want, _ = compare_ms(model, {"x": x})
    assert_within_one_step(got[0], want[0])
