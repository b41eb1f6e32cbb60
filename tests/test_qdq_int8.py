"""Int8 compute for QDQ files (Note [qdq int8], engine/runtime/passes/fuse_qdq_int8.cc): the
fuse_qdq_int8 pass makes one Int8Conv / Int8Gemm / Int8MatMul of DequantizeLinear -> op -> QuantizeLinear,
and the CPU runs it as an int32-accumulating int8 GEMM (Note [int8 gemm paths]).
- The GEMM itself, bit-exact against numpy's integer product at K >= 4096, on every path this CPU
  has (AVX-512 VNNI, AVX2, the portable loop; the test-only _pass_hooks.int8_gemm picks one).
- Small models quantized by onnxruntime's quantize_static (QDQ, per tensor and per channel, int8
  and uint8 activations and weights): fused against the float-between-QDQ run (the pass off) and
  against onnxruntime, within one step of the output's quantization.
- DNNX_INT8_AVX2=1 forces the AVX2 path on a VNNI CPU, DNNX_INT8_AVXVNNI=1 the AVX-VNNI (ymm)
  one where the CPU has it, DNNX_INT8_PORTABLE=1 the plain loop (a
  subprocess each: the switches are read once): the same outputs, bit for bit, and plan() says
  which path ran.
- plan() shows each fused layer as int8 with int32 accumulation."""
import os
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import dnnx
from dnnx._native import load_extension
from ort_check import qdq_reference_session

pass_hooks = load_extension("_pass_hooks")  # test-only module, beside _core


def has_vnni():
    try:
        flags = open("/proc/cpuinfo").read()
    except OSError:
        return False
    return " avx512_vnni" in flags and " avx512bw" in flags


def has_vbmi():
    try:
        return " avx512vbmi" in open("/proc/cpuinfo").read() and has_vnni()
    except OSError:
        return False


def has_avx2():
    try:
        return " avx2" in open("/proc/cpuinfo").read()
    except OSError:
        return False


def has_avx_vnni():
    try:
        return " avx_vnni" in open("/proc/cpuinfo").read()
    except OSError:
        return False


def has_amx():
    """AMX-INT8 here and granted by the OS (Note [int8 amx]): the hook refuses the path otherwise."""
    try:
        flags = open("/proc/cpuinfo").read()
    except OSError:
        return False
    if " amx_int8" not in flags or " amx_tile" not in flags or not has_vnni():
        return False
    try:
        pass_hooks.int8_gemm(np.ones((1, 1), np.int8), 0, np.ones((1, 1), np.uint8), 0, "amx")
    except ValueError:  # the OS refused the tile data: the vnni path instead
        return False
    return True


PATHS = (["portable"] + (["avx2"] if has_avx2() else []) + (["avx-vnni"] if has_avx_vnni() else [])
         + (["vnni"] if has_vnni() else []) + (["amx"] if has_amx() else []))
VNNI_KINDS = ("vnni", "avx-vnni", "amx")  # int8 weights with zero point 0 (else AVX2)


# ---- the GEMM, bit-exact ----

@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("w_type, b_type, k", [(np.int8, np.uint8, 4096), (np.int8, np.int8, 4099),
                                               (np.uint8, np.uint8, 4097), (np.int8, np.uint8, 8191)])
