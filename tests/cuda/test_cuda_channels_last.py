"""Channels last on CUDA (Note [channels last] in engine/runtime/passes/channels_last.cc): at tf32 and
fp16 the 4-D window ops run on NHWC data ("<op>@NHWC" layers, cuDNN's NHWC descriptors, a 1x1 conv
as one cuBLASLt GEMM), with Transposes at the model's edges; fp32 keeps ONNX's layout. Checked
against onnxruntime with the tolerances of each precision (test_cuda_precision.py for tf32,
test_cuda_fp16.py for fp16, where they are derived), and against the same model loaded with the
pass off, which runs NCHW kernels: the two layouts must agree within the same bounds."""
import numpy as np
import pytest
from onnx import helper

import dnnx
from dnnx.examples import build
from ort_check import make_model, rand, run_ort
from residual_models import residual_block, weights
from channel_models import dense_block, mean_gate, shuffle_unit
from test_cuda_fp16 import MODEL_ATOL, MODEL_L2, MODEL_RTOL, assert_fp16_close
from test_cuda_bf16 import MODEL_ATOL as BF16_ATOL, MODEL_L2 as BF16_L2, MODEL_RTOL as BF16_RTOL, assert_bf16_close
from test_cuda_precision import assert_tf32_close

pytestmark = pytest.mark.usefixtures("fixed_layout")  # the pass's own forms (conftest.py)

GEMM = "cublasLtMatmul (1x1 conv as a GEMM)"


def assert_close(precision, got, want, what):
    if precision == "tf32":
        assert_tf32_close(got, want, what)
    else:
        assert_fp16_close(got, want, what, MODEL_RTOL, MODEL_ATOL, MODEL_L2)


def ops(model, **kwargs):
    return [row["op"] for row in model.plan(**kwargs)]


def check(model, feeds, precision, **kwargs):
    """Loads `model` channels-last and NCHW; both against onnxruntime. Returns the plan rows."""
    want = run_ort(model, feeds)
    last = dnnx.load(model, device="cuda", precision=precision, measure_precision=False, plan_cache=False, **kwargs)
    first = dnnx.load(model, device="cuda", precision=precision, measure_precision=False, plan_cache=False,
                      passes={"channels_last": False}, **kwargs)
    assert not [op for op in ops(first) if op.endswith("@NHWC")]
    for name, w in want.items():
        got_last, got_first = last.run_dict(feeds)[name], first.run_dict(feeds)[name]
        assert_close(precision, got_last, w, f"{name}: channels last vs onnxruntime")
        assert_close(precision, got_first, w, f"{name}: NCHW vs onnxruntime")
    return last.plan()


@pytest.mark.parametrize("precision", ["tf32", "fp16"])
@pytest.mark.parametrize("bias, downsample, stride", [(True, False, 1), (False, True, 2), (True, True, 2)])
def test_a_residual_block_runs_channels_last(precision, bias, downsample, stride):
    model = residual_block(bias=bias, downsample=downsample, stride=stride, channels=32, size=10, down_bias=True)
    rows = check(model, {"x": rand(4, 32, 10, 10)}, precision)
    names = [row["op"] for row in rows]
    assert "Conv+Relu@NHWC" in names and "Conv+Add+Relu@NHWC" in names, names
    # one Transpose in (after the fp16 Cast), one out: nothing between the convs
    assert names.count("Transpose") == 2, names
    if downsample:  # the 1x1 downsample conv has stride 2: cuDNN, not the GEMM
        assert "Conv@NHWC" in names


