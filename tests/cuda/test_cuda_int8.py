"""The fused int8 layers on CUDA (Int8Conv / Int8Gemm / Int8MatMul: engine/backends/cuda/quant/,
Note [int8 on tensor cores] in int8_kernels.h) against the CPU backend's kernels, bit for bit:
both take the exact int32 sums (the CPU's modulo 2^32, the GPU's from int8 tensor cores after the
zero point is taken out, which is exact) and requantize them by the same float32 operations in the
same order, without FMA (the per-channel factors made on the host by the same expressions). So the
8-bit outputs are compared with np.array_equal, and the float outputs too. Layers the CUDA kernels
cannot take stay on the host (Note [host fallback]), plan() saying why; the results are the same.
Where the graph holds float layers besides (the zoo's files, precision="int8"), CUDA's fp32 and
the CPU's differ in float rounding, so those compare within onnxruntime's tolerance or by
predictions."""
import warnings

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import dnnx
from test_qdq_int8 import CASES, input_of, quantized

pytestmark = pytest.mark.usefixtures("fixed_layout")  # the pass's own forms (conftest.py)

TYPES = {"int8": (np.int8, TensorProto.INT8, -128, 127), "uint8": (np.uint8, TensorProto.UINT8, 0, 255)}


def load_quiet(model, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dnnx.HostFallbackWarning)
        return dnnx.load(model, **kwargs)


def cuda_and_cpu(model, feeds, **load_kwargs):
    """(CUDA's outputs, the CPU's, CUDA's plan rows)."""
    gpu = load_quiet(model, device="cuda", **load_kwargs)
    cpu = dnnx.load(model)
    return gpu.run_dict(feeds), cpu.run_dict(feeds), list(gpu.plan())


def layer_row(rows, op):
    """The one row of `op` or its channels-last form (Note [int8 nhwc on cuda]: "Int8Conv@NHWC")."""
    matches = [r for r in rows if r["op"] in (op, op + "@NHWC")]
    assert len(matches) == 1, [(r["op"], r["algorithm"]) for r in rows]
    return matches[0]


def assert_on_device(row):
    assert not row["algorithm"].startswith("on the host"), row
    assert "int8, int32 accumulation" in row["math"], row
    assert "cuDNN int8 conv" in row["algorithm"] or "cublasLt" in row["algorithm"], row


# ---- one QDQ layer written here: 8-bit graph input and output, so the bytes compare ----

