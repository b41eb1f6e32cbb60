"""The channels_last pass (engine/runtime/passes/channels_last.cc, Note [channels last]) on its own,
with a stand-in backend that has "<op>@NHWC" kernels for a chosen set of ops
(dnnx._pass_hooks.channels_last_rewrite, a test-only module): which nodes go channels-last, where
the Transposes (and views) go, the permuted filters, the stored shapes. The kernels themselves run on CUDA
(tests/cuda/test_cuda_channels_last.py)."""
import numpy as np
import pytest
from onnx import helper

from dnnx._importer import import_model
from dnnx._native import load_extension
from ort_check import make_model, rand, run_ort

pass_hooks = load_extension("_pass_hooks")  # test-only module, beside _core

WINDOW_OPS = ["Conv", "Conv+Relu", "Conv+Add+Relu", "MaxPool", "GlobalAveragePool"]
TO_LAST, TO_FIRST = [0, 2, 3, 1], [0, 3, 1, 2]


def rewrite(model, nhwc_ops=WINDOW_OPS):
    return pass_hooks.channels_last_rewrite(import_model(model).ir, list(nhwc_ops))


def classifier(batch="N", size=8):
    """x -> Conv(w, b) -> Relu -> MaxPool -> Conv(w2) -> GlobalAveragePool -> Flatten -> Gemm -> y"""
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu"),
             helper.make_node("MaxPool", ["r1"], ["p1"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Conv", ["p1", "w2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
             helper.make_node("GlobalAveragePool", ["c2"], ["g"], name="gap"),
             helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
             helper.make_node("Gemm", ["f", "fc"], ["y"], name="fc", transB=1)]
    inits = {"w": rand(4, 3, 3, 3, seed=1), "b": rand(4, seed=2), "w2": rand(6, 4, 3, 3, seed=3),
             "fc": rand(5, 6, seed=4)}
    return make_model(nodes, [("x", [batch, 3, size, size])], [("y", None)], inits)


def test_window_ops_run_channels_last_between_one_transpose_and_a_view():
    out = rewrite(classifier())
    nodes, shapes = out["nodes"], out["shapes"]
    ops = [n["op"] for n in nodes]
    # the Relu is elementwise and stays channels-last; the pooled [N, 1, 1, C] leaves as a view
    assert ops == ["Transpose", "Conv@NHWC", "Relu", "MaxPool@NHWC", "Conv@NHWC", "GlobalAveragePool@NHWC",
                   "Reshape", "Flatten", "Gemm"], ops
    assert out["converted"] == 4
    assert nodes[0]["inputs"] == ["x"] and nodes[0]["perm"] == TO_LAST
    assert shapes[nodes[0]["outputs"][0]] == [1, 8, 8, 3]
    assert shapes["c1"] == [1, 8, 8, 4] and shapes["r1"] == [1, 8, 8, 4] and shapes["p1"] == [1, 4, 4, 4]
    assert shapes["g"] == [1, 1, 1, 6]
    assert shapes[nodes[6]["outputs"][0]] == [1, 6, 1, 1]  # ONNX's layout again, the same bytes
    assert shapes["y"] == [1, 5]


def test_filters_are_permuted_once_at_load():
    model = classifier()
    out = rewrite(model)
    conv = next(n for n in out["nodes"] if n["name"] == "conv1")
    w = rand(4, 3, 3, 3, seed=1)
    stored = np.frombuffer(out["constants"][conv["inputs"][1]], dtype=np.float32).reshape(4, 3, 3, 3)
    np.testing.assert_array_equal(stored, np.transpose(w, (0, 2, 3, 1)))
    assert conv["inputs"][2] == "b"  # the bias is a vector: no layout
    assert "w" not in out["constants"]  # nothing reads the NCHW filter any more


def test_ops_without_a_channels_last_kernel_get_transposes_back():
    out = rewrite(classifier(), ["Conv", "Conv+Relu"])  # no pools in channels-last
    ops = [n["op"] for n in out["nodes"]]
    assert ops == ["Transpose", "Conv@NHWC", "Relu", "Transpose", "MaxPool", "Transpose", "Conv@NHWC", "Transpose",
                   "GlobalAveragePool", "Flatten", "Gemm"], ops
    perms = [n["perm"] for n in out["nodes"] if n["op"] == "Transpose"]
    assert perms == [TO_LAST, TO_FIRST, TO_LAST, TO_FIRST]


def test_a_channels_last_graph_output_keeps_its_name_and_layout():
    nodes = [helper.make_node("Conv", ["x", "w"], ["y"], name="conv", pads=[1, 1, 1, 1])]
    out = rewrite(make_model(nodes, [("x", [2, 3, 5, 7])], [("y", None)], {"w": rand(4, 3, 3, 3)}))
    last = out["nodes"][-1]
    assert [n["op"] for n in out["nodes"]] == ["Transpose", "Conv@NHWC", "Transpose"]
    assert last["outputs"] == ["y"] and last["perm"] == TO_FIRST and out["shapes"]["y"] == [2, 4, 5, 7]
    assert out["outputs"] == ["y"]


def test_symbolic_spatial_dims_leave_by_transpose_not_view():
    # H and W symbolic: a pooled [N, 1, 1, C] is known only for GlobalAveragePool's output; a
    # conv output of symbolic size must be transposed
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Sigmoid", ["c"], ["s"], name="sig"),
             helper.make_node("Flatten", ["s"], ["y"], name="flatten")]
    model = make_model(nodes, [("x", ["N", 3, "H", "W"])], [("y", None)], {"w": rand(4, 3, 3, 3)})
    ops = [n["op"] for n in rewrite(model)["nodes"]]
    assert ops == ["Transpose", "Conv@NHWC", "Sigmoid", "Transpose", "Flatten"], ops