@pytest.mark.parametrize("precision", ["tf32", "fp16"])
@pytest.mark.parametrize("search", ["heuristic", "exhaustive"])
def test_a_1x1_conv_is_one_gemm_with_bias_relu_and_residual(precision, search):
    # a bottleneck's end: 1x1 conv + bias + the block input, then Relu; and a 1x1 conv + Relu
    inits = {"w1": weights(64, 32, 1, 1, seed=1), "b1": rand(64, seed=2), "w2": weights(32, 64, 1, 1, seed=3),
             "b2": rand(32, seed=4)}
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="expand"),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
             helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], name="reduce"),
             helper.make_node("Add", ["c2", "x"], ["s"], name="add"),
             helper.make_node("Relu", ["s"], ["y"], name="relu")]
    model = make_model(nodes, [("x", ["N", 32, 7, 9])], [("y", None)], inits)
    rows = {row["name"]: row for row in check(model, {"x": rand(3, 32, 7, 9)}, precision, algo_search=search,
                                               batch_size=3)}
    # the fused join keeps the conv's name ("reduce")
    assert rows["expand"]["op"] == "Conv+Relu@NHWC" and rows["reduce"]["op"] == "Conv+Add+Relu@NHWC", rows
    for name in ("expand", "reduce"):
        row = rows[name]
        if search == "heuristic":
            assert row["algorithm"].startswith(GEMM), row
        else:  # whichever was faster, with both times in the plan
            assert GEMM in row["algorithm"] + str(row["rejected"]), row
    if rows["reduce"]["algorithm"].startswith(GEMM):
        assert "residual" in rows["reduce"]["algorithm"], rows["reduce"]