def test_int8_gemm_is_exact_int32_accumulation(path, w_type, b_type, k):
    rng = np.random.default_rng(k)
    m, n = 13, 37  # row and column tails on every path
    wi, bi = np.iinfo(w_type), np.iinfo(b_type)
    w = rng.integers(wi.min, wi.max + 1, size=(m, k)).astype(w_type)
    b = rng.integers(bi.min, bi.max + 1, size=(k, n)).astype(b_type)
    w[0, :] = wi.min  # the worst products: |w| and b at their extremes (vpmaddubsw would saturate)
    b[:, 0] = bi.max
    w_zp = 0 if path in VNNI_KINDS or w_type == np.int8 else 3
    if path in VNNI_KINDS and w_type != np.int8:
        pytest.skip("the VNNI paths take int8 weights with zero point 0 (else AVX2)")
    b_zp = int(bi.min) + 5
    got = pass_hooks.int8_gemm(w, w_zp, b, b_zp, path)
    want = (w.astype(np.int64) - w_zp) @ (b.astype(np.int64) - b_zp)
    assert np.abs(want).max() < 2**31
    np.testing.assert_array_equal(got, want.astype(np.int32))


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("m, k, n", [(13, 4096, 1), (17, 4099, 2), (17, 4103, 3), (8, 5, 1)])
def test_int8_gemm_of_few_columns_is_exact(path, m, k, n):
    """One to three columns (a classifier at batch 1): the VNNI path's W x b form (Note [int8 gemv]),
    odd row tiles and a lone last k group included; the other paths as they are."""
    rng = np.random.default_rng(m * k + n)
    w = rng.integers(-128, 128, size=(m, k)).astype(np.int8)
    b = rng.integers(0, 256, size=(k, n)).astype(np.uint8)
    w[0, :] = -128
    b[:, 0] = 255
    got = pass_hooks.int8_gemm(w, 0, b, 17, path)
    want = w.astype(np.int64) @ (b.astype(np.int64) - 17)
    np.testing.assert_array_equal(got, want.astype(np.int32))


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("n", [4, 8, 9, 16, 17, 20, 24, 25, 32, 40, 49, 56, 81, 196, 200])
def test_int8_gemm_column_tails_are_exact(path, n):
    """The VNNI path's last panel of 8, 16 or 32 columns (Note [vnni column tails]), or two of 16
    and 8 for a tail of 17 to 24 (Note [vnni split tails]: 17, 20, 24, 49, 56, 81), packed from B's
    rows (a narrower tail copied out first); the other paths as they are."""
    rng = np.random.default_rng(n)
    m, k = 11, 258  # a row tail and a k tail (65 groups of 4, the last short: an odd count)
    w = rng.integers(-128, 128, size=(m, k)).astype(np.int8)
    b = rng.integers(0, 256, size=(k, n)).astype(np.uint8)
    got = pass_hooks.int8_gemm(w, 0, b, 3, path)
    want = w.astype(np.int64) @ (b.astype(np.int64) - 3)
    np.testing.assert_array_equal(got, want.astype(np.int32))


@pytest.mark.skipif(not has_amx(), reason="no AMX-INT8 here (or the OS keeps its tile data)")
@pytest.mark.parametrize("m, k, n", [(1, 1, 1), (16, 64, 32), (33, 63, 31), (45, 65, 70), (64, 200, 97), (7, 4099, 33)])
def test_int8_gemm_amx_tiles_are_exact(m, k, n):
    """Note [int8 amx]: row tiles of 32 (two W tiles of 16), columns in 32-wide panels (two B
    tiles), k in 64-byte tile rows: tails of each, against the int64 product."""
    rng = np.random.default_rng(m * 1000 + k + n)
    w = rng.integers(-128, 128, size=(m, k)).astype(np.int8)
    b = rng.integers(0, 256, size=(k, n)).astype(np.uint8)
    w[0, :] = -128
    b[:, 0] = 255
    got = pass_hooks.int8_gemm(w, 0, b, 201, "amx")
    want = w.astype(np.int64) @ (b.astype(np.int64) - 201)
    np.testing.assert_array_equal(got, want.astype(np.int32))


def test_int8_gemm_vnni_refuses_what_it_cannot_take():
    if not has_vnni():
        pytest.skip("no AVX-512 VNNI here")
    w = np.ones((4, 8), np.int8)
    b = np.ones((8, 4), np.uint8)
    with pytest.raises(ValueError, match="avx2"):  # InputError
        pass_hooks.int8_gemm(w, 1, b, 0, "vnni")  # a nonzero weight zero point goes to AVX2


# ---- QDQ models from onnxruntime's quantize_static ----