def test_a_broadcast_add_is_not_kept_channels_last():
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
             helper.make_node("Add", ["c", "bias"], ["y"], name="add")]
    model = make_model(nodes, [("x", [2, 3, 4, 4])], [("y", None)], {"w": rand(4, 3, 1, 1), "bias": rand(1, 4, 1, 1)})
    ops = [n["op"] for n in rewrite(model)["nodes"]]
    assert ops == ["Transpose", "Conv@NHWC", "Transpose", "Add"], ops


def test_same_shape_binary_ops_stay_channels_last():
    nodes = [helper.make_node("Conv", ["x", "w"], ["a"], name="conv_a", pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["x", "w2"], ["b"], name="conv_b", pads=[1, 1, 1, 1]),
             helper.make_node("Mul", ["a", "b"], ["m"], name="mul"),
             helper.make_node("Conv", ["m", "w3"], ["y"], name="conv_c")]
    inits = {"w": rand(4, 3, 3, 3, seed=1), "w2": rand(4, 3, 3, 3, seed=2), "w3": rand(2, 4, 1, 1, seed=3)}
    out = rewrite(make_model(nodes, [("x", ["N", 3, 6, 6])], [("y", None)], inits))
    ops = [n["op"] for n in out["nodes"]]
    # x is transposed once for both convs that read it
    assert ops == ["Transpose", "Conv@NHWC", "Conv@NHWC", "Mul", "Conv@NHWC", "Transpose"], ops


def test_nothing_to_convert_leaves_the_graph_as_it_was():
    model = classifier()
    before = [n.op_type for n in model.graph.node]
    out = rewrite(model, [])
    assert out["converted"] == 0
    assert [n["op"] for n in out["nodes"]] == before
    assert not [n for n in out["nodes"] if n["op"] == "Transpose"]


def test_rank_3_convs_are_left_alone():
    nodes = [helper.make_node("Conv", ["x", "w"], ["y"], name="conv1d", pads=[1, 1])]
    out = rewrite(make_model(nodes, [("x", [2, 3, 9])], [("y", None)], {"w": rand(4, 3, 3)}))
    assert [n["op"] for n in out["nodes"]] == ["Conv"] and out["converted"] == 0


def two_regions():
    """x -> Conv(3 -> 8) -> Relu -> Flatten -> Reshape back -> Conv(8 -> 40) -> Conv(40 -> 40) -> y: a
    narrow region (the first conv and its Relu) and, past the Flatten that reads ONNX's layout,
    a wide one."""
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], name="narrow", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu"),
             helper.make_node("Flatten", ["r1"], ["f"], name="flatten"),
             helper.make_node("Reshape", ["f", "shape"], ["back"], name="reshape"),
             helper.make_node("Conv", ["back", "w2"], ["c2"], name="widen", pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["c2", "w3"], ["y"], name="wide", pads=[1, 1, 1, 1])]
    inits = {"w1": rand(8, 3, 3, 3, seed=1), "w2": rand(40, 8, 3, 3, seed=2), "w3": rand(40, 40, 3, 3, seed=3),
             "shape": np.array([1, 8, 6, 6], dtype=np.int64)}
    return make_model(nodes, [("x", [1, 3, 6, 6])], [("y", None)], inits)