@pytest.mark.parametrize("precision", ["tf32", "fp16"])
def test_the_pooled_head_keeps_views_at_its_end(precision):
    # stem conv + relu + max pool, a conv, global average pool -> flatten -> gemm: the pooled
    # [N, 1, 1, C] is the same bytes in both layouts, so a Reshape (a view) replaces the Transpose
    inits = {"w0": weights(32, 3, 7, 7, seed=1), "b0": rand(32, seed=2), "w1": weights(32, 32, 3, 3, seed=3),
             "wf": weights(10, 32, seed=4), "bf": rand(10, seed=5)}
    nodes = [helper.make_node("Conv", ["x", "w0", "b0"], ["c0"], name="stem", strides=[2, 2], pads=[3, 3, 3, 3]),
             helper.make_node("Relu", ["c0"], ["r0"], name="stem_relu"),
             helper.make_node("MaxPool", ["r0"], ["p0"], name="pool", kernel_shape=[3, 3], strides=[2, 2],
                              pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["p0", "w1"], ["c1"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("GlobalAveragePool", ["c1"], ["g"], name="gap"),
             helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
             helper.make_node("Gemm", ["f", "wf", "bf"], ["y"], name="fc", transB=1)]
    model = make_model(nodes, [("x", ["N", 3, 32, 32])], [("y", None)], inits)
    rows = check(model, {"x": rand(2, 3, 32, 32)}, precision, batch_size=2)
    names = [row["op"] for row in rows]
    assert "Conv+Relu+MaxPool@NHWC" in names and "GlobalAveragePool@NHWC" in names, names
    # in: the stem's input as 2x2 blocks on the way (Note [space to depth]); out: a view
    assert names.count("Transpose+SpaceToDepth") == 1 and "Transpose" not in names and "Reshape" in names, names


@pytest.mark.parametrize("precision, multiple", [("tf32", 4), ("fp16", 8)])
@pytest.mark.parametrize("channels", [5, 6])
def test_a_stem_of_few_channels_reads_them_padded(precision, multiple, channels):
    # Note [padded channels]: ResNet's stem shape, small, with more channels than the 2x2 blocks
    # can take (Note [space to depth]): X through a Transpose+Pad of its channel axis to the
    # multiple, W zero-padded at load; the outputs are those of the unpadded conv
    inits = {"w": weights(64, channels, 7, 7, seed=1), "b": rand(64, seed=2), "w2": weights(64, 64, 3, 3, seed=3)}
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="stem", strides=[2, 2], pads=[3, 3, 3, 3]),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("MaxPool", ["r"], ["p"], name="pool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["p", "w2"], ["y"], name="conv", pads=[1, 1, 1, 1])]
    model = make_model(nodes, [("x", [4, channels, 32, 32])], [("y", None)], inits)
    rows = check(model, {"x": rand(4, channels, 32, 32)}, precision)
    by_op = {row["op"]: row for row in rows}
    padded = -(-channels // multiple) * multiple
    fused = by_op["Transpose+Pad"]  # one pass from ONNX's layout, not a Transpose and a Pad
    assert fused["name"].endswith(f"/c{padded}/transpose_pad"), by_op
    assert fused["algorithm"].startswith(f"transpose+pad kernel ({channels} -> {padded} channels"), fused
    assert "Conv+Relu+MaxPool@NHWC" in by_op and "Pad" not in by_op, by_op
    assert [row["name"] for row in rows if row["op"] == "Transpose"] == ["y/transpose"], rows  # out only


@pytest.mark.parametrize("precision", ["tf32", "fp16"])
@pytest.mark.parametrize("size, pads, kernel", [(32, [3, 3, 3, 3], 7), (31, [3, 2, 3, 2], 7), (17, [1, 1, 1, 1], 3)])
def test_a_stride_2_stem_of_3_channels_runs_on_its_2x2_blocks(precision, size, pads, kernel):
    # Note [space to depth]: the space-to-depth kernel, the rearranged filter and the stride-1 conv
    # (joined to its pool) against onnxruntime and the NCHW plan, odd sizes and uneven pads included
    inits = {"w": weights(64, 3, kernel, kernel, seed=1), "b": rand(64, seed=2), "w2": weights(64, 64, 3, 3, seed=3)}
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="stem", strides=[2, 2], pads=pads),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("MaxPool", ["r"], ["p"], name="pool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["p", "w2"], ["y"], name="conv", pads=[1, 1, 1, 1])]
    model = make_model(nodes, [("x", [4, 3, size, size])], [("y", None)], inits)
    rows = check(model, {"x": rand(4, 3, size, size)}, precision)
    by_op = {row["op"]: row for row in rows}
    blocks = by_op["Transpose+SpaceToDepth"]
    assert blocks["name"].endswith("/nhwc/s2d/space_to_depth") and blocks["algorithm"].startswith("space-to-depth"), blocks
    assert by_op["Conv+Relu+MaxPool@NHWC"]["inputs"][0] == [4, -(-(size + pads[0] + pads[2]) // 2),
                                                           -(-(size + pads[1] + pads[3]) // 2), 16], by_op
    assert "Transpose+Pad" not in by_op and "Pad" not in by_op, by_op


@pytest.mark.parametrize("precision, half", [("fp16", "float16"), ("bf16", "bfloat16")])
@pytest.mark.parametrize("size, pads", [(32, [3, 3, 3, 3]), (31, [3, 2, 3, 2])])
def test_a_half_stem_converts_its_input_in_the_space_to_depth(precision, half, size, pads):
    # Note [entry cast]: the float32 input goes straight into the space-to-depth kernel, which
    # rounds as the Cast would: bit-identical to the plan with the Cast (the pass switched off)
    inits = {"w": weights(64, 3, 7, 7, seed=1), "b": rand(64, seed=2)}
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="stem", strides=[2, 2], pads=pads),
             helper.make_node("Relu", ["c"], ["y"], name="relu")]
    model = make_model(nodes, [("x", [4, 3, size, size])], [("y", None)], inits)
    feeds = {"x": rand(4, 3, size, size, seed=5) * 3}
    options = dict(device="cuda", precision=precision, measure_precision=False, plan_cache=False)
    folded = dnnx.load(model, **options)
    apart = dnnx.load(model, passes={"fold_entry_cast": False}, **options)
    rows, apart_rows = folded.plan(), apart.plan()
    assert rows[0]["op"] == "Transpose+SpaceToDepth" and f"float32 -> {half}" in rows[0]["algorithm"], rows[0]
    assert [r["op"] for r in apart_rows][:2] == ["Cast", "Transpose+SpaceToDepth"], apart_rows
    assert len(rows) == len(apart_rows) - 1
    got, want = folded.run_dict(feeds)["y"], apart.run_dict(feeds)["y"]
    np.testing.assert_array_equal(got, want)
    want_ort = run_ort(model, feeds)["y"]
    if precision == "fp16":
        assert_close(precision, got, want_ort, "folded entry Cast vs onnxruntime")
    else:
        assert_bf16_close(got, want_ort, "folded entry Cast vs onnxruntime", BF16_RTOL, BF16_ATOL, BF16_L2)


@pytest.mark.parametrize("precision", ["fp16", "bf16"])
def test_a_channels_last_value_of_few_channels_is_padded_in_place(precision):
    # the second conv reads the first's channels-last output of 5 channels: a Pad of its last axis
    inits = {"w": weights(5, 32, 3, 3, seed=1), "w2": weights(64, 5, 3, 3, seed=2)}
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="narrow", pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["c", "w2"], ["y"], name="wide", pads=[1, 1, 1, 1])]
    model = make_model(nodes, [("x", [2, 32, 9, 9])], [("y", None)], inits)
    feeds = {"x": rand(2, 32, 9, 9)}
    want = run_ort(model, feeds)["y"]
    m = dnnx.load(model, device="cuda", precision=precision, measure_precision=False, plan_cache=False)
    rows = {row["name"]: row for row in m.plan()}
    (pad,) = [row for row in rows.values() if row["op"] == "Pad"]
    assert pad["name"].endswith("/c8/pad") and rows["wide"]["op"] == "Conv@NHWC", rows
    got = m.run_dict(feeds)["y"]
    if precision == "fp16":
        assert_fp16_close(got, want, "padded in place vs onnxruntime", MODEL_RTOL, MODEL_ATOL, MODEL_L2)
    else:  # bfloat16: test_cuda_bf16.py's whole-model bounds (derived there)
        assert_bf16_close(got, want, "padded in place vs onnxruntime", BF16_RTOL, BF16_ATOL, BF16_L2)


@pytest.mark.parametrize("precision", ["tf32", "fp16"])
def test_windows_cudnn_cannot_pad_stay_nchw(precision):
    # an asymmetric-pad conv has no NHWC kernel: it keeps ONNX's layout, with a Transpose between
    # it and the channels-last conv; a ceil_mode pool runs channels-last on the direct kernel
    inits = {"w": weights(32, 4, 3, 3, seed=1), "w2": weights(32, 32, 3, 3, seed=2)}
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="asym", pads=[0, 1, 2, 0]),
             helper.make_node("Conv", ["c", "w2"], ["d"], name="sym", pads=[1, 1, 1, 1]),
             helper.make_node("Sigmoid", ["d"], ["s"], name="sigmoid"),  # keeps the pool apart from the conv
             helper.make_node("MaxPool", ["s"], ["y"], name="ceil", kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)]
    model = make_model(nodes, [("x", [2, 4, 9, 9])], [("y", None)], inits)
    rows = check(model, {"x": rand(2, 4, 9, 9)}, precision)
    by_name = {row["name"]: row["op"] for row in rows}
    assert by_name["asym"] == "Conv" and by_name["sym"] == "Conv@NHWC" and by_name["ceil"] == "MaxPool@NHWC", by_name
    assert {row["name"]: row["algorithm"] for row in rows}["ceil"] == "direct kernel"
    assert [row["op"] for row in rows].count("Transpose") == 2, by_name


