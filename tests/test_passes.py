"""The load-time rewrite passes (engine/runtime/passes): each one changes the plan as it should,
leaves the results as they were (within fp32 rounding) and can be switched off alone or with
the rest (optimize=False); where a pass must not fire, it does not."""
import numpy as np
import pytest
from onnx import helper

import dnnx
from dnnx.examples import build
from ort_check import assert_matches_ort, make_model, rand

ALL_OFF = {"optimize": False}


def ops(model, **load_kwargs):
    return [row["op"] for row in dnnx.load(model, **load_kwargs).plan()]


def check_same_results(model, feeds, **switches):
    """dnnx with the passes as given == dnnx with none == onnxruntime (fp32 tolerance)."""
    fused = assert_matches_ort(model, feeds, **switches)
    plain = dnnx.load(model, optimize=False).run_dict(feeds)
    for name in fused:
        np.testing.assert_allclose(fused[name], plain[name], rtol=1e-5, atol=1e-5)


def weights(*shape, seed=1, scale=0.3):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


def bn_stats(channels, seed=2):
    rng = np.random.default_rng(seed)
    return {"s": rng.uniform(0.5, 1.5, channels).astype(np.float32), "bb": weights(channels, seed=seed + 1),
            "m": weights(channels, seed=seed + 2), "v": rng.uniform(0.2, 2.0, channels).astype(np.float32)}