def test_a_region_without_a_wide_conv_keeps_onnx_layout_with_the_reason():
    out = pass_hooks.channels_last_rewrite(import_model(two_regions()).ir, WINDOW_OPS, 32)
    ops = {n["name"]: n["op"] for n in out["nodes"]}
    assert ops["narrow"] == "Conv" and ops["relu"] == "Relu"  # 3 -> 8 channels: the region stays NCHW
    assert ops["widen"] == "Conv@NHWC" and ops["wide"] == "Conv@NHWC"  # joined to the 40 -> 40 conv's region
    assert out["converted"] == 2
    assert list(out["layout_reasons"]) == ["narrow"]
    assert "no conv of its channels-last region has 32 or more input channels" in out["layout_reasons"]["narrow"]
    # without the rule every region goes channels-last
    every = pass_hooks.channels_last_rewrite(import_model(two_regions()).ir, WINDOW_OPS)
    assert every["converted"] == 3 and every["layout_reasons"] == {}


def test_a_wide_filter_count_alone_is_not_enough():
    # LeNet's shape of region: 1 -> 20 and 20 -> 50 channels (filters 50 >= 32, inputs 20 < 32)
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], name="conv1"),
             helper.make_node("Conv", ["c1", "w2"], ["y"], name="conv2")]
    inits = {"w1": rand(20, 1, 5, 5, seed=1), "w2": rand(50, 20, 5, 5, seed=2)}
    model = make_model(nodes, [("x", [1, 1, 28, 28])], [("y", None)], inits)
    out = pass_hooks.channels_last_rewrite(import_model(model).ir, WINDOW_OPS, 32)
    assert [n["op"] for n in out["nodes"]] == ["Conv", "Conv"] and out["converted"] == 0
    assert sorted(out["layout_reasons"]) == ["conv1", "conv2"]


# Note [narrow regions] on the zoo's raw exports (no fusion passes run here): ResNet-18 and
# MobileNet-v2 (depthwise convs joined to their region through Clip and the residual Adds) keep every
# region; DenseNet-121's BatchNormalizations and Concats cut its regions apart, and only the stem
# (conv0 of 3 input channels, pool0) and the lone head pool have no conv of 32+ channels and filters.
NARROW = {"resnet18": [], "mobilenet_v2": [],
          "densenet121": ["/features/conv0/Conv", "/features/pool0/MaxPool", "/GlobalAveragePool"]}


@pytest.mark.parametrize("name", sorted(NARROW))
def test_the_zoo_networks_keep_their_wide_regions(name):
    from zoo_check import zoo_model

    ir = import_model(zoo_model(name)).ir
    every = pass_hooks.channels_last_rewrite(ir, WINDOW_OPS)
    ruled = pass_hooks.channels_last_rewrite(ir, WINDOW_OPS, 32)
    assert sorted(ruled["layout_reasons"]) == sorted(NARROW[name])
    assert ruled["converted"] == every["converted"] - len(NARROW[name]) > 0