@pytest.mark.parametrize("precision", ["tf32", "fp16"])
def test_grouped_and_strided_convs(precision):
    inits = {"w": weights(64, 32, 3, 3, seed=1), "b": rand(64, seed=2), "w2": weights(32, 64, 1, 1, seed=3)}
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="grouped", group=2, strides=[2, 2], pads=[1, 1, 1, 1]),
             helper.make_node("Sigmoid", ["c"], ["s"], name="sigmoid"),  # elementwise: stays channels-last
             helper.make_node("Conv", ["s", "w2"], ["y"], name="pointwise")]
    model = make_model(nodes, [("x", [3, 64, 11, 11])], [("y", None)], inits)
    rows = {row["name"]: row for row in check(model, {"x": rand(3, 64, 11, 11)}, precision)}
    assert rows["grouped"]["op"] == "Conv@NHWC" and rows["pointwise"]["op"] == "Conv@NHWC", rows
    assert rows["pointwise"]["algorithm"].startswith(GEMM), rows["pointwise"]
    assert [row["op"] for row in rows.values()].count("Transpose") == 2


def test_fp32_keeps_onnx_layout():
    model = dnnx.load(residual_block(downsample=True, stride=2), device="cuda")
    assert not [op for op in ops(model) if op.endswith("@NHWC") or op == "Transpose"]