def conv_bn_relu(bias=True, group=1, relu=True):
    inputs = ["x", "w", "b"] if bias else ["x", "w"]
    nodes = [helper.make_node("Conv", inputs, ["c"], name="conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=group),
             helper.make_node("BatchNormalization", ["c", "s", "bb", "m", "v"], ["n"], name="bn", epsilon=1e-3)]
    if relu:
        nodes.append(helper.make_node("Relu", ["n"], ["y"], name="relu"))
    inits = {"w": weights(8, 8 // group, 3, 3), **bn_stats(8)}
    if bias:
        inits["b"] = weights(8, seed=9)
    return make_model(nodes, [("x", ["N", 8, 6, 6])], [("y" if relu else "n", None)], inits)


# --- fold_batchnorm ------------------------------------------------------------------------------

@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("group", [1, 8])
@pytest.mark.parametrize("batch", [1, 8])
def test_fold_batchnorm(bias, group, batch):
    model = conv_bn_relu(bias, group)
    check_same_results(model, {"x": rand(batch, 8, 6, 6)})
    assert ops(model) == ["Conv+Relu"]
    assert ops(model, passes={"fold_batchnorm": False}) == ["Conv", "BatchNormalization+Relu"]
    assert ops(model, passes={"fold_batchnorm": False, "fuse_batchnorm_relu": False}) == ["Conv", "BatchNormalization", "Relu"]
    assert ops(model, passes={"fuse_conv_relu": False}) == ["Conv", "Relu"]


def test_fold_batchnorm_keeps_a_shared_weight_intact():
    # Two convs share W; only the first feeds a BN. The second must still see the original W.
    model = conv_bn_relu(relu=False)
    graph = model.graph
    graph.node.append(helper.make_node("Conv", ["x", "w"], ["c2"], name="conv2", kernel_shape=[3, 3],
                                       pads=[1, 1, 1, 1]))
    graph.node.append(helper.make_node("Add", ["n", "c2"], ["y"], name="add"))
    graph.output[0].name = "y"
    check_same_results(model, {"x": rand(2, 8, 6, 6)})
    assert ops(model) == ["Conv", "Conv", "Add"]


def test_batchnorm_after_a_conv_whose_output_is_also_used_stays():
    model = conv_bn_relu(relu=False)
    model.graph.node.append(helper.make_node("Add", ["n", "c"], ["y"], name="residual"))
    model.graph.output[0].name = "y"
    check_same_results(model, {"x": rand(2, 8, 6, 6)})
    assert ops(model) == ["Conv", "BatchNormalization", "Add"]


# --- fold_conv_add -------------------------------------------------------------------------------

def conv_add(c_shape, conv_bias=False, conv_first=True, then_bn_relu=False, channels=6):
    """x -> Conv (3 -> channels filters, 3x3) -> Add(constant c of c_shape) [-> BN -> Relu] -> y."""
    conv_inputs = ["x", "w", "b"] if conv_bias else ["x", "w"]
    nodes = [helper.make_node("Conv", conv_inputs, ["c"], name="conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("Add", ["c", "k"] if conv_first else ["k", "c"], ["s"], name="plus")]
    inits = {"w": weights(channels, 3, 3, 3), "k": weights(*c_shape, seed=7)}
    if conv_bias:
        inits["b"] = weights(channels, seed=8)
    out = "s"
    if then_bn_relu:
        nodes += [helper.make_node("BatchNormalization", ["s", "bs", "bb", "m", "v"], ["n"], name="bn"),
                  helper.make_node("Relu", ["n"], ["y"], name="relu")]
        inits.update({"bs": bn_stats(channels)["s"], "bb": bn_stats(channels)["bb"], "m": bn_stats(channels)["m"],
                      "v": bn_stats(channels)["v"]})
        out = "y"
    return make_model(nodes, [("x", ["N", 3, 5, 5])], [(out, None)], inits)


@pytest.mark.parametrize("c_shape", [[6, 1, 1], [1, 6, 1, 1], [1, 1, 1], [1], []])
@pytest.mark.parametrize("conv_bias", [False, True])
@pytest.mark.parametrize("conv_first", [True, False])
def test_fold_conv_add(c_shape, conv_bias, conv_first):
    model = conv_add(c_shape, conv_bias, conv_first)
    check_same_results(model, {"x": rand(2, 3, 5, 5)})
    (row,) = dnnx.load(model).plan()
    assert row["op"] == "Conv" and row["name"] == "conv", row
    assert ops(model, passes={"fold_conv_add": False}) == ["Conv", "Add"]


def test_conv_add_bn_relu_folds_whole():
    model = conv_add([6, 1, 1], then_bn_relu=True)
    check_same_results(model, {"x": rand(2, 3, 5, 5)})
    assert ops(model) == ["Conv+Relu"]


@pytest.mark.parametrize("c_shape", [[6, 5, 5], [1, 6, 5, 1], [2, 6, 1, 1]])
def test_an_add_that_is_no_channel_bias_stays(c_shape):
    # a constant that varies over pixels, or over the batch (batch 2 here)
    model = conv_add(c_shape)
    check_same_results(model, {"x": rand(2, 3, 5, 5)})
    assert ops(model) == ["Conv", "Add"]


# --- fuse_batchnorm_relu -------------------------------------------------------------------------

def bn_relu(shape, channels_axis_size, relu=True, extra_output=False, training_mode=None):
    """x -> BatchNormalization -> Relu -> y (x of `shape`, C = shape[1])."""
    attrs = {} if training_mode is None else {"training_mode": training_mode}
    nodes = [helper.make_node("BatchNormalization", ["x", "s", "bb", "m", "v"], ["n"], name="bn", epsilon=1e-3, **attrs)]
    if relu:
        nodes.append(helper.make_node("Relu", ["n"], ["y"], name="relu"))
    dims = ["N", *shape[1:]]
    outputs = [("y" if relu else "n", dims)] + ([("n", dims)] if extra_output else [])
    return make_model(nodes, [("x", dims)], outputs, bn_stats(channels_axis_size), opset=15)


@pytest.mark.parametrize("shape", [[2, 5, 4, 6], [3, 7], [1, 6, 9], [2, 16, 3, 3]])
def test_fuse_batchnorm_relu(shape):
    # planes of several elements, of one ([N, C]: the rows form), and a width of a whole vector
    model = bn_relu(shape, shape[1])
    x = rand(*shape)
    x.flat[3] = np.nan  # Relu lets NaN through, and so must the fused layer (onnxruntime: NaN)
    check_same_results(model, {"x": x})
    (row,) = dnnx.load(model).plan()
    assert row["op"] == "BatchNormalization+Relu" and row["name"] == "bn"
    assert row["algorithm"].endswith("+relu"), row
    got = dnnx.load(model).run(x)
    assert np.isnan(got.flat[3]) and (np.nan_to_num(got) >= 0).all()
    assert ops(model, passes={"fuse_batchnorm_relu": False}) == ["BatchNormalization", "Relu"]


def test_batchnorm_whose_output_is_also_read_is_not_fused_with_its_relu():
    model = bn_relu([2, 4, 3, 3], 4, extra_output=True)
    check_same_results(model, {"x": rand(2, 4, 3, 3)})
    assert ops(model) == ["BatchNormalization", "Relu"]


def test_training_mode_batchnorm_is_not_fused_with_its_relu():
    model = bn_relu([4, 3, 2, 2], 3, training_mode=1)
    assert ops(model) == ["BatchNormalization", "Relu"]
    x = rand(4, 3, 2, 2)
    got = dnnx.load(model).run(x)
    mean, var = x.mean(axis=(0, 2, 3), keepdims=True), x.var(axis=(0, 2, 3), keepdims=True)
    stats = bn_stats(3)
    want = (x - mean) / np.sqrt(var + 1e-3) * stats["s"].reshape(1, 3, 1, 1) + stats["bb"].reshape(1, 3, 1, 1)
    np.testing.assert_allclose(got, np.maximum(want, 0), rtol=1e-4, atol=1e-5)


# DenseNet's layer (Concat -> BN -> Relu -> Conv) channels-last: test_conv_channels_last_cpu.py


# --- fuse_conv_relu ------------------------------------------------------------------------------

@pytest.mark.parametrize("kernel", [1, 3])
def test_fuse_conv_relu(kernel):
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", kernel_shape=[kernel, kernel]),
             helper.make_node("Relu", ["c"], ["y"], name="relu")]
    model = make_model(nodes, [("x", ["N", 4, 7, 7])], [("y", None)],
                       {"w": weights(6, 4, kernel, kernel), "b": weights(6, seed=3)})
    for batch in (1, 8):
        check_same_results(model, {"x": rand(batch, 4, 7, 7)})
    (row,) = dnnx.load(model).plan()
    assert row["op"] == "Conv+Relu" and row["name"] == "conv"
    assert row["algorithm"] == ("gemm(1x1)" if kernel == 1 else "direct")  # rows of 5: 5 of 8 lanes
    assert ops(model, passes={"fuse_conv_relu": False}) == ["Conv", "Relu"]


def test_conv_whose_output_is_a_graph_output_is_not_fused():
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[1, 1]), helper.make_node("Relu", ["c"], ["y"])]
    model = make_model(nodes, [("x", [1, 2, 3, 3])], [("c", None), ("y", None)], {"w": weights(2, 2, 1, 1)})
    check_same_results(model, {"x": rand(1, 2, 3, 3)})
    assert ops(model) == ["Conv", "Relu"]


# --- fuse_conv_add_relu (more in test_conv_add_relu.py) ---------------------------------------------

def conv_bn_add_relu(z_first=False):
    """Conv -> BN -> Add(x) -> Relu: a ResNet identity join; the BN folds first, then the rest fuses."""
    model = conv_bn_relu(relu=False)
    model.graph.node.append(helper.make_node("Add", ["x", "n"] if z_first else ["n", "x"], ["sum"], name="add"))
    model.graph.node.append(helper.make_node("Relu", ["sum"], ["y"], name="relu"))
    model.graph.output[0].name = "y"
    return model


@pytest.mark.parametrize("z_first", [False, True])
@pytest.mark.parametrize("batch", [1, 8])
def test_fuse_conv_add_relu_on_the_cpu(z_first, batch):
    model = conv_bn_add_relu(z_first)
    check_same_results(model, {"x": rand(batch, 8, 6, 6)})
    (row,) = dnnx.load(model).plan()
    assert (row["op"], row["name"]) == ("Conv+Add+Relu", "conv")
    assert ops(model, passes={"fuse_conv_add_relu": False}) == ["Conv", "Add", "Relu"]
    assert ops(model, passes={"fold_batchnorm": False}) == ["Conv", "BatchNormalization", "Add", "Relu"]


def test_conv_relu_then_add_relu_is_not_fused_again():
    # Conv -> Relu -> Add -> Relu: fuse_conv_relu takes the first pair; the join stays apart
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"], name="relu_c"),
             helper.make_node("Add", ["r", "x"], ["s"], name="add"),
             helper.make_node("Relu", ["s"], ["y"], name="relu")]
    model = make_model(nodes, [("x", ["N", 4, 5, 5])], [("y", None)], {"w": weights(4, 4, 3, 3)})
    check_same_results(model, {"x": rand(2, 4, 5, 5)})
    assert ops(model) == ["Conv+Relu", "Add", "Relu"]


# --- fuse_gemm_relu and fuse_matmul_add ----------------------------------------------------------

def test_fuse_gemm_relu():
    nodes = [helper.make_node("Gemm", ["x", "w", "b"], ["g"], name="fc", transB=1, alpha=0.5),
             helper.make_node("Relu", ["g"], ["y"], name="relu")]
    model = make_model(nodes, [("x", ["N", 6])], [("y", None)], {"w": weights(5, 6), "b": weights(5, seed=4)})
    for batch in (1, 8):
        check_same_results(model, {"x": rand(batch, 6)})
    assert ops(model) == ["Gemm+Relu"]
    assert ops(model, passes={"fuse_gemm_relu": False}) == ["Gemm", "Relu"]


def matmul_add(bias_shape, a_shape=("N", 6), bias_first=False, relu=False):
    add_inputs = ["bias", "mm"] if bias_first else ["mm", "bias"]
    nodes = [helper.make_node("MatMul", ["x", "w"], ["mm"], name="matmul"),
             helper.make_node("Add", add_inputs, ["y" if not relu else "z"], name="add")]
    if relu:
        nodes.append(helper.make_node("Relu", ["z"], ["y"], name="relu"))
    inits = {"w": weights(6, 5), "bias": weights(*bias_shape, seed=5)}
    return make_model(nodes, [("x", list(a_shape))], [("y", None)], inits)


@pytest.mark.parametrize("bias_shape", [[5], [1, 5], [1], []])
@pytest.mark.parametrize("bias_first", [False, True])
def test_fuse_matmul_add(bias_shape, bias_first):
    model = matmul_add(bias_shape, bias_first=bias_first)
    for batch in (1, 8):
        check_same_results(model, {"x": rand(batch, 6)})
    (row,) = dnnx.load(model).plan()
    assert row["op"] == "Gemm" and row["name"] == "matmul"
    assert ops(model, passes={"fuse_matmul_add": False}) == ["MatMul", "Add"]


def test_matmul_add_then_relu_becomes_one_gemm_relu():
    model = matmul_add([5], relu=True)
    check_same_results(model, {"x": rand(4, 6)})
    assert ops(model) == ["Gemm+Relu"]
    assert ops(model, **ALL_OFF) == ["MatMul", "Add", "Relu"]


@pytest.mark.parametrize("a_shape", [[2, 3, 6], ["N", 3, 6], ["N", 4, 3, 6], [1, 1, 6]])
def test_matmul_add_over_rows_of_a_higher_rank_a(a_shape):
    """Note [rows of a matmul]: A [d0, ..., K] with every dim but d0 known runs as one Gemm over
    its rows between two Reshapes (views); the results are those of MatMul and Add."""
    model = matmul_add([5], a_shape=a_shape, relu=True)
    for batch in (1, 5):
        check_same_results(model, {"x": rand(*[batch if d == "N" else d for d in a_shape])})
    rows = dnnx.load(model, batch_size=None).plan() if "N" in a_shape else dnnx.load(model).plan()
    assert [r["op"] for r in rows] == ["Reshape", "Gemm", "Reshape", "Relu"], rows
    assert rows[1]["inputs"][0] == [int(np.prod([1 if d == "N" else d for d in a_shape[:-1]])), 6], rows[1]
    assert rows[2]["outputs"][0] == [1 if d == "N" else d for d in a_shape[:-1]] + [5], rows[2]
    assert ops(model, passes={"fuse_matmul_add": False}) == ["MatMul", "Add", "Relu"]


@pytest.mark.parametrize("bias_shape,a_shape", [
    ([5], [2, "S", 6]),   # an inner dim symbolic: the rows' count is unknown at load, no Gemm
    ([4, 5], [4, 6]),     # a bias per row: not broadcastable to [N]
    ([3, 1, 5], [4, 6]),  # the bias grows the result to [3, 4, 5]
])
def test_matmul_add_that_is_no_gemm_stays(bias_shape, a_shape):
    model = matmul_add(bias_shape, a_shape=a_shape)
    check_same_results(model, {"x": rand(*[3 if d == "S" else d for d in a_shape])})
    assert ops(model) == ["MatMul", "Add"]


# --- switches ------------------------------------------------------------------------------------

def test_pass_switches():
    model = conv_bn_relu()
    assert dnnx.load(model).passes == {"fuse_qdq_int8": True, "fold_conv_add": True, "fold_batchnorm": True,
                                       "fuse_batchnorm_relu": True,
                                       "fuse_matmul_add": True, "fuse_conv_relu": True,
                                       "fuse_conv_activation": True, "fuse_gemm_relu": True, "fuse_gemm_softmax": True, "fuse_conv_add_relu": True,
                                       "fuse_conv_pool": True, "fuse_lstm_stack": True, "fuse_gelu": True, "channels_last": True,
                                       "fold_entry_cast": True}
    assert set(dnnx.load(model, optimize=False).passes.values()) == {False}
    only_fold = dnnx.load(model, optimize=False, passes={"fold_batchnorm": True})
    assert [row["op"] for row in only_fold.plan()] == ["Conv", "Relu"]
    with pytest.raises(ValueError, match="unknown pass 'fold_bn'.*fold_batchnorm"):
        dnnx.load(model, passes={"fold_bn": False})
    with pytest.raises(ValueError, match="must be True or False"):
        dnnx.load(model, passes={"fold_batchnorm": 0})


def test_conv_pool_and_gemm_softmax_stay_two_layers_on_the_cpu():
    # fuse_conv_pool and fuse_gemm_softmax fire only where the backend has the fused kernel (CUDA);
    # the CPU keeps the pairs
    ops = [row["op"] for row in dnnx.load(build("lenet")).plan()]
    assert ops[:4] == ["Conv", "MaxPool", "Conv", "MaxPool"], ops
    assert ops[-2:] == ["Gemm", "Softmax"], ops


def test_fused_ops_are_not_listed_as_supported():
    supported = dnnx.supported_ops()
    assert "Conv" in supported and not [op for op in supported if "+" in op or "@" in op]


def test_pass_names_in_run_order():
    assert dnnx.pass_names() == ["fuse_qdq_int8", "fold_conv_add", "fold_batchnorm", "fuse_batchnorm_relu", "fuse_matmul_add", "fuse_conv_relu", "fuse_conv_activation", "fuse_gemm_relu",
                                 "fuse_gemm_softmax", "fuse_conv_add_relu", "fuse_conv_pool", "fuse_lstm_stack",
                                 "fuse_gelu", "channels_last", "fold_entry_cast"]