def stem(channels=3, group=1):
    """x [N, channels, 16, 16] -> Conv 7x7/2 (8 filters) -> Relu -> MaxPool: ResNet's stem, small"""
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="stem", strides=[2, 2], pads=[3, 3, 3, 3], group=group),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("MaxPool", ["r"], ["y"], name="pool", kernel_shape=[3, 3], strides=[2, 2],
                              pads=[1, 1, 1, 1])]
    return make_model(nodes, [("x", ["N", channels, 16, 16])], [("y", None)],
                      {"w": rand(8, channels // group, 7, 7, seed=5)})


@pytest.mark.parametrize("multiple", [4, 8])
def test_a_conv_of_few_channels_reads_them_padded_to_the_multiple(multiple):
    # Note [padded channels]: X through one Pad of its channel axis, W permuted and zero-padded
    out = pass_hooks.channels_last_rewrite(import_model(stem()).ir, WINDOW_OPS, channel_multiple=multiple)
    nodes, shapes = out["nodes"], out["shapes"]
    assert [n["op"] for n in nodes] == ["Transpose", "Pad", "Conv@NHWC", "Relu", "MaxPool@NHWC", "Transpose"]
    pad, conv = nodes[1], nodes[2]
    assert pad["inputs"] == nodes[0]["outputs"] and conv["inputs"][0] == pad["outputs"][0]
    assert pad["outputs"][0].endswith(f"/c{multiple}")
    assert shapes[pad["outputs"][0]] == [1, 16, 16, multiple]
    assert pad["pads"] == [0, 0, 0, 0, 0, 0, 0, multiple - 3] and pad["mode"] == "constant"
    stored = np.frombuffer(out["constants"][conv["inputs"][1]], dtype=np.float32).reshape(8, 7, 7, multiple)
    w = np.transpose(rand(8, 3, 7, 7, seed=5), (0, 2, 3, 1))
    np.testing.assert_array_equal(stored[..., :3], w)
    assert not stored[..., 3:].any()  # the added channels' weights are zeros
    assert "w" not in out["constants"] and len(out["constants"]) == 1  # neither unpadded copy is kept


def test_a_backend_with_transpose_pad_gets_one_node_for_both():
    out = pass_hooks.channels_last_rewrite(import_model(stem()).ir, WINDOW_OPS + ["Transpose+Pad"], channel_multiple=8)
    nodes, shapes = out["nodes"], out["shapes"]
    assert [n["op"] for n in nodes] == ["Transpose+Pad", "Conv@NHWC", "Relu", "MaxPool@NHWC", "Transpose"]
    fused = nodes[0]
    assert fused["inputs"] == ["x"] and fused["perm"] == TO_LAST and fused["pads"] == [0, 0, 0, 0, 0, 0, 0, 5]
    assert shapes[fused["outputs"][0]] == [1, 16, 16, 8] and nodes[1]["inputs"][0] == fused["outputs"][0]


@pytest.mark.parametrize("channels, group, multiple", [(8, 1, 8), (4, 1, 4), (6, 2, 8), (3, 1, 1)])
def test_aligned_grouped_or_unpadded_convs_read_channels_as_they_are(channels, group, multiple):
    out = pass_hooks.channels_last_rewrite(import_model(stem(channels, group)).ir, WINDOW_OPS, channel_multiple=multiple)
    assert "Pad" not in [n["op"] for n in out["nodes"]]
    conv = next(n for n in out["nodes"] if n["op"] == "Conv@NHWC")
    assert out["shapes"][conv["inputs"][1]] == [8, 7, 7, channels // group]


S2D_OPS = WINDOW_OPS + ["Transpose+Pad", "Transpose+SpaceToDepth"]


def strided_conv(size, pads, kernel, channels=3, strides=(2, 2)):
    nodes = [helper.make_node("Conv", ["x", "w"], ["y"], name="conv", strides=list(strides), pads=pads)]
    w = rand(8, channels, kernel, kernel, seed=7)
    return make_model(nodes, [("x", [2, channels, size, size])], [("y", None)], {"w": w}), w


def space_to_depth_reference(x, pads, depth=16):
    """Transpose+SpaceToDepth's meaning (ops/layout/channels_last.h) in numpy: [N, C, H, W] -> [N, Hs, Ws, depth]."""
    n, c, h, w = x.shape
    top, left, bottom, right = pads
    hp, wp = h + top + bottom, w + left + right
    xp = np.zeros((n, c, hp + hp % 2, wp + wp % 2), x.dtype)
    xp[:, :, top:top + h, left:left + w] = x
    blocks = np.concatenate([xp[:, :, dy::2, dx::2] for dy in (0, 1) for dx in (0, 1)], axis=1)  # (2 dy + dx) C + c
    blocks = np.pad(blocks, ((0, 0), (0, depth - 4 * c), (0, 0), (0, 0)))
    return blocks.transpose(0, 2, 3, 1)


@pytest.mark.parametrize("size, pads, kernel", [(16, [3, 3, 3, 3], 7), (15, [1, 1, 1, 1], 3),
                                                (17, [3, 2, 3, 2], 7), (16, [0, 0, 0, 0], 4)])
def test_a_stride_2_conv_of_few_channels_runs_on_its_2x2_blocks(size, pads, kernel):
    # Note [space to depth]: the rewritten conv (stride 1, no pads, half the window) over the
    # blocks computes what the model's conv computes, checked here with onnxruntime on both forms
    model, _ = strided_conv(size, pads, kernel)
    out = pass_hooks.channels_last_rewrite(import_model(model).ir, S2D_OPS, channel_multiple=8)
    nodes, shapes = out["nodes"], out["shapes"]
    assert [n["op"] for n in nodes] == ["Transpose+SpaceToDepth", "Conv@NHWC", "Transpose"], nodes
    blocks, conv = nodes[0], nodes[1]
    half = (kernel + 1) // 2
    assert blocks["pads"] == pads and blocks["channels"] == 16 and blocks["outputs"][0].endswith("/nhwc/s2d")
    assert conv["kernel_shape"] == [half, half] and conv["strides"] == [1, 1]
    x = rand(2, 3, size, size, seed=3)
    xs = space_to_depth_reference(x, pads)
    assert shapes[blocks["outputs"][0]] == list(xs.shape)
    w2 = np.frombuffer(out["constants"][conv["inputs"][1]], dtype=np.float32).reshape(8, half, half, 16)
    as_nchw = make_model([helper.make_node("Conv", ["x", "w"], ["y"], name="conv")],
                         [("x", [2, 16, xs.shape[1], xs.shape[2]])], [("y", None)], {"w": w2.transpose(0, 3, 1, 2).copy()})
    got = run_ort(as_nchw, {"x": xs.transpose(0, 3, 1, 2).copy()})["y"]
    want = run_ort(model, {"x": x})["y"]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("size, pads, kernel, channels, strides", [
    (15, [0, 0, 0, 0], 4, 3, (2, 2)),   # the two output sizes differ (an even window on an odd size)
    (16, [3, 3, 3, 3], 7, 5, (2, 2)),   # 4 * 5 channels do not fit 16
    (16, [1, 1, 1, 1], 3, 3, (1, 1)),   # stride 1
])
def test_other_convs_keep_their_form(size, pads, kernel, channels, strides):
    model, _ = strided_conv(size, pads, kernel, channels, strides)
    out = pass_hooks.channels_last_rewrite(import_model(model).ir, S2D_OPS, channel_multiple=8)
    ops = [n["op"] for n in out["nodes"]]
    assert "Transpose+SpaceToDepth" not in ops and ops[0] == "Transpose+Pad", ops


@pytest.mark.parametrize("half, code", [("float16", 10), ("bfloat16", 16)])
def test_a_half_model_converts_its_input_inside_the_space_to_depth(half, code):
    # Note [entry cast]: half storage puts a Cast to half before the blocks; the fold leaves one
    # layout op that reads the float32 input and writes half blocks
    model, _ = strided_conv(16, [3, 3, 3, 3], 7)
    out = pass_hooks.channels_last_rewrite(import_model(model).ir, S2D_OPS, channel_multiple=8, half=half)
    nodes, types = out["nodes"], out["types"]
    assert out["folded_casts"] == 1
    assert [n["op"] for n in nodes] == ["Transpose+SpaceToDepth", "Conv@NHWC", "Transpose", "Cast"], nodes
    blocks = nodes[0]
    assert blocks["inputs"] == ["x"] and types["x"] == "float32" and blocks["to"] == code
    assert types[blocks["outputs"][0]] == half


def test_an_input_read_by_others_keeps_its_cast():
    # the model input feeds the blocks and a second branch: the shared Cast stays, nothing folds
    nodes = [helper.make_node("Conv", ["x", "w"], ["y"], name="conv", strides=[2, 2], pads=[3, 3, 3, 3]),
             helper.make_node("Relu", ["x"], ["r"], name="relu")]
    model = make_model(nodes, [("x", [2, 3, 16, 16])], [("y", None), ("r", None)], {"w": rand(8, 3, 7, 7, seed=7)})
    out = pass_hooks.channels_last_rewrite(import_model(model).ir, S2D_OPS, channel_multiple=8, half="float16")
    assert out["folded_casts"] == 0
    blocks = next(n for n in out["nodes"] if n["op"] == "Transpose+SpaceToDepth")
    assert "to" not in blocks and out["types"][blocks["inputs"][0]] == "float16"