def test_lenet_channels_last_in_fp16():
    model = build("lenet")
    rows = check(model, {"x": rand(16, 1, 28, 28)}, "fp16", batch_size=16)
    assert [row["op"] for row in rows].count("Conv+Relu+MaxPool@NHWC") + \
        [row["op"] for row in rows].count("Conv+MaxPool@NHWC") == 2, [row["op"] for row in rows]


def test_lenet_keeps_onnx_layout_at_tf32_with_the_reason():
    # Note [narrow regions]: convs of 1 -> 20 and 20 -> 50 channels gain nothing channels-last
    # at tf32 (LeNet took 259 us at batch 1024 so, 186 us in ONNX's layout on an H200)
    model = build("lenet")
    rows = check(model, {"x": rand(16, 1, 28, 28)}, "tf32", batch_size=16)
    assert not [row["op"] for row in rows if row["op"].endswith("@NHWC") or row["op"] == "Transpose"], rows
    convs = [row for row in rows if row["op"].startswith("Conv")]
    assert len(convs) == 2
    for row in convs:
        reasons = [why for algo, why in row["rejected"] if algo.startswith("channels-last (")]
        assert len(reasons) == 1 and "no conv of its channels-last region has 32 or more" in reasons[0], row
    assert "not channels-last (Conv" in str(dnnx.load(model, device="cuda", precision="tf32").plan())


def test_device_outputs_are_in_onnx_layout():
    model = residual_block(channels=32, size=6)
    x = rand(2, 32, 6, 6)
    gpu = dnnx.load(model, device="cuda", precision="tf32")
    on_device = gpu.run(x, output="device")
    assert on_device.shape == (2, 32, 6, 6)
    assert_tf32_close(np.asarray(on_device.numpy()), run_ort(model, {"x": x})["y"], "device output")


@pytest.mark.parametrize("precision", ["tf32", "fp16"])
@pytest.mark.parametrize("growth", [16, 6])  # 48 channels (4-element vectors), 38 (one element a thread)
@pytest.mark.parametrize("pool", ["plain", "padded, counting the pads"])
def test_concatenations_stay_channels_last(precision, growth, pool):
    # Note [channels-last forms] on CUDA: Concat and Split on channels run on axis 3 of the NHWC
    # values, BatchNormalization(+Relu) and AveragePool in NHWC beside them: no Transpose between
    # the model's edges (one in, one out for each of y and z)
    padded = pool != "plain"
    model = dense_block(growth, pool_pads=(1, 1, 1, 1) if padded else (0, 0, 0, 0), count_include_pad=int(padded))
    rows = check(model, {"x": rand(3, 32, 12, 12)}, precision, batch_size=3)
    by_name = {row["name"]: row for row in rows}
    assert by_name["concat"]["op"] == "Concat" and by_name["split"]["op"] == "Split", by_name
    assert by_name["norm"]["op"] == "BatchNormalization+Relu@NHWC", by_name["norm"]
    assert by_name["norm2"]["op"] == "BatchNormalization@NHWC", by_name["norm2"]
    assert by_name["pool"]["op"] == "AveragePool@NHWC", by_name["pool"]
    transposes = [row["name"] for row in rows if row["op"].startswith("Transpose")]
    assert len(transposes) == 3, transposes  # x in; y and z out