def float_model(kind, symbolic_batch=False):
    rng = np.random.default_rng(7)
    inits, nodes = [], []

    def const(name, a):
        inits.append(numpy_helper.from_array(a.astype(np.float32), name))
        return name

    if kind == "conv":  # 3x3, stride 2, padded, bias, Relu
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 15, 15])
        nodes += [helper.make_node("Conv", ["x", const("w", rng.normal(size=(24, 8, 3, 3)) * 0.2),
                                            const("b", rng.normal(size=24) * 0.1)], ["c"],
                                   pads=[1, 1, 1, 1], strides=[2, 2]),
                  helper.make_node("Relu", ["c"], ["y"])]
    elif kind == "conv_s2_wide":  # stride 2 over rows wide enough for im2col's vector gather
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 9, 75])
        nodes += [helper.make_node("Conv", ["x", const("w", rng.normal(size=(16, 4, 3, 3)) * 0.2)], ["y"],
                                   pads=[1, 1, 1, 1], strides=[2, 2])]
    elif kind == "conv_7x7_out":  # 49 columns: panels of 32, 16 and 8 (Note [vnni split tails]), im2col and 1x1
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 24, 7, 7])
        nodes += [helper.make_node("Conv", ["x", const("w", rng.normal(size=(40, 24, 3, 3)) * 0.1)], ["c"],
                                   pads=[1, 1, 1, 1]),
                  helper.make_node("Relu", ["c"], ["r"]),
                  helper.make_node("Conv", ["r", const("w2", rng.normal(size=(16, 40, 1, 1)) * 0.2)], ["y"])]
    elif kind in ("conv_s2_phase", "conv1x1_s2", "conv7x7_s2"):  # stride 2 on phase planes: Note [int8 phase planes]
        shape, wshape, attrs = {"conv_s2_phase": ([1, 16, 14, 14], (24, 16, 3, 3), dict(pads=[1, 1, 1, 1])),
                                "conv1x1_s2": ([1, 32, 14, 22], (40, 32, 1, 1), {}),
                                "conv7x7_s2": ([1, 3, 70, 144], (16, 3, 7, 7), dict(pads=[3, 3, 3, 3]))}[kind]
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)
        nodes += [helper.make_node("Conv", ["x", const("w", rng.normal(size=wshape) * 0.2),
                                            const("b", rng.normal(size=wshape[0]) * 0.1)], ["c"], strides=[2, 2], **attrs),
                  helper.make_node("Relu", ["c"], ["y"])]
    elif kind == "conv_maxpool":  # conv -> relu -> maxpool: the pool's QDQ pair dropped, it runs on uint8
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 12, 12])
        nodes += [helper.make_node("Conv", ["x", const("w", rng.normal(size=(16, 8, 3, 3)) * 0.2)], ["c"],
                                   pads=[1, 1, 1, 1]),
                  helper.make_node("Relu", ["c"], ["r"]),
                  helper.make_node("MaxPool", ["r"], ["y"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])]
    elif kind == "conv_group":  # grouped, no bias
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 16, 9, 9])
        nodes += [helper.make_node("Conv", ["x", const("w", rng.normal(size=(32, 4, 3, 3)) * 0.2)], ["y"],
                                   pads=[1, 1, 1, 1], group=4)]
    elif kind == "conv1x1_residual":  # relu(conv1x1(x) + x): the residual join
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 32, 10, 10])
        nodes += [helper.make_node("Conv", ["x", const("w", rng.normal(size=(32, 32, 1, 1)) * 0.2),
                                            const("b", rng.normal(size=32) * 0.1)], ["c"]),
                  helper.make_node("Add", ["c", "x"], ["s"]),
                  helper.make_node("Relu", ["s"], ["y"])]
    elif kind in ("conv_tiled", "conv_tiled_s2", "conv_tiled_dilated"):
        # K x HW past the GEMM's 256 KiB chunk (Note [tiled int8 im2col]): chunks end mid-row
        shape, attrs = {"conv_tiled": ([1, 64, 23, 37], dict(pads=[1, 1, 1, 1])),
                        "conv_tiled_s2": ([1, 64, 45, 47], dict(pads=[1, 0, 1, 2], strides=[2, 2])),
                        "conv_tiled_dilated": ([1, 64, 25, 29], dict(pads=[2, 2, 2, 2], dilations=[2, 2]))}[kind]
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)
        nodes += [helper.make_node("Conv", ["x", const("w", rng.normal(size=(40, 64, 3, 3)) * 0.05),
                                            const("b", rng.normal(size=40) * 0.1)], ["c"], **attrs),
                  helper.make_node("Relu", ["c"], ["y"])]
    elif kind in ("conv_depthwise", "conv_depthwise_s1"):  # one filter per channel: Note [int8 depthwise]
        attrs = dict(pads=[2, 1, 2, 3], strides=[2, 2]) if kind == "conv_depthwise" else dict(pads=[2, 2, 2, 2], dilations=[1, 2])
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 24, 17, 19])
        nodes += [helper.make_node("Conv", ["x", const("w", rng.normal(size=(24, 1, 5, 5)) * 0.3),
                                            const("b", rng.normal(size=24) * 0.1)], ["c"], group=24, **attrs),
                  helper.make_node("Relu", ["c"], ["y"])]
    elif kind == "gemm_row":  # batch 1: one column for the GEMM (Note [int8 gemv])
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 300])
        nodes += [helper.make_node("Gemm", ["x", const("w", rng.normal(size=(43, 300)) * 0.1),
                                            const("b", rng.normal(size=43) * 0.1)], ["y"], transB=1)]
    elif kind == "gemm":
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [5, 300])
        nodes += [helper.make_node("Gemm", ["x", const("w", rng.normal(size=(40, 300)) * 0.1),
                                            const("b", rng.normal(size=40) * 0.1)], ["y"], transB=1)]
    elif kind == "matmul":
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 7, 64])
        nodes += [helper.make_node("MatMul", ["x", const("w", rng.normal(size=(64, 48)) * 0.1)], ["y"])]
    if symbolic_batch:
        x.type.tensor_type.shape.dim[0].dim_param = "N"
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    graph = helper.make_graph(nodes, kind, [x], [y], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def input_of(model, seed, batch=None):
    dims = [d.dim_value or 1 for d in model.graph.input[0].type.tensor_type.shape.dim]
    if batch is not None:
        dims[0] = batch
    return np.random.default_rng(seed).normal(size=dims).astype(np.float32)


def quantized(kind, tmp_path, per_channel, activation, weight, symbolic_batch=False):
    return quantize_static_qdq(float_model(kind, symbolic_batch), tmp_path, kind, per_channel, activation, weight)


def quantize_static_qdq(model, tmp_path, name, per_channel, activation, weight, batches=8):
    """`model` (input "x") as onnxruntime's quantize_static writes it in QDQ form, calibrated on
    `batches` seeded inputs."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    src, dst = str(tmp_path / f"{name}.onnx"), str(tmp_path / f"{name}_qdq.onnx")
    onnx.save(model, src)

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.batches = iter([{"x": input_of(model, s)} for s in range(batches)])

        def get_next(self):
            return next(self.batches, None)

    types = {"int8": QuantType.QInt8, "uint8": QuantType.QUInt8}
    quantize_static(src, dst, Reader(), quant_format=QuantFormat.QDQ, per_channel=per_channel,
                    activation_type=types[activation], weight_type=types[weight])
    return onnx.load(dst)


def output_step(model):
    """The scale of the DequantizeLinear that makes the graph output: one quantization step."""
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    out = model.graph.output[0].name
    dq = next(n for n in model.graph.node if out in n.output)
    assert dq.op_type == "DequantizeLinear"
    return float(inits[dq.input[1]])


CASES = [("conv", True, "uint8", "int8"), ("conv", False, "int8", "int8"), ("conv", True, "uint8", "uint8"), ("conv_s2_wide", True, "int8", "int8"),
         ("conv_maxpool", True, "uint8", "int8"), ("conv_maxpool", False, "int8", "int8"),
         ("conv_group", True, "int8", "int8"), ("conv1x1_residual", False, "uint8", "int8"),
         ("conv1x1_residual", True, "int8", "int8"), ("gemm", True, "uint8", "int8"),
         ("gemm", False, "uint8", "uint8"), ("matmul", True, "int8", "int8"), ("matmul", False, "uint8", "int8"),
         ("conv_tiled", True, "uint8", "int8"), ("conv_tiled", False, "int8", "int8"),
         ("conv_tiled_s2", True, "uint8", "int8"), ("conv_tiled_dilated", True, "uint8", "uint8"),
         ("conv_depthwise", True, "uint8", "int8"), ("conv_depthwise", False, "int8", "int8"),
         ("conv_depthwise_s1", True, "uint8", "uint8"), ("gemm_row", True, "uint8", "int8"),
         ("gemm_row", False, "int8", "int8"), ("conv_7x7_out", True, "uint8", "int8"),
         ("conv_s2_phase", True, "uint8", "int8"), ("conv_s2_phase", False, "int8", "int8"),
         ("conv1x1_s2", True, "uint8", "int8"), ("conv7x7_s2", True, "uint8", "int8")]


@pytest.mark.parametrize("kind, per_channel, activation, weight", CASES)
def test_fused_int8_matches_float_between_qdq_and_onnxruntime(kind, per_channel, activation, weight, tmp_path):

    model = quantized(kind, tmp_path, per_channel, activation, weight)
    x = input_of(model, 99)
    step = output_step(model)
    # ONNX's layout, where the algorithms asserted below run (tests/test_int8_nhwc_conv.py covers
    # the channels-last conv, Note [int8 nhwc conv])
    fused = dnnx.load(model, passes={"channels_last": False})
    plan = str(fused.plan())
    op = {"conv": "Int8Conv", "conv_depthwise": "Int8Conv", "conv_depthwise_s1": "Int8Conv", "conv_tiled": "Int8Conv", "conv_tiled_s2": "Int8Conv", "conv_tiled_dilated": "Int8Conv",
          "conv_s2_wide": "Int8Conv", "conv_7x7_out": "Int8Conv", "conv_s2_phase": "Int8Conv", "conv1x1_s2": "Int8Conv",
          "conv7x7_s2": "Int8Conv", "conv_maxpool": "Int8Conv", "conv_group": "Int8Conv", "conv1x1_residual": "Int8Conv",
          "gemm": "Int8Gemm", "gemm_row": "Int8Gemm", "matmul": "Int8MatMul"}[kind]
    assert op in plan and "int8, int32 accumulation" in plan, plan
    assert "Conv " not in plan.replace("Int8Conv", "") and "Gemm " not in plan.replace("Int8Gemm", "")
    if kind == "conv1x1_residual":
        assert "residual add" in plan and " Add " not in plan, plan
    if kind.startswith("conv_depthwise"):
        assert "depthwise" in plan, plan
    if kind in ("conv_s2_phase", "conv1x1_s2", "conv7x7_s2") and has_vbmi():
        assert "phase plane" in plan, plan
    if kind == "conv_maxpool":  # DequantizeLinear -> MaxPool -> QuantizeLinear => MaxPool on the 8-bit values
        ops = [row["op"] for row in fused.plan()]
        assert ops == ["QuantizeLinear", "Int8Conv", "MaxPool", "DequantizeLinear"], ops
    got = fused.run_dict({"x": x})["y"]
    unfused = dnnx.load(model, passes={"fuse_qdq_int8": False})
    assert "Int8" not in str(unfused.plan())
    simulated = unfused.run_dict({"x": x})["y"]
    want = qdq_reference_session(model.SerializeToString()).run(None, {"x": x})[0]
    assert got.shape == want.shape
    for other in (simulated, want):
        steps = np.abs(got.astype(np.float64) - other) / step
        assert steps.max() <= 1.0 + 1e-3, f"{steps.max():.3f} steps apart"
        assert (steps > 0.5).mean() < 0.05  # one step only at the few ties the float path rounds otherwise


@pytest.mark.parametrize("kind", ["conv", "conv1x1_residual", "matmul", "conv_tiled", "conv_tiled_s2", "conv_depthwise",
                                  "gemm_row", "conv_7x7_out", "conv_s2_phase", "conv1x1_s2", "conv7x7_s2"])
def test_avx2_switch_gives_the_same_outputs(kind, tmp_path):
    if not has_vnni():
        pytest.skip("no AVX-512 VNNI here: the default path already is AVX2 or portable")
    model = quantized(kind, tmp_path, True, "uint8", "int8")
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    x = input_of(model, 3)
    np.save(tmp_path / "x.npy", x)
    script = ("import sys, numpy as np, dnnx\n"
              "m = dnnx.load(sys.argv[1]); x = np.load(sys.argv[2])\n"
              "np.save(sys.argv[3], m.run_dict({\"x\": x})[\"y\"]); print(m.plan())\n")
    outs = {}
    runs = [("vnni", {"DNNX_INT8_VNNI": "1"}, "(avx512-vnni)"), ("avx2", {"DNNX_INT8_AVX2": "1"}, "(avx2)"),
            ("portable", {"DNNX_INT8_PORTABLE": "1"}, "(portable)")]
    if has_amx():  # the default where the CPU has it (Note [int8 amx]); a depthwise conv has no GEMM
        runs.append(("amx", {}, "(avx512-vnni)" if kind == "conv_depthwise" else "(amx)"))
    if has_avx_vnni():
        runs.append(("avx-vnni", {"DNNX_INT8_AVXVNNI": "1"}, "(avx-vnni)"))
    for name, env_set, shown in runs:
        env = {k: v for k, v in os.environ.items() if not k.startswith("DNNX_INT8_")}
        env.update(env_set)
        out = tmp_path / f"y_{name}.npy"
        r = subprocess.run([sys.executable, "-c", script, str(path), str(tmp_path / "x.npy"), str(out)],
                           env=env, capture_output=True, text=True, check=True)
        assert shown in r.stdout, r.stdout
        outs[name] = np.load(out)
    np.testing.assert_array_equal(outs["vnni"], outs["avx2"])
    for name in outs:
        np.testing.assert_array_equal(outs["vnni"], outs[name], err_msg=name)


def test_pattern_that_does_not_match_stays_float(tmp_path):
    """A Gemm with alpha != 1 keeps its QDQ pairs (never refused): it runs as before."""
    model = quantized("gemm", tmp_path, False, "uint8", "int8")
    for n in model.graph.node:
        if n.op_type == "Gemm":
            n.attribute.append(helper.make_attribute("alpha", 0.5))
    plan = str(dnnx.load(model).plan())
    assert "Int8Gemm" not in plan and "Gemm" in plan


@pytest.mark.parametrize("kind", ["conv", "conv1x1_residual", "gemm", "matmul"])
def test_symbolic_batch_and_empty_batch(kind, tmp_path):
    """The fused layers with a symbolic batch: batch 3 and an empty batch against onnxruntime."""

    model = quantized(kind, tmp_path, True, "uint8", "int8", symbolic_batch=True)
    m = dnnx.load(model)
    sess = qdq_reference_session(model.SerializeToString())
    for batch in (3, 0):
        x = input_of(model, 5, batch)
        assert "Int8" in str(m.plan(inputs={"x": x}))
        got = m.run_dict({"x": x})["y"]
        want = sess.run(None, {"x": x})[0]
        assert got.shape == want.shape and got.dtype == want.dtype
        if batch:
            assert np.abs(got - want).max() <= output_step(model) * (1 + 1e-3)


@pytest.mark.parametrize("kind", ["conv_tiled", "conv_tiled_s2", "conv1x1_residual", "gemm", "conv_depthwise", "conv_s2_phase",
                                  "conv7x7_s2", "conv_7x7_out"])
def test_thread_counts_give_the_same_outputs(kind, tmp_path):
    """The workers split the GEMM's panels (and the tiled im2col's chunks within them), or W's row
    tiles where the panels are few (Note [int8 row split]: gemm, conv_7x7_out): exact int32 sums and
    one epilogue per element, so 1 and 2 threads give the same bytes."""
    from dnnx.threads import get_num_threads, set_num_threads

    model = quantized(kind, tmp_path, True, "uint8", "int8")
    x = input_of(model, 11)
    before = get_num_threads()
    outs = []
    try:
        for threads in (1, 2):
            set_num_threads(threads)
            outs.append(dnnx.load(model).run_dict({"x": x})["y"])
    finally:
        set_num_threads(before)
    np.testing.assert_array_equal(outs[0], outs[1])


@pytest.mark.parametrize("bounds", [(0.0, 6.0), (-0.25, 0.2), (None, 0.1), (-0.1, None), "identity"])
def test_clip_between_layer_and_quantize_joins_the_layer(bounds):
    """Note [int8 clip] (engine/runtime/passes/fuse_qdq_int8.cc): a Clip with constant bounds
    between the Conv and Y's QuantizeLinear (a QDQ file written by hand: onnxruntime's tool drops
    the Clips it can) becomes the layer's integer bounds: no float Conv or Clip left, and the
    outputs within one step of the float-between-QDQ run and of onnxruntime. "identity": an
    Identity there instead, as onnxruntime's tool leaves where it dropped MobileNetV2's ReLU6s."""

    rng = np.random.default_rng(11)
    sx, sy = np.float32(0.02), np.float32(0.004)
    w = rng.normal(size=(40, 32, 3, 3)) * 0.05
    ws = (np.abs(w).reshape(40, -1).max(1) / 127).astype(np.float32)
    wq = np.clip(np.round(w / ws[:, None, None, None]), -127, 127).astype(np.int8)
    inits = [numpy_helper.from_array(np.array(sx), "sx"), numpy_helper.from_array(np.array(128, np.uint8), "zx"),
             numpy_helper.from_array(wq, "wq"), numpy_helper.from_array(ws, "ws"),
             numpy_helper.from_array(np.zeros(40, np.int8), "wz"),
             numpy_helper.from_array(np.array(sy), "sy"), numpy_helper.from_array(np.array(100, np.uint8), "zy")]
    clip_inputs = ["c"]
    for name, v in zip(("lo", "hi"), (None, None) if bounds == "identity" else bounds):
        if v is None:
            clip_inputs.append("")
        else:
            inits.append(numpy_helper.from_array(np.array(v, np.float32), name))
            clip_inputs.append(name)
    nodes = [helper.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "sx", "zx"], ["xd"]),
             helper.make_node("DequantizeLinear", ["wq", "ws", "wz"], ["wd"], axis=0),
             helper.make_node("Conv", ["xd", "wd"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Identity", ["c"], ["k"]) if bounds == "identity" else helper.make_node("Clip", clip_inputs, ["k"]),
             helper.make_node("QuantizeLinear", ["k", "sy", "zy"], ["yq"]),
             helper.make_node("DequantizeLinear", ["yq", "sy", "zy"], ["y"])]
    graph = helper.make_graph(nodes, "clip", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 32, 9, 11])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    x = rng.normal(size=(1, 32, 9, 11)).astype(np.float32)
    for layout in (False, True):  # ONNX's layout, and the channels-last conv (Note [int8 nhwc conv])
        fused = dnnx.load(model, passes={"channels_last": layout})
        plan = str(fused.plan())
        assert " Clip " not in plan and " Identity " not in plan and "Conv " not in plan.replace("Int8Conv", ""), plan
        assert ("+ clip" in plan) == (bounds != "identity"), plan
        got = fused.run_dict({"x": x})["y"]
        simulated = dnnx.load(model, passes={"fuse_qdq_int8": False}).run_dict({"x": x})["y"]
        want = qdq_reference_session(model.SerializeToString()).run(None, {"x": x})[0]
        for other in (simulated, want):
            steps = np.abs(got.astype(np.float64) - other) / sy
            assert steps.max() <= 1.0 + 1e-3, f"{steps.max():.3f} steps apart"
        if bounds != "identity":
            lo = -np.inf if bounds[0] is None else bounds[0]
            hi = np.inf if bounds[1] is None else bounds[1]
            assert got.min() >= lo - sy / 2 and got.max() <= hi + sy / 2


@pytest.mark.parametrize("opset", [10, 11, 13])
def test_max_pool_of_an_older_opset_runs_on_8_bits(opset, tmp_path):
    # Note [8-bit max pool opset]: onnxruntime's quantizer keeps an older float model's opset (11
    # for the model zoo's mnist-8), and DequantizeLinear -> MaxPool -> QuantizeLinear still becomes
    # the 8-bit MaxPool, which ONNX allows from opset 12 on: dnnx refused such files.

    model = quantize_static_qdq(float_model("conv_maxpool"), tmp_path, "pool", False, "uint8", "int8")
    assert [n.op_type for n in model.graph.node][-3:] == ["MaxPool", "QuantizeLinear", "DequantizeLinear"]
    del model.opset_import[:]  # per-tensor QDQ around Conv, Relu and MaxPool: valid ops from opset 10
    model.opset_import.append(helper.make_opsetid("", opset))
    x = input_of(model, 7)
    m = dnnx.load(model, passes={"channels_last": False})
    assert [row["op"] for row in m.plan()] == ["QuantizeLinear", "Int8Conv", "MaxPool", "DequantizeLinear"]
    want = qdq_reference_session(model.SerializeToString()).run(None, {"x": x})[0]
    steps = np.abs(m.run(x).astype(np.float64) - want) / output_step(model)
    assert steps.max() <= 1.0 + 1e-3