def qdq_layer(op, xs, ws, attrs=None, x_type="uint8", w_type="int8", per_channel=True, bias="int32", relu=False,
              y_type="uint8", w_zp=0, residual=False, seed=0, w_range=60):
    """x_q (graph input, x_type) -> DequantizeLinear -> op(DequantizeLinear(w_q), bias) [-> Add
    DequantizeLinear(z_q)] [-> Relu] -> QuantizeLinear (y_type) -> y_q (graph output); y_type None:
    the layer's float output is the graph output. bias "int32" (DequantizeLinear of int32 in the
    sums' scale), "float" (a float32 constant) or None. Returns (model, feeds)."""
    rng = np.random.default_rng(seed)
    attrs = attrs or {}
    xnp, xpt, xlo, xhi = TYPES[x_type]
    wnp, wpt, wlo, whi = TYPES[w_type]
    axis = {"Conv": 0, "Gemm": 0 if attrs.get("transB") else 1, "MatMul": 1}[op]
    channels = ws[axis]
    shape = [channels] if per_channel else []
    w_scale = np.asarray(rng.uniform(0.002, 0.02, size=shape), np.float32)
    zp = np.full(shape, w_zp, wnp)
    wq = np.clip(rng.integers(-w_range, w_range + 1, size=ws) + w_zp, wlo, whi).astype(wnp)
    x_scale, x_zp = np.float32(0.05), np.array(rng.integers(xlo + 20, xhi - 20), xnp)
    inits = [numpy_helper.from_array(np.array(x_scale), "x_scale"), numpy_helper.from_array(x_zp, "x_zp"),
             numpy_helper.from_array(wq, "w_q"), numpy_helper.from_array(w_scale, "w_scale"),
             numpy_helper.from_array(zp, "w_zp")]
    nodes = [helper.make_node("DequantizeLinear", ["x_q", "x_scale", "x_zp"], ["x_dq"]),
             helper.make_node("DequantizeLinear", ["w_q", "w_scale", "w_zp"], ["w_dq"], axis=axis)]
    inputs = ["x_dq", "w_dq"]
    if bias == "int32":
        b_scale = (x_scale * w_scale).astype(np.float32) * np.ones(channels, np.float32)
        inits += [numpy_helper.from_array(rng.integers(-3000, 3000, size=channels).astype(np.int32), "b_q"),
                  numpy_helper.from_array(b_scale, "b_scale")]
        nodes.append(helper.make_node("DequantizeLinear", ["b_q", "b_scale"], ["b_dq"], axis=0))
        inputs.append("b_dq")
    elif bias == "float":
        inits.append(numpy_helper.from_array(rng.normal(size=channels).astype(np.float32), "b"))
        inputs.append("b")
    nodes.append(helper.make_node(op, inputs, ["c"], name="layer", **attrs))
    value = "c"
    ynp, ypt = (TYPES[y_type][0], TYPES[y_type][1]) if y_type else (np.float32, TensorProto.FLOAT)
    y_scale, y_zp = np.float32(rng.uniform(0.05, 0.3)), np.array(10 if y_type == "uint8" else -5, ynp)
    graph_inputs = [helper.make_tensor_value_info("x_q", xpt, list(xs))]
    feeds = {"x_q": rng.integers(xlo, xhi + 1, size=xs).astype(xnp)}
    if residual:  # Conv -> Q(r) -> DQ -> Add(DQ(z_q)): quantize_static's residual join
        inits += [numpy_helper.from_array(np.float32(0.1), "r_scale"), numpy_helper.from_array(np.array(3, ynp), "r_zp"),
                  numpy_helper.from_array(np.float32(0.07), "z_scale"), numpy_helper.from_array(np.array(-7, np.int8), "z_zp")]
        nodes += [helper.make_node("QuantizeLinear", ["c", "r_scale", "r_zp"], ["r_q"]),
                  helper.make_node("DequantizeLinear", ["r_q", "r_scale", "r_zp"], ["r_dq"]),
                  helper.make_node("DequantizeLinear", ["z_q", "z_scale", "z_zp"], ["z_dq"]),
                  helper.make_node("Add", ["r_dq", "z_dq"], ["s"])]
        value = "s"
        out_shape = onnx_shape_of(op, xs, ws, attrs)
        graph_inputs.append(helper.make_tensor_value_info("z_q", TensorProto.INT8, out_shape))
        feeds["z_q"] = rng.integers(-128, 128, size=out_shape).astype(np.int8)
    if relu:
        nodes.append(helper.make_node("Relu", [value], ["relu"]))
        value = "relu"
    inits += [numpy_helper.from_array(np.array(y_scale), "y_scale"),
              numpy_helper.from_array(y_zp if y_type else np.array(10, np.uint8), "y_zp")]
    outputs = [helper.make_tensor_value_info("y", ypt, None)]
    if y_type:
        nodes.append(helper.make_node("QuantizeLinear", [value, "y_scale", "y_zp"], ["y"]))
    else:  # the float output, and a QuantizeLinear of it besides (a QDQ graph has one: the pass looks for it)
        nodes += [helper.make_node("Identity", [value], ["y"]),
                  helper.make_node("QuantizeLinear", ["y", "y_scale", "y_zp"], ["y_q"])]
        outputs.append(helper.make_tensor_value_info("y_q", TensorProto.UINT8, None))
    graph = helper.make_graph(nodes, "layer", graph_inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    return model, feeds


def onnx_shape_of(op, xs, ws, attrs):
    if op != "Conv":
        return list(xs[:-1]) + [ws[0] if attrs.get("transB") else ws[1]]
    pads = attrs.get("pads", [0] * 4)
    strides = attrs.get("strides", [1, 1])
    dil = attrs.get("dilations", [1, 1])
    out = [xs[0], ws[0]]
    for i in range(2):
        out.append((xs[2 + i] + pads[i] + pads[2 + i] - dil[i] * (ws[2 + i] - 1) - 1) // strides[i] + 1)
    return out


CONV = (1, 8, 13, 11), (20, 8, 3, 3)
LAYERS = {
    "conv_pad_stride": ("Conv", *CONV, dict(pads=[1, 2, 1, 0], strides=[2, 1]), {}),
    "conv_dilated_s8": ("Conv", *CONV, dict(pads=[2, 2, 2, 2], dilations=[2, 2]), dict(x_type="int8")),
    "conv_odd_channels": ("Conv", (2, 3, 9, 9), (5, 3, 3, 3), dict(pads=[1, 1, 1, 1]), dict(bias="float", relu=True)),
    "conv_per_tensor_relu": ("Conv", *CONV, dict(pads=[1, 1, 1, 1]), dict(per_channel=False, relu=True, y_type="int8")),
    "conv_no_bias_int8_y": ("Conv", *CONV, {}, dict(bias=None, y_type="int8", x_type="int8")),
    "conv_group": ("Conv", (2, 16, 9, 9), (32, 4, 3, 3), dict(pads=[1, 1, 1, 1], group=4), {}),
    "conv_1d": ("Conv", (2, 8, 17), (12, 8, 3), dict(pads=[1, 1], strides=[2]), {}),
    "conv_residual": ("Conv", (1, 16, 7, 7), (16, 16, 1, 1), {}, dict(residual=True, relu=True)),
    "conv_residual_s8": ("Conv", (1, 16, 7, 7), (16, 16, 3, 3), dict(pads=[1, 1, 1, 1]),
                         dict(residual=True, y_type="int8", x_type="int8")),
    "conv_float_out": ("Conv", *CONV, dict(pads=[1, 1, 1, 1]), dict(y_type=None, relu=True)),
    "conv_uint8_w_zp128": ("Conv", *CONV, dict(pads=[1, 1, 1, 1]), dict(w_type="uint8", w_zp=128)),
    "gemm_transb": ("Gemm", (5, 300), (43, 300), dict(transB=1), {}),
    "gemm_odd_k": ("Gemm", (6, 301), (301, 7), {}, dict(bias="float", x_type="int8", relu=True)),
    "gemm_float_out": ("Gemm", (4, 64), (64, 40), {}, dict(y_type=None, per_channel=False)),
    "matmul_batched": ("MatMul", (2, 3, 5, 64), (64, 48), {}, dict(bias=None)),
    "matmul_s8_odd": ("MatMul", (7, 30), (30, 9), {}, dict(bias=None, x_type="int8", y_type="int8")),
    "matmul_float_out": ("MatMul", (2, 7, 64), (64, 48), {}, dict(bias=None, y_type=None)),
}


# cuDNN's int8 engines may refuse grouped or dilated convs (check_support): the host runs them then
MAY_STAY_ON_HOST = {"conv_group", "conv_dilated_s8"}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_int8_layer_on_tensor_cores_matches_the_cpu_bit_for_bit(name):
    op, xs, ws, attrs, options = LAYERS[name]
    model, feeds = qdq_layer(op, xs, ws, attrs, **options)
    got, want, rows = cuda_and_cpu(model, feeds)
    row = layer_row(rows, "Int8" + op)
    if name in MAY_STAY_ON_HOST and row["algorithm"].startswith("on the host"):
        assert "cuDNN" in row["algorithm"], row  # check_support's refusal, named
    else:
        assert_on_device(row)
    assert got["y"].dtype == want["y"].dtype and got["y"].shape == want["y"].shape
    assert np.array_equal(got["y"], want["y"]), f"{np.count_nonzero(got['y'] != want['y'])} elements differ"


# The tiled layout kernels' edges (Note [int8 tiles] in int8_tiles.cu): channel counts that are
# not multiples of 4 or of a tile (3, 5, 9, 12, 20, 36, 100, 257), planes that are not multiples of 4
# (odd widths, 7x7, 1x1, 1x2, 1-D rows), odd and asymmetric pads 0-3 (the border's zero point, X's
# rows read unaligned), strides 1-2, batches 1, 2, 3 and 67 (tiles across images), int8 and uint8 X
# and Y, the residual's z and the float output. Tiny shapes: the whole set runs in seconds.
TILE_EDGES = {
    "c3_m5_asym_pads": ((1, 3, 9, 9), (5, 3, 3, 3), dict(pads=[1, 0, 2, 3]), {}),
    "c5_m3_stride2_s8": ((3, 5, 7, 11), (3, 5, 3, 3), dict(pads=[0, 3, 2, 1], strides=[2, 2]),
                         dict(x_type="int8", y_type="int8")),
    "c36_1x1_residual_s8": ((3, 36, 14, 14), (36, 36, 1, 1), {}, dict(residual=True, x_type="int8", y_type="int8")),
    "c100_pad1_float_out": ((2, 100, 5, 6), (100, 100, 3, 3), dict(pads=[1, 1, 1, 1]), dict(y_type=None, relu=True)),
    "c257_1x1": ((1, 257, 2, 3), (257, 257, 1, 1), {}, dict(w_range=20)),
    "1d_pads_stride2": ((3, 7, 23), (9, 7, 3), dict(pads=[2, 1], strides=[2]), dict(x_type="int8")),
    "1d_long_row": ((1, 4, 131), (4, 4, 1), {}, {}),
    "stem_pad3_stride2": ((2, 3, 16, 16), (8, 3, 7, 7), dict(pads=[3, 3, 3, 2], strides=[2, 2]), {}),
    "batch67_plane25_residual": ((67, 8, 5, 5), (8, 8, 1, 1), {}, dict(residual=True, relu=True)),
    "plane1_float_out": ((5, 64, 1, 1), (64, 64, 1, 1), {}, dict(y_type=None)),
    "c64_aligned_rows": ((2, 64, 8, 8), (64, 64, 1, 1), {}, dict(x_type="int8")),
    "c64_pad1_unaligned_rows": ((2, 64, 8, 8), (64, 64, 3, 3), dict(pads=[1, 1, 1, 1]), {}),
    "c1_pads_2031": ((1, 1, 6, 10), (4, 1, 3, 3), dict(pads=[2, 0, 1, 3]), dict(y_type="int8")),
    "c12_m20_plane2": ((3, 12, 1, 2), (20, 12, 1, 1), {}, {}),
    "c20_m9_plane15_residual": ((2, 20, 3, 5), (9, 20, 1, 3), dict(pads=[0, 1, 0, 1]), dict(residual=True)),
    "m16_plane49_float_out": ((2, 16, 7, 7), (16, 16, 3, 3), dict(pads=[1, 1, 1, 1]), dict(y_type=None, x_type="int8")),
    "c16_14x14_stride2": ((1, 16, 14, 14), (16, 16, 3, 3), dict(pads=[1, 1, 1, 1], strides=[2, 2]), {}),
}


# layout "nchw": the default, the NCHW tiles; "nhwc": DNNX_PROBE_INT8_NHWC=1, where convs whose X has a
# multiple of 4 channels run channels-last (Note [int8 nhwc on cuda]: the repad pass and the row-major
# epilogue), the channels_last pass off for "nchw" so that the tiles run wherever they would
@pytest.mark.parametrize("layout", ["nhwc", "nchw"])
@pytest.mark.parametrize("name", sorted(TILE_EDGES))
def test_int8_conv_tile_edges_match_the_cpu_bit_for_bit(name, layout, monkeypatch):
    if layout == "nhwc":
        monkeypatch.setenv("DNNX_PROBE_INT8_NHWC", "1")
    xs, ws, attrs, options = TILE_EDGES[name]
    model, feeds = qdq_layer("Conv", xs, ws, attrs, seed=len(name), **options)
    got, want, rows = cuda_and_cpu(model, feeds, **({"passes": {"channels_last": False}} if layout == "nchw" else {}))
    row = layer_row(rows, "Int8Conv")
    if layout == "nchw":
        assert row["op"] == "Int8Conv", row
    if row["algorithm"].startswith("on the host"):  # check_support's refusal: the kernels did not run
        pytest.skip(row["algorithm"])
    assert_on_device(row)
    assert got["y"].dtype == want["y"].dtype and got["y"].shape == want["y"].shape
    assert np.array_equal(got["y"], want["y"]), f"{np.count_nonzero(got['y'] != want['y'])} elements differ"


def test_int32_accumulation_is_exact_at_k_4096_and_more():
    """K = 4100 (not a multiple of 4: padded) against an integer reference: float output, |sums|
    below 2^24, so float32(sum) is exact and any error in a sum shows."""
    k, m, rows = 4100, 36, 9
    model, feeds = qdq_layer("Gemm", (rows, k), (m, k), dict(transB=1), bias=None, y_type=None, w_range=15,
                             per_channel=True, seed=3)
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    sums = (feeds["x_q"].astype(np.int64) - int(inits["x_zp"])) @ inits["w_q"].astype(np.int64).T
    assert np.abs(sums).max() < 2**24
    mult = np.float32(inits["x_scale"]) * inits["w_scale"].astype(np.float32)
    want = sums.astype(np.float32) * mult + np.float32(0)
    gpu = load_quiet(model, device="cuda")
    assert_on_device(layer_row(list(gpu.plan()), "Int8Gemm"))
    got = gpu.run_dict(feeds)["y"]
    assert np.array_equal(got, want.astype(np.float32))
    assert np.array_equal(got, dnnx.load(model).run_dict(feeds)["y"])


@pytest.mark.parametrize("case", CASES)
def test_quantize_static_files_match_the_cpu_bit_for_bit(case, tmp_path):
    kind, per_channel, activation, weight = case
    model = quantized(kind, tmp_path, per_channel, activation, weight)
    feeds = {"x": input_of(model, 99)}
    got, want, rows = cuda_and_cpu(model, feeds)
    ops = [r for r in rows if r["op"].startswith("Int8")]
    assert ops, rows
    for row in ops:
        if kind.startswith("conv_depthwise"):  # one channel per group: the host's direct kernel
            assert row["algorithm"].startswith("on the host") and "grouped int8 conv" in row["algorithm"], row
        elif kind in ("conv_group", "conv_tiled_dilated") and row["algorithm"].startswith("on the host"):
            assert "cuDNN" in row["algorithm"], row
        elif weight == "uint8" and row["algorithm"].startswith("on the host"):
            # uint8 weights whose zero point is far from 128 leave int8 after it (quantize_static's
            # asymmetric uint8 weights): the host's kernel, with the reason
            assert "leave int8's range" in row["algorithm"], row
        else:
            assert_on_device(row)
    assert np.array_equal(got["y"], want["y"]), np.abs(got["y"] - want["y"]).max()


def test_batchnorm_and_float_outputs_of_dnnx_quantize_match_the_cpu(tmp_path):
    from test_qdq_int8_float import bn_model

    rng = np.random.default_rng(0)
    path = tmp_path / "bn_int8.onnx"
    dnnx.quantize(bn_model(), path, calibration=rng.standard_normal((8, 8, 12, 12)).astype(np.float32),
                  int8_tolerance=10.0, show_progress=False)
    x = rng.standard_normal((3, 8, 12, 12)).astype(np.float32)
    got, want, rows = cuda_and_cpu(path, {"x": x})
    convs = [r for r in rows if r["op"].startswith("Int8Conv")]
    assert len(convs) == 5 and all("batchnorm" in r["algorithm"] for r in convs), rows
    for row in convs:
        assert_on_device(row)
    # the float layers between (Add, GlobalAveragePool, the fp32 Gemm) round as CUDA's fp32 does
    np.testing.assert_allclose(got["y"], want["y"], rtol=1e-4, atol=1e-4 * np.abs(want["y"]).max())


@pytest.mark.parametrize("op, xs, ws, attrs, options, why", [
    ("Conv", (1, 8, 9, 9), (8, 8, 3, 3), {}, dict(w_type="uint8", w_zp=0, w_range=200), "leave int8's range"),
    ("Conv", (1, 8, 9, 9), (8, 1, 3, 3), dict(group=8, pads=[1, 1, 1, 1]), {}, "grouped int8 conv"),
    ("Conv", (1, 4, 5, 5, 5), (8, 4, 3, 3, 3), {}, {}, "1-D and 2-D"),
])
def test_what_the_cuda_kernels_cannot_take_runs_on_the_host_with_the_reason(op, xs, ws, attrs, options, why):
    model, feeds = qdq_layer(op, xs, ws, attrs, **options)
    with pytest.warns(dnnx.HostFallbackWarning, match="layer"):
        gpu = dnnx.load(model, device="cuda")
    row = layer_row(list(gpu.plan()), "Int8" + op)
    assert row["algorithm"].startswith("on the host") and why in row["algorithm"], row
    assert np.array_equal(gpu.run_dict(feeds)["y"], dnnx.load(model).run_dict(feeds)["y"])


@pytest.mark.parametrize("name, batch", [("q_qdq_regnety_002", 1), ("q_qdq_regnety_002", 2),
                                         ("q_qop_efficientnet_b0", 1), ("q_dyn_bert", 1)])
def test_quantized_zoo_model_on_cuda_matches_onnxruntime(name, batch):
    from test_quant_zoo import assert_within_one_step, ort_first_output
    from zoo_check import zoo2_inputs, zoo2_model

    model = zoo2_model(name)
    feeds = zoo2_inputs(name, model, batch)
    first, want = ort_first_output(model, feeds)
    gpu = load_quiet(model, device="cuda")
    if name.startswith("q_qdq"):
        int8 = [r for r in gpu.plan() if r["op"].startswith("Int8")]
        assert int8 and sum(not r["algorithm"].startswith("on the host") for r in int8) >= len(int8) // 2, int8
    assert_within_one_step(name, model, gpu.run_dict(feeds)[first], want)


def test_precision_int8_on_cuda_runs_the_lenet_on_tensor_cores():
    rng = np.random.default_rng(1)
    calibration = rng.random((64, 1, 28, 28), dtype=np.float32)
    src = dnnx.examples.build("lenet")
    gpu = load_quiet(src, device="cuda", precision="int8", calibration=calibration)
    cpu = dnnx.load(src, precision="int8", calibration=calibration)
    assert gpu.precision == "int8" and gpu.int8_report is not None
    rows = [r for r in gpu.plan() if r["op"].startswith("Int8")]
    assert rows, list(gpu.plan())
    for row in rows:
        assert_on_device(row)
    pools = [r for r in gpu.plan() if r["op"] == "MaxPool"]  # the 8-bit pools between the layers
    assert pools and all(not r["algorithm"].startswith("on the host") for r in pools), pools
    x = rng.random((32, 1, 28, 28), dtype=np.float32)
    got, want = gpu.run(x), cpu.run(x)
    assert (got.argmax(1) == want.argmax(1)).mean() >= 0.99
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3 * np.abs(want).max())


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
@pytest.mark.parametrize("attrs", [{"kernel_shape": [2, 2], "strides": [2, 2]},
                                   {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
                                   {"kernel_shape": [3, 3], "pads": [0, 0, 2, 2], "ceil_mode": 1, "strides": [2, 2]}])
def test_8bit_max_pool_runs_on_the_device_kernel_with_the_cpus_values(dtype, attrs):
    """The quantized MaxPool fuse_qdq_int8 leaves between int8 layers: the direct kernel, the
    lowest value standing for the padding (a window in the padding alone keeps it, as on the CPU)."""
    npt, pt, lo, hi = TYPES[dtype]
    node = helper.make_node("MaxPool", ["x"], ["y"], **attrs)
    graph = helper.make_graph([node], "pool", [helper.make_tensor_value_info("x", pt, [2, 3, 9, 9])],
                              [helper.make_tensor_value_info("y", pt, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    x = np.random.default_rng(3).integers(lo, hi + 1, (2, 3, 9, 9)).astype(npt)
    got, want, rows = cuda_and_cpu(model, {"x": x})
    assert got["y"].dtype == npt and np.array_equal(got["y"], want["y"])
    row = layer_row(rows, "MaxPool")
    assert row["algorithm"] == "direct kernel", row


# ---- Note [int8 nhwc on cuda]: the int8 convs' regions channels-last at every precision ----

def int8_chain(x_type):
    """A QDQ chain written here (8-bit graph input x [2, 8, 10, 10] and output): a 1x1 conv with Relu,
    a 3x3 conv (pads 1), a 1x1 conv whose output joins the first one's (the residual) with Relu, then
    a 3x3 stride-2 conv with a float output. Every X has a multiple of 4 channels."""
    rng = np.random.default_rng(7)
    xnp, xpt, xlo, xhi = TYPES[x_type]
    nodes, inits = [], []

    def const(name, array):
        inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def dq(name):  # DequantizeLinear of value `name` at its scale and zero point (once per value)
        out = name + "_f"
        if not any(out in n.output for n in nodes):
            nodes.append(helper.make_node("DequantizeLinear", [name, name + "_s", name + "_zp"], [out]))
        return out

    def q(name, value, scale, zp):
        const(name + "_s", np.float32(scale))
        const(name + "_zp", zp)
        nodes.append(helper.make_node("QuantizeLinear", [value, name + "_s", name + "_zp"], [name]))
        return name

    def conv(name, x_f, c, m, k, relu=False, stride=1, add=None):
        w = rng.integers(-60, 61, size=(m, c, k, k)).astype(np.int8)
        const(name + "_w", w)
        const(name + "_w_s", (rng.random(m) * 0.02 + 0.01).astype(np.float32))
        const(name + "_w_zp", np.zeros(m, np.int8))
        nodes.append(helper.make_node("DequantizeLinear", [name + "_w", name + "_w_s", name + "_w_zp"], [name + "_wf"],
                                      axis=0))
        nodes.append(helper.make_node("Conv", [x_f, name + "_wf"], [name + "_y"], pads=[k // 2] * 4,
                                      strides=[stride, stride]))
        y = name + "_y"
        if add is not None:
            nodes.append(helper.make_node("Add", [y, add], [name + "_sum"]))
            y = name + "_sum"
        if relu:
            nodes.append(helper.make_node("Relu", [y], [name + "_r"]))
            y = name + "_r"
        return y

    zp = xnp(0 if x_type == "int8" else 128)
    const("x_s", np.float32(0.05))
    const("x_zp", zp)
    x_f = dq("x")
    a = q("a", conv("c1", x_f, 8, 16, 1, relu=True), 0.04, zp)
    b = q("b", conv("c2", dq("a"), 16, 16, 3, relu=True), 0.04, zp)
    c = q("c", conv("c3", dq("b"), 16, 16, 1, relu=True, add=dq("a")), 0.05, zp)
    y = conv("c4", dq("c"), 16, 12, 3, stride=2)
    graph = helper.make_graph(nodes, "int8_chain", [helper.make_tensor_value_info("x", xpt, [2, 8, 10, 10])],
                              [helper.make_tensor_value_info(y, TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    feeds = {"x": rng.integers(xlo, xhi + 1, size=(2, 8, 10, 10)).astype(xnp)}
    return model, feeds, y


# (tf32 keeps a region channels-last only where a conv has 32 channels or more, Note [narrow
# regions]: this chain's 16 would stay in ONNX's layout there)
@pytest.mark.parametrize("precision", ["fp32", "fp16"])
@pytest.mark.parametrize("x_type", ["int8", "uint8"])
def test_int8_conv_chains_run_channels_last_with_the_cpus_bits(x_type, precision, monkeypatch):
    monkeypatch.setenv("DNNX_PROBE_INT8_NHWC", "1")
    model, feeds, y = int8_chain(x_type)
    got, want, rows = cuda_and_cpu(model, feeds, precision=precision)
    convs = [r for r in rows if r["op"].startswith("Int8Conv")]
    assert len(convs) == 4 and all(r["op"] == "Int8Conv@NHWC" for r in convs), [(r["op"], r["algorithm"]) for r in rows]
    for row in convs:
        assert_on_device(row)
    # the 8-bit values between the convs stay channels-last: one Transpose in (x), one back (the output)
    transposes = [r for r in rows if r["op"].startswith("Transpose")]
    assert len(transposes) == 2, [(r["op"], r["name"]) for r in rows]
    # only the 1x1 conv of int8 X reads X as it is; the 3x3 convs and uint8 X pass X through the repad
    plain = [r for r in convs if r["algorithm"].startswith("X as it is")]
    assert len(plain) == (2 if x_type == "int8" else 0), [r["algorithm"] for r in convs]
    assert got[y].shape == want[y].shape == (2, 12, 5, 5)
    assert np.array_equal(got[y], want[y]), np.abs(got[y] - want[y]).max()


@pytest.mark.parametrize("switch", ["pass off", "default"])
def test_int8_conv_chains_keep_onnx_layout_by_default_and_with_the_pass_off(switch, monkeypatch):
    if switch == "pass off":
        monkeypatch.setenv("DNNX_PROBE_INT8_NHWC", "1")
    model, feeds, y = int8_chain("int8")
    got, want, rows = cuda_and_cpu(model, feeds, **({"passes": {"channels_last": False}} if switch == "pass off" else {}))
    assert [r["op"] for r in rows if r["op"].startswith("Int8Conv")] == ["Int8Conv"] * 4
    assert np.array_equal(got[y], want[y])
