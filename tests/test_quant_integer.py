"""The integer ops on the CPU against onnxruntime: DynamicQuantizeLinear, MatMulInteger,
ConvInteger, QLinearMatMul and QLinearConv (uint8/int8 combinations, zero points per tensor, per
row, per column or per channel as each op allows), and the int32 accumulation bit-exact against a
numpy int64 reference at K >= 4096."""
import numpy as np
import pytest
from onnx import TensorProto

import dnnx
from quant_cases import node_model, reference_outputs, run_dnnx

ELEM = {np.int8: TensorProto.INT8, np.uint8: TensorProto.UINT8}
RNG = np.random.default_rng(0)


def rand_q(t, shape, rng=RNG):
    info = np.iinfo(t)
    return rng.integers(info.min, info.max + 1, shape).astype(t)


def assert_within_one_step(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    diff = np.abs(got.astype(np.int64) - want.astype(np.int64))
    assert diff.max(initial=0) <= 1, f"{int(diff.max())} quantization steps apart"
    assert np.mean(diff != 0) < 0.01  # an off-by-one is a rare float32 tie, not a habit


def test_dynamic_quantize_linear_matches_onnxruntime():
    x = RNG.standard_normal((3, 17)).astype(np.float32) * 3
    model = node_model("DynamicQuantizeLinear", [("x", (TensorProto.FLOAT, [3, 17]))], ["y", "s", "z"], opset=11)
    want, by = reference_outputs(model, {"x": x})
    got, _ = run_dnnx(model, {"x": x})
    assert by == "onnxruntime"
    np.testing.assert_array_equal(got["y"], want[0])
    assert got["s"] == want[1] and got["z"] == want[2] and got["z"].dtype == np.uint8


def test_dynamic_quantize_linear_positive_and_constant_inputs():
    for x in (np.abs(RNG.standard_normal((5,))).astype(np.float32), np.zeros(4, np.float32)):
        model = node_model("DynamicQuantizeLinear", [("x", (TensorProto.FLOAT, list(x.shape)))], ["y", "s", "z"],
                           opset=11)
        want, _ = reference_outputs(model, {"x": x})
        got, _ = run_dnnx(model, {"x": x})
        for g, w in zip(got.values(), want):
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("n", [16, 4096 + 7, 33])
def test_dynamic_quantize_linear_in_registers_matches_onnxruntime(n):
    """Note [dynamic quantize in registers]: the 16-lane min/max and quantize (with a scalar tail)
    give onnxruntime's bytes, ties (values at half steps of the scale) included."""
    x = RNG.standard_normal(n).astype(np.float32) * 5
    x[0], x[-1] = -1.0, 254.0 / 255.0 * 3  # scale (3 + 1) / 255 and zero point 64: exact multiples below
    x[5::9] = (np.arange(len(x[5::9])) % 40 - 20 + 0.5) * np.float32(4.0 / 255.0)  # half steps: ties
    x[1] = 3.0
    model = node_model("DynamicQuantizeLinear", [("x", (TensorProto.FLOAT, [n]))], ["y", "s", "z"], opset=11)
    want, by = reference_outputs(model, {"x": x})
    got, _ = run_dnnx(model, {"x": x})
    assert by == "onnxruntime"
    np.testing.assert_array_equal(got["y"], want[0])
    assert got["s"] == want[1] and got["z"] == want[2]


@pytest.mark.parametrize("ta, tb", [(np.uint8, np.uint8), (np.uint8, np.int8), (np.int8, np.int8), (np.int8, np.uint8)])
@pytest.mark.parametrize("b_zp", ["tensor", "column", "none"])
def test_matmul_integer(ta, tb, b_zp):
    a, b = rand_q(ta, (2, 5, 7)), rand_q(tb, (7, 6))
    inputs = [("a", (ELEM[ta], [2, 5, 7])), ("b", b), ("az", np.array(3, ta))]
    if b_zp != "none":
        inputs.append(("bz", np.array(-2 if tb == np.int8 else 9, tb) if b_zp == "tensor" else rand_q(tb, (6,))))
    model = node_model("MatMulInteger", inputs, ["y"], opset=10)
    got, m = run_dnnx(model, {"a": a})
    bz = inputs[3][1].astype(np.int64) if b_zp != "none" else 0
    ref = (a.astype(np.int64) - 3) @ (b.astype(np.int64) - bz)
    np.testing.assert_array_equal(got["y"], ref)
    want, by = reference_outputs(model, {"a": a})
    if by == "onnxruntime":
        np.testing.assert_array_equal(got["y"], want[0])
    assert "int32 accumulation" in m.plan()[0]["math"]


def test_matmul_integer_per_row_a_zero_point():
    # onnx allows A's zero point per row ([M]); onnxruntime does not: the numpy reference
    a, b = rand_q(np.uint8, (4, 9)), rand_q(np.int8, (9, 3))
    az = rand_q(np.uint8, (4,))
    model = node_model("MatMulInteger", [("a", (TensorProto.UINT8, [4, 9])), ("b", b), ("az", az)], ["y"], opset=10)
    got, _ = run_dnnx(model, {"a": a})
    np.testing.assert_array_equal(got["y"], (a.astype(np.int64) - az[:, None]) @ b.astype(np.int64))


@pytest.mark.parametrize("k", [4096, 8192])
def test_int32_accumulation_is_bit_exact_at_large_k(k):
    rng = np.random.default_rng(k)
    a, b = rand_q(np.uint8, (8, k), rng), rand_q(np.int8, (k, 16), rng)
    a[0] = 255  # the worst row: every product at its largest magnitude
    b[:, 0] = -128
    model = node_model("MatMulInteger", [("a", (TensorProto.UINT8, [8, k])), ("b", b), ("az", np.array(0, np.uint8)),
                                         ("bz", np.array(0, np.int8))], ["y"], opset=10)
    got, _ = run_dnnx(model, {"a": a})
    ref = a.astype(np.int64) @ b.astype(np.int64)
    assert np.abs(ref).max() < 2**31
    np.testing.assert_array_equal(got["y"].astype(np.int64), ref)
    np.testing.assert_array_equal(got["y"], reference_outputs(model, {"a": a})[0][0])


@pytest.mark.parametrize("tx, tw", [(np.uint8, np.uint8), (np.uint8, np.int8), (np.int8, np.int8)])
@pytest.mark.parametrize("attrs", [{}, {"pads": [1, 1, 1, 1], "strides": [2, 2]}, {"group": 2, "pads": [0, 1, 2, 1],
                                                                                    "dilations": [2, 1]}])
def test_conv_integer(tx, tw, attrs):
    x, w = rand_q(tx, (2, 4, 7, 6)), rand_q(tw, (6, 4 // attrs.get("group", 1), 3, 3))
    wz = np.array(1, tw)
    model = node_model("ConvInteger", [("x", (ELEM[tx], [2, 4, 7, 6])), ("w", w), ("xz", np.array(5, tx)), ("wz", wz)],
                       ["y"], opset=10, **attrs)
    want, by = reference_outputs(model, {"x": x})
    got, _ = run_dnnx(model, {"x": x})
    np.testing.assert_array_equal(got["y"], want[0], err_msg=by)


def qlinear_matmul_model(ta, tb, ty, b_scale, b_zp, a_shape, b):
    inputs = [("a", (ELEM[ta], a_shape)), ("as", np.array(0.02, np.float32)), ("az", np.array(7, ta)),
              ("b", b), ("bs", b_scale), ("bz", b_zp), ("ys", np.array(0.15, np.float32)), ("yz", np.array(-4 if ty == np.int8 else 120, ty))]
    return node_model("QLinearMatMul", inputs, ["y"], opset=10)


@pytest.mark.parametrize("ta, tb", [(np.uint8, np.uint8), (np.uint8, np.int8), (np.int8, np.int8)])
@pytest.mark.parametrize("per_column", [False, True])
def test_qlinear_matmul(ta, tb, per_column):
    b = rand_q(tb, (2, 16, 5))
    b_scale = (np.linspace(0.01, 0.05, 5) if per_column else np.array(0.03)).astype(np.float32)
    b_zp = (rand_q(tb, (5,)) if per_column else np.array(2, tb))
    model = qlinear_matmul_model(ta, tb, ta, b_scale, b_zp, [2, 3, 16], b)
    a = rand_q(ta, (2, 3, 16))
    want, by = reference_outputs(model, {"a": a})
    got, _ = run_dnnx(model, {"a": a})
    assert_within_one_step(got["y"], want[0])


@pytest.mark.parametrize("tx, tw", [(np.uint8, np.uint8), (np.uint8, np.int8), (np.int8, np.int8)])
@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("group", [1, 3, 6])  # 6: depthwise (Note [int8 depthwise])
def test_qlinear_conv(tx, tw, per_channel, group):
    x = rand_q(tx, (1, 6, 9, 8))
    w = rand_q(tw, (6, 6 // group, 3, 3))
    ws = (np.linspace(0.002, 0.01, 6) if per_channel else np.array(0.005)).astype(np.float32)
    wz = np.zeros(6 if per_channel else (), tw)  # onnxruntime wants symmetric int8 weights; uint8 may shift
    if tw == np.uint8:
        wz = wz + 128
    bias = RNG.integers(-2000, 2000, 6).astype(np.int32)
    inputs = [("x", (ELEM[tx], [1, 6, 9, 8])), ("xs", np.array(0.04, np.float32)), ("xz", np.array(10, tx)),
              ("w", w), ("ws", ws), ("wz", wz), ("ys", np.array(0.3, np.float32)),
              ("yz", np.array(3 if tx == np.int8 else 130, tx)), ("B", bias)]
    model = node_model("QLinearConv", inputs, ["y"], opset=10, group=group, pads=[1, 1, 1, 1], strides=[1, 2])
    want, by = reference_outputs(model, {"x": x})
    got, m = run_dnnx(model, {"x": x})
    assert_within_one_step(got["y"], want[0])
    # constant weights: Int8Conv's kernel (qdq_int8_cpu.h), requantizing in its epilogue
    assert m.plan()[0]["math"] == f"int8, int32 accumulation, requantized to {np.dtype(tx).name}"
    assert ("depthwise" in m.plan()[0]["algorithm"]) == (group == 6)


def test_qlinear_conv_refuses_a_wrong_bias_naming_it():
    inputs = [("x", (TensorProto.UINT8, [1, 2, 4, 4])), ("xs", np.array(0.1, np.float32)), ("xz", np.array(0, np.uint8)),
              ("w", np.ones((3, 2, 1, 1), np.uint8)), ("ws", np.array(0.1, np.float32)), ("wz", np.array(0, np.uint8)),
              ("ys", np.array(0.1, np.float32)), ("yz", np.array(0, np.uint8)), ("B", np.zeros(4, np.int32))]
    model = node_model("QLinearConv", inputs, ["y"], opset=10)
    with pytest.raises(dnnx.InvalidModelError, match=r"node 'n' \(QLinearConv\): B must be int32 \[M\] = \[3\]"):
        dnnx.load(model)


def test_matmul_integer_constant_b_is_packed_and_a_graph_input_b_is_not():
    """A constant B is packed once for the int8 GEMM (its path in the plan); a B fed at run time
    takes the int16 loop: both give numpy's exact sums."""
    a, b = rand_q(np.uint8, (3, 6, 40)), rand_q(np.int8, (40, 9))
    bz = rand_q(np.int8, (9,))
    ref = (a.astype(np.int64) - 7) @ (b.astype(np.int64) - bz)
    constant = node_model("MatMulInteger", [("a", (TensorProto.UINT8, [3, 6, 40])), ("b", b), ("az", np.array(7, np.uint8)),
                                            ("bz", bz)], ["y"], opset=10)
    fed = node_model("MatMulInteger", [("a", (TensorProto.UINT8, [3, 6, 40])), ("b", (TensorProto.INT8, [40, 9])),
                                       ("az", np.array(7, np.uint8)), ("bz", bz)], ["y"], opset=10)
    got, m = run_dnnx(constant, {"a": a})
    np.testing.assert_array_equal(got["y"], ref)
    assert "(" in m.plan()[0]["algorithm"]  # the GEMM path's name: avx512-vnni, avx2, ...
    got, m = run_dnnx(fed, {"a": a, "b": b})
    np.testing.assert_array_equal(got["y"], ref)
    assert "(" not in m.plan()[0]["algorithm"]


@pytest.mark.parametrize("switch", ["DNNX_INT8_AVX2", "DNNX_INT8_PORTABLE"])
def test_matmul_integer_packed_b_on_the_forced_paths(switch, tmp_path):
    """The packed B on the AVX2 path and the plain loop (the switches are read once: a subprocess),
    uint8 weights with a zero point per column, K past 4096: numpy's exact sums."""
    import os
    import subprocess
    import sys

    import onnx

    rng = np.random.default_rng(3)
    a, b = rand_q(np.uint8, (5, 4100), rng), rand_q(np.uint8, (4100, 11), rng)
    bz = rand_q(np.uint8, (11,), rng)
    model = node_model("MatMulInteger", [("a", (TensorProto.UINT8, [5, 4100])), ("b", b), ("az", np.array(200, np.uint8)),
                                         ("bz", bz)], ["y"], opset=10)
    onnx.save(model, str(tmp_path / "m.onnx"))
    np.save(tmp_path / "a.npy", a)
    script = ("import sys, numpy as np, dnnx\n"
              "m = dnnx.load(sys.argv[1]); a = np.load(sys.argv[2])\n"
              "np.save(sys.argv[3], m.run_dict({'a': a})['y']); print(m.plan())\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("DNNX_INT8_")}
    env[switch] = "1"
    r = subprocess.run([sys.executable, "-c", script, str(tmp_path / "m.onnx"), str(tmp_path / "a.npy"),
                        str(tmp_path / "y.npy")], env=env, capture_output=True, text=True, check=True)
    assert ("(avx2)" if switch == "DNNX_INT8_AVX2" else "(portable)") in r.stdout, r.stdout
    ref = (a.astype(np.int64) - 200) @ (b.astype(np.int64) - bz)
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), ref)