@pytest.mark.parametrize("precision", ["tf32", "fp16"])
def test_concatenations_keep_onnx_layout_behind_the_probe_switch(precision, monkeypatch):
    # DNNX_PROBE_CHANNEL_CONCAT=0: the layout before, for bench/probes/probe_layout_regions_cuda.py
    monkeypatch.setenv("DNNX_PROBE_CHANNEL_CONCAT", "0")
    model = dense_block(16)
    rows = check(model, {"x": rand(2, 32, 12, 12)}, precision, batch_size=2)
    by_name = {row["name"]: row["op"] for row in rows}
    assert by_name["concat"] == "Concat" and by_name["transition"] == "Conv@NHWC", by_name
    # the Concats' inputs and outputs go through conversions (at tf32 the 32 -> 16 conv is narrow)
    assert sum(op.startswith("Transpose") for op in by_name.values()) > 3, by_name


@pytest.mark.parametrize("precision", ["tf32", "fp16"])
@pytest.mark.parametrize("dynamic_shapes", [True, False])
def test_channel_shuffle_stays_channels_last(precision, dynamic_shapes):
    # Note [channel shuffle]: Slice halves on axis 3, the shuffle on the NHWC bytes, Shape as a
    # Gather of the stored dims: x in, y out and the shuffle's own Transpose
    rows = check(shuffle_unit(dynamic_shapes), {"x": rand(3, 32, 6, 6, seed=4)}, precision, batch_size=3)
    ops = [row["op"] for row in rows]
    assert ops.count("Transpose") == 3 and "Conv@NHWC" in ops, ops
    # Note [half storage]: the Shapes read the half values as they are (no Cast to FLOAT for them);
    # the Casts that run are the entry's and the exit's
    casts = [row["name"] for row in rows if row["op"] == "Cast" and not row["algorithm"].startswith("folded")]
    assert len(casts) <= (2 if precision == "fp16" else 0), casts


@pytest.mark.parametrize("precision", ["tf32", "fp16"])
@pytest.mark.parametrize("keepdims", [1, 0])
def test_a_mean_over_pixels_is_a_channels_last_global_pool(precision, keepdims):
    # Note [channels-last forms]: timm's SE gate x.mean((2, 3), keepdim=True) as GlobalAveragePool@NHWC
    rows = check(mean_gate(keepdims), {"x": rand(2, 32, 7, 7, seed=6)}, precision, batch_size=2)
    ops = [row["op"] for row in rows]
    assert "GlobalAveragePool@NHWC" in ops and ops.count("Transpose") == 2, ops


@pytest.mark.parametrize("precision", ["fp16", "bf16"])
def test_a_region_without_a_conv_keeps_onnx_layout(precision):
    # Note [narrow regions] at fp16 and bf16: a BatchNormalization + Relu and an AveragePool alone
    # would pay two conversions for nothing
    c = 16
    inits = {"s": rand(c, seed=1) * 0.1 + 1, "b": rand(c, seed=2) * 0.1, "m": rand(c, seed=3) * 0.1,
             "v": np.abs(rand(c, seed=4)) + 0.5}
    nodes = [helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["n"], name="norm"),
             helper.make_node("Relu", ["n"], ["r"], name="relu"),
             helper.make_node("AveragePool", ["r"], ["y"], name="pool", kernel_shape=[2, 2], strides=[2, 2])]
    model = make_model(nodes, [("x", [2, c, 8, 8])], [("y", None)], inits)
    m = dnnx.load(model, device="cuda", precision=precision, measure_precision=False, plan_cache=False)
    by_name = {row["name"]: row for row in m.plan()}
    assert by_name["norm"]["op"] == "BatchNormalization+Relu" and by_name["pool"]["op"] == "AveragePool", by_name
    reasons = [why for algo, why in by_name["pool"]["rejected"] if algo.startswith("channels-last (")]
    assert len(reasons) == 1 and "has no conv" in reasons[0], by_name["pool"]
    want = run_ort(model, {"x": rand(2, c, 8, 8, seed=5)})["y"]
    got = m.run(rand(2, c, 8, 8, seed=5))
    if precision == "fp16":
        assert_fp16_close(got, want, "BN + Relu + pool", MODEL_RTOL, MODEL_ATOL, MODEL_L2)
    else:
        assert_bf16_close(got, want, "BN + Relu + pool", BF16_RTOL, BF16_ATOL, BF16_L2)
