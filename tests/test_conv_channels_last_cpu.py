"""The CPU's channels-last convs and pools (engine/backends/cpu/conv/conv_nhwc_cpu.cc, Note
[channels-last conv on the cpu]; pool/pool_nhwc_cpu.cc) and the pass forms that keep a region
channels-last (Note [channels-last forms] in runtime/passes/channels_last.cc), against
onnxruntime at the project's fp32 tolerance (rtol 1e-4, atol 1e-5: tests/ort_check.py).

Each case checks that the layer under test did run channels-last (its plan row is "<op>@NHWC"),
so a change that sends it back to the NCHW kernels fails here rather than passing unnoticed.
DNNX_CONV_NHWC_MIN_CHANNELS=0 keeps every region channels-last (the default rule, 16, keeps the
narrow ones in ONNX's layout). The AVX2 tiles (the default without AVX-512) and the portable
ones (neither) run in child processes with DNNX_CONV_NHWC=avx2 and =portable, and
DNNX_CONV_NHWC=off turns the path off."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper

import dnnx
from dnnx.threads import blas_core_name, get_num_threads, set_num_threads
from ort_check import assert_matches_ort, make_model, rand, run_ort
from residual_models import weights
from channel_models import mean_gate, shuffle_unit
from thread_check import assert_same_bits_on_one_and_two_threads

pytestmark = pytest.mark.skipif(blas_core_name() == "unknown", reason="no CPU backend")

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def every_region(monkeypatch):
    monkeypatch.setenv("DNNX_CONV_NHWC_MIN_CHANNELS", "0")
    before = get_num_threads()
    yield
    set_num_threads(before)


def out_size(size, k, s, d, p0, p1):
    return (size + p0 + p1 - ((k - 1) * d + 1)) // s + 1


def conv_model(x_shape, k_out, kernel, strides=(1, 1), pads=(0, 0, 0, 0), dilations=(1, 1), group=1, bias=True,
               fuse=None, seed=1, weight_input=False):
    """One 2-D Conv (then the fused op's pattern: relu, add_relu, relu6, hardswish, silu)."""
    n, c, h, w = x_shape
    kh, kw = (kernel, kernel) if isinstance(kernel, int) else kernel
    attrs = dict(kernel_shape=[kh, kw], strides=list(strides), pads=list(pads), dilations=list(dilations), group=group)
    inits = {}
    inputs = [("x", list(x_shape))]
    if weight_input:
        inputs.append(("w", [k_out, c // group, kh, kw]))
    else:
        inits["w"] = weights(k_out, c // group, kh, kw, seed=seed)
    conv_in = ["x", "w"]
    if bias:
        inits["b"] = rand(k_out, seed=seed + 1)
        conv_in.append("b")
    oh = out_size(h, kh, strides[0], dilations[0], pads[0], pads[2])
    ow = out_size(w, kw, strides[1], dilations[1], pads[1], pads[3])
    nodes = [helper.make_node("Conv", conv_in, ["c" if fuse else "y"], name="conv", **attrs)]
    append_fused_tail(fuse, nodes, inputs, inits, [n, k_out, oh, ow])
    return make_model(nodes, inputs, [("y", None)], inits)


def append_fused_tail(fuse, nodes, inputs, inits, out_shape):
    """The nodes after a Conv writing "c" that a fusion pass folds into it, ending at "y": relu,
    add_relu (a residual input "z" of out_shape), relu6, hardswish or silu; None adds nothing."""
    if fuse == "relu":
        nodes.append(helper.make_node("Relu", ["c"], ["y"]))
    elif fuse == "add_relu":
        inputs.append(("z", list(out_shape)))
        nodes += [helper.make_node("Add", ["c", "z"], ["s"]), helper.make_node("Relu", ["s"], ["y"])]
    elif fuse == "relu6":
        inits["lo"], inits["hi"] = np.array(0, np.float32), np.array(6, np.float32)
        nodes.append(helper.make_node("Clip", ["c", "lo", "hi"], ["y"]))
    elif fuse == "hardswish":
        nodes.append(helper.make_node("HardSwish", ["c"], ["y"]))
    elif fuse == "silu":
        nodes += [helper.make_node("Sigmoid", ["c"], ["g"]), helper.make_node("Mul", ["c", "g"], ["y"])]


def channels_last_on() -> bool:
    """Whether this process's CPU backend runs convs channels-last (AVX-512 or AVX2, or forced)."""
    m = dnnx.load(conv_model([1, 32, 6, 6], 32, 1))
    return any(row["op"].endswith("@NHWC") for row in m.plan())


needs_nhwc = pytest.mark.skipif(not channels_last_on(), reason="channels-last CPU path off (no AVX-512 or AVX2)")


def feeds_for(model, seed=3):
    feeds = {}
    for i, vi in enumerate(model.graph.input):
        shape = [d.dim_value for d in vi.type.tensor_type.shape.dim]
        feeds[vi.name] = rand(*shape, seed=seed + i)
    return feeds


def plan_ops(model, **kwargs):
    return [row["op"] for row in dnnx.load(model, **kwargs).plan()]


def check(model, layer_op, feeds=None, **kwargs):
    """dnnx against onnxruntime, with `layer_op` (e.g. "Conv+Relu@NHWC") among the plan's rows."""
    feeds = feeds or feeds_for(model)
    ops = plan_ops(model, **kwargs)
    assert layer_op in ops, ops
    return assert_matches_ort(model, feeds, **kwargs)


# (x shape, filters, kernel, strides, pads, dilations, group): pointwise and windowed, filter
# counts on and off the 16-wide tile columns (K tails), channel counts past the channel blocks,
# padding on every side, asymmetric, strides, dilations, non-square, batch 2 and groups.
DENSE = [
    ([1, 16, 9, 9], 16, 1, (1, 1), (0, 0, 0, 0), (1, 1), 1),
    ([2, 24, 7, 5], 40, 1, (1, 1), (0, 0, 0, 0), (1, 1), 1),
    ([1, 3, 17, 17], 32, 3, (2, 2), (1, 1, 1, 1), (1, 1), 1),
    ([1, 32, 8, 8], 5, 3, (1, 1), (1, 1, 1, 1), (1, 1), 1),
    ([1, 17, 10, 12], 100, 3, (1, 1), (0, 2, 1, 0), (1, 1), 1),
    ([1, 64, 12, 12], 64, 3, (1, 1), (2, 2, 2, 2), (2, 2), 1),
    ([1, 20, 11, 11], 24, 5, (2, 1), (2, 2, 2, 2), (1, 1), 1),
    ([2, 8, 15, 15], 16, 7, (2, 2), (3, 3, 3, 3), (1, 1), 1),
    ([1, 300, 6, 6], 70, 1, (1, 1), (0, 0, 0, 0), (1, 1), 1),
    ([1, 48, 14, 14], 128, 1, (2, 2), (0, 0, 0, 0), (1, 1), 1),
    ([1, 32, 9, 9], 64, 3, (1, 1), (1, 1, 1, 1), (1, 1), 4),
    ([1, 16, 8, 8], 48, 3, (1, 1), (1, 1, 1, 1), (1, 1), 16),
    ([1, 4, 40, 50], 16, (11, 11), (2, 1), (5, 5, 5, 5), (1, 1), 1),
    ([1, 3, 30, 30], 64, 7, (2, 2), (3, 3, 3, 3), (1, 1), 1),  # a stem: gathered rows
    ([2, 5, 12, 12], 24, 5, (1, 1), (2, 1, 2, 1), (2, 1), 1),  # gathered, dilated (one copy per tap)
    ([2, 3, 45, 47], 64, 7, (2, 2), (3, 2, 1, 3), (1, 1), 1),  # gathered, interior runs (Note [interior gather])
    ([1, 4, 19, 40], 20, (5, 6), (1, 3), (0, 0, 0, 0), (1, 1), 1),  # gathered, no padding: every pixel interior
    ([1, 3, 40, 64], 16, 3, (2, 2), (1, 1, 1, 1), (1, 1), 1),  # a 3x3 stem: strips inside X, stepped
    ([2, 8, 9, 50], 24, 3, (1, 3), (1, 2, 1, 0), (1, 2), 1),  # strips inside X, dilated and strided along W
]


@needs_nhwc
@pytest.mark.parametrize("x_shape,k,kernel,strides,pads,dilations,group", DENSE)
def test_dense_conv_matches_ort(x_shape, k, kernel, strides, pads, dilations, group):
    check(conv_model(x_shape, k, kernel, strides, pads, dilations, group), "Conv@NHWC")


DEPTHWISE = [
    ([1, 32, 14, 14], 3, (1, 1), (1, 1, 1, 1), (1, 1)),
    ([1, 96, 15, 15], 3, (2, 2), (1, 1, 1, 1), (1, 1)),
    ([2, 17, 9, 11], 3, (1, 1), (1, 1, 1, 1), (1, 1)),
    ([1, 144, 7, 7], 5, (1, 1), (2, 2, 2, 2), (1, 1)),
    ([1, 70, 12, 12], 7, (1, 1), (3, 3, 3, 3), (1, 1)),
    ([1, 40, 10, 10], 3, (1, 1), (2, 2, 2, 2), (2, 2)),
    ([1, 24, 8, 9], 3, (2, 1), (0, 1, 2, 0), (1, 1)),
    ([1, 200, 5, 5], 3, (1, 1), (0, 0, 0, 0), (1, 1)),
    ([1, 16, 3, 3], 5, (1, 1), (2, 2, 2, 2), (1, 1)),
]


@needs_nhwc
@pytest.mark.parametrize("x_shape,kernel,strides,pads,dilations", DEPTHWISE)
def test_depthwise_conv_matches_ort(x_shape, kernel, strides, pads, dilations):
    c = x_shape[1]
    check(conv_model(x_shape, c, kernel, strides, pads, dilations, group=c), "Conv@NHWC")


# Note [depthwise column walk]: rows of at least 8 interior pixels at 3x3, 5x5 and 7x7, stride 1
# and 2, channel counts off the 16-lane vectors (a masked last vector), each fusion's epilogue
# (the residual of Conv+Add+Relu included), batch 2; then the 7x7 plane whose 5 interior pixels
# stay on the strips.
WALK = [
    ([1, 40, 23, 23], 3, (1, 1), (1, 1, 1, 1), "relu6", "Conv+Clip@NHWC"),
    ([2, 24, 29, 30], 3, (2, 2), (1, 1, 1, 1), "add_relu", "Conv+Add+Relu@NHWC"),
    ([1, 72, 31, 31], 5, (1, 1), (2, 2, 2, 2), "silu", "Conv+Swish@NHWC"),
    ([1, 36, 40, 41], 5, (2, 2), (2, 2, 2, 2), None, "Conv@NHWC"),
    ([1, 17, 37, 37], 7, (1, 1), (3, 3, 3, 3), "hardswish", "Conv+HardSwish@NHWC"),
    ([1, 96, 7, 7], 3, (1, 1), (1, 1, 1, 1), "relu6", "Conv+Clip@NHWC"),
    # Note [depthwise row walk]: the 7- and 14-pixel rows walked whole, stride 1 and 2
    ([1, 33, 7, 7], 5, (1, 1), (2, 2, 2, 2), "relu6", "Conv+Clip@NHWC"),
    ([1, 40, 14, 14], 5, (1, 1), (2, 2, 2, 2), "silu", "Conv+Swish@NHWC"),
    ([1, 17, 14, 14], 3, (1, 1), (1, 1, 1, 1), "hardswish", "Conv+HardSwish@NHWC"),
    ([2, 24, 14, 14], 3, (2, 2), (1, 1, 1, 1), "add_relu", "Conv+Add+Relu@NHWC"),
    ([1, 20, 14, 14], 5, (2, 2), (2, 2, 2, 2), None, "Conv@NHWC"),
    # and the longer rows' edge strips: no left padding, 3 columns of it, a right edge past X
    ([1, 32, 20, 21], 3, (2, 2), (0, 0, 1, 1), None, "Conv@NHWC"),
    ([1, 16, 20, 20], 7, (1, 1), (3, 3, 3, 3), "relu6", "Conv+Clip@NHWC"),
    ([1, 48, 18, 16], 5, (1, 1), (2, 1, 2, 3), "add_relu", "Conv+Add+Relu@NHWC"),
]


@needs_nhwc
@pytest.mark.parametrize("x_shape,kernel,strides,pads,fuse,op", WALK)
def test_depthwise_walk_matches_ort_on_one_and_two_threads(x_shape, kernel, strides, pads, fuse, op):
    c = x_shape[1]
    model = conv_model(x_shape, c, kernel, strides, pads, group=c, fuse=fuse)
    feeds = feeds_for(model)
    feeds["x"] *= 4  # past Clip's 6 and HardSwish's +-3
    check(model, op, feeds)
    assert_same_bits_on_one_and_two_threads(
        model, feeds, check=lambda m: assert_plan_has(m, lambda row: "nhwc depthwise" in row["algorithm"]))


@needs_nhwc
def test_depthwise_with_channel_multiplier_runs_as_groups():
    check(conv_model([1, 8, 9, 9], 16, 3, pads=(1, 1, 1, 1), group=8), "Conv@NHWC")


@needs_nhwc
@pytest.mark.parametrize("fuse,op", [("relu", "Conv+Relu@NHWC"), ("add_relu", "Conv+Add+Relu@NHWC"),
                                     ("relu6", "Conv+Clip@NHWC"), ("hardswish", "Conv+HardSwish@NHWC"),
                                     ("silu", "Conv+Swish@NHWC")])
@pytest.mark.parametrize("group", [1, 24])
def test_fused_conv_matches_ort(fuse, op, group):
    model = conv_model([1, 24, 10, 10], 24, 3, pads=(1, 1, 1, 1), group=group, fuse=fuse)
    feeds = feeds_for(model)
    feeds["x"] *= 4  # values past Clip's 6 and HardSwish's +-3
    check(model, op, feeds)


@needs_nhwc
@pytest.mark.parametrize("bias", [True, False])
def test_filter_as_a_graph_input_is_packed_per_call(bias):
    model = conv_model([1, 16, 8, 8], 32, 3, pads=(1, 1, 1, 1), bias=bias, weight_input=True)
    check(model, "Conv@NHWC")
    dw = conv_model([1, 16, 8, 8], 16, 3, pads=(1, 1, 1, 1), group=16, bias=bias, weight_input=True)
    check(dw, "Conv@NHWC")



def assert_plan_has(m, wanted) -> None:
    """Some row of ``m``'s plan is ``wanted`` (a predicate on a plan row)."""
    assert any(wanted(row) for row in m.plan()), [(row["op"], row["algorithm"]) for row in m.plan()]


@needs_nhwc
@pytest.mark.parametrize("group", [1, 32])
def test_same_bits_on_one_and_two_threads(group):
    model = conv_model([2, 32, 23, 23], 32, 3, pads=(1, 1, 1, 1), group=group, fuse="relu6")
    assert_same_bits_on_one_and_two_threads(
        model, feeds_for(model), check=lambda m: assert_plan_has(m, lambda row: row["op"] == "Conv+Clip@NHWC"))


@needs_nhwc
@pytest.mark.parametrize("x_shape,k,kernel,pads,dilations", [
    ([1, 64, 28, 28], 64, 3, (2, 2, 2, 2), (2, 2)),  # 131 strips: 5 items rounded to 6 (Note [item rounds])
    ([1, 32, 55, 57], 48, 1, (0, 0, 0, 0), (1, 1)),  # 392 strips of 8
])
def test_item_rounds_same_bits_on_one_and_two_threads(x_shape, k, kernel, pads, dilations):
    model = conv_model(x_shape, k, kernel, pads=pads, dilations=dilations, fuse="relu")
    feeds = feeds_for(model)
    assert_same_bits_on_one_and_two_threads(
        model, feeds, check=lambda m: assert_plan_has(m, lambda row: "packed gemm" in row["algorithm"]))
    assert_matches_ort(model, feeds)


@needs_nhwc
def test_gathered_stem_same_bits_on_one_and_two_threads():
    # Note [interior gather]: interior runs split across strips, items and images
    model = conv_model([2, 3, 61, 58], 64, 7, strides=(2, 2), pads=(3, 3, 3, 3), fuse="relu")
    assert_same_bits_on_one_and_two_threads(
        model, feeds_for(model), check=lambda m: assert_plan_has(m, lambda row: "gathered" in row["algorithm"]))


@needs_nhwc
def test_empty_batch_runs():
    model = conv_model([1, 16, 8, 8], 16, 3, pads=(1, 1, 1, 1))
    m = dnnx.load(model, batch_size=0)
    y = m.run(np.zeros((0, 16, 8, 8), np.float32))
    assert y.shape == (0, 16, 8, 8)


def pool_model(op, x_shape, **attrs):
    """A wide 1x1 conv (so the region is channels-last) then the pool."""
    c = x_shape[1]
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[1, 1]),
             helper.make_node(op, ["c"], ["y"], **attrs)]
    return make_model(nodes, [("x", list(x_shape))], [("y", None)], {"w": weights(c, c, 1, 1, seed=2)})


POOLS = [
    ("MaxPool", dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])),
    ("MaxPool", dict(kernel_shape=[2, 2], strides=[2, 2])),
    ("MaxPool", dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)),
    ("MaxPool", dict(kernel_shape=[3, 2], dilations=[2, 1], pads=[0, 1, 2, 0])),
    ("AveragePool", dict(kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1])),
    ("AveragePool", dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=1)),
    ("AveragePool", dict(kernel_shape=[2, 3], strides=[2, 2], ceil_mode=1)),
    ("GlobalAveragePool", {}),
]


@needs_nhwc
@pytest.mark.parametrize("op,attrs", POOLS)
@pytest.mark.parametrize("x_shape", [[1, 16, 9, 9], [2, 37, 8, 11]])
def test_pools_match_ort(op, attrs, x_shape):
    check(pool_model(op, x_shape, **attrs), op + "@NHWC")


@needs_nhwc
def test_max_pool_rows_keep_the_per_tap_order_with_nans():
    """Note [nhwc max pool rows]: the running max of each output from -inf, tap by tap in window
    order, std::max(acc, x): a NaN never wins, so a window of NaNs gives -inf."""
    c, size = 37, 9
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[1, 1]),
             helper.make_node("MaxPool", ["c"], ["y"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])]
    eye = np.eye(c, dtype=np.float32).reshape(c, c, 1, 1)  # the conv passes x through (NaN pixels stay NaN)
    model = make_model(nodes, [("x", [1, c, size, size])], [("y", None)], {"w": eye})
    assert "MaxPool@NHWC" in plan_ops(model)
    rng = np.random.default_rng(5)
    x = (rng.uniform(0.5, 2.0, (1, c, size, size)) * rng.choice([-1, 1], (1, c, size, size))).astype(np.float32)
    x[0, :, rng.integers(0, size, 12), rng.integers(0, size, 12)] = np.nan
    x[0, :, 0:2, 0:2] = np.nan  # the first window all NaN
    got = dnnx.load(model).run(x)
    want = np.full((1, c, 5, 5), -np.inf, np.float32)
    for oh in range(5):
        for ow in range(5):
            for kh in range(3):
                for kw in range(3):
                    ih, iw = 2 * oh - 1 + kh, 2 * ow - 1 + kw
                    if 0 <= ih < size and 0 <= iw < size:
                        v = x[0, :, ih, iw]
                        want[0, :, oh, ow] = np.where(want[0, :, oh, ow] < v, v, want[0, :, oh, ow])
    np.testing.assert_array_equal(got.view(np.int32), want.view(np.int32))


# --- the pass's forms (Note [channels-last forms]) --------------------------------------------------

def transposes(model):
    return sum(op == "Transpose" for op in plan_ops(model))


@needs_nhwc
def test_squeeze_excitation_gate_stays_channels_last():
    """GlobalAveragePool -> 1x1 convs -> HardSigmoid -> Mul([N, C, H, W], [N, C, 1, 1]): one
    Transpose in and one out, none around the gate."""
    c, r = 32, 8
    nodes = [helper.make_node("Conv", ["x", "w0"], ["a"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("GlobalAveragePool", ["a"], ["p"]),
             helper.make_node("Conv", ["p", "w1"], ["q"], kernel_shape=[1, 1]),
             helper.make_node("Relu", ["q"], ["q1"]),
             helper.make_node("Conv", ["q1", "w2"], ["g0"], kernel_shape=[1, 1]),
             helper.make_node("HardSigmoid", ["g0"], ["g"]),
             helper.make_node("Mul", ["a", "g"], ["y"])]
    model = make_model(nodes, [("x", [2, c, 7, 7])], [("y", None)],
                       {"w0": weights(c, c, 3, 3, seed=1), "w1": weights(r, c, 1, 1, seed=2),
                        "w2": weights(c, r, 1, 1, seed=3)})
    check(model, "GlobalAveragePool@NHWC")
    assert transposes(model) == 2
    assert "Mul" in plan_ops(model)


@needs_nhwc
def test_per_channel_and_scalar_constants_are_permuted():
    """An unfolded BatchNormalization as Mul and Add by [C, 1, 1] constants, a scalar Mul, PRelu."""
    c = 24
    nodes = [helper.make_node("Conv", ["x", "w"], ["a"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("Mul", ["a", "scale"], ["b"]),
             helper.make_node("Add", ["b", "shift"], ["d"]),
             helper.make_node("Mul", ["d", "half"], ["e"]),
             helper.make_node("PRelu", ["e", "slope"], ["f"]),
             helper.make_node("Conv", ["f", "w2"], ["y"], kernel_shape=[1, 1])]
    model = make_model(nodes, [("x", [1, c, 9, 9])], [("y", None)],
                       {"w": weights(c, c, 3, 3, seed=1), "w2": weights(c, c, 1, 1, seed=2),
                        "scale": rand(c, 1, 1, seed=3), "shift": rand(c, 1, 1, seed=4),
                        "half": np.array(0.5, np.float32), "slope": rand(c, 1, 1, seed=5) * 0.1})
    check(model, "Conv@NHWC")
    assert transposes(model) == 2


@needs_nhwc
def test_channel_concat_and_split_run_on_axis_3():
    c = 16
    nodes = [helper.make_node("Conv", ["x", "w0"], ["a"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["x", "w1"], ["b"], kernel_shape=[1, 1]),
             helper.make_node("Concat", ["a", "b", "x"], ["cat"], axis=1),
             helper.make_node("Conv", ["cat", "w2"], ["d"], kernel_shape=[1, 1]),
             helper.make_node("Split", ["d"], ["s0", "s1"], axis=1),
             helper.make_node("Conv", ["s0", "w3"], ["y0"], kernel_shape=[1, 1]),
             helper.make_node("Relu", ["s1"], ["y1"])]
    model = make_model(nodes, [("x", [1, c, 6, 6])], [("y0", None), ("y1", None)],
                       {"w0": weights(c, c, 3, 3, seed=1), "w1": weights(c, c, 1, 1, seed=2),
                        "w2": weights(32, 3 * c, 1, 1, seed=3), "w3": weights(c, c, 1, 1, seed=4)}, opset=17)
    check(model, "Conv@NHWC")
    # one Transpose of x in, one out for each output
    assert transposes(model) == 3


@needs_nhwc
def test_convnext_style_transposes_become_views():
    """depthwise conv -> Transpose(0,2,3,1) -> LayerNormalization -> MatMul -> Transpose(0,3,1,2)
    -> Mul by a [C, 1, 1] scale -> Add the block input: no copy is left inside the block."""
    c = 32
    nodes = [helper.make_node("Conv", ["x", "wp"], ["x0"], kernel_shape=[1, 1]),
             helper.make_node("Conv", ["x0", "wd", "bd"], ["a"], kernel_shape=[7, 7], pads=[3, 3, 3, 3], group=c),
             helper.make_node("Transpose", ["a"], ["t"], perm=[0, 2, 3, 1]),
             helper.make_node("LayerNormalization", ["t", "ln_s", "ln_b"], ["n"], axis=-1),
             helper.make_node("MatMul", ["n", "m"], ["h"]),
             helper.make_node("Transpose", ["h"], ["u"], perm=[0, 3, 1, 2]),
             helper.make_node("Mul", ["u", "gamma"], ["v"]),
             helper.make_node("Add", ["v", "x0"], ["y"])]
    model = make_model(nodes, [("x", [1, c, 8, 8])], [("y", None)],
                       {"wp": weights(c, c, 1, 1, seed=1), "wd": weights(c, 1, 7, 7, seed=2), "bd": rand(c, seed=3),
                        "ln_s": 1 + 0.1 * rand(c, seed=4), "ln_b": rand(c, seed=5), "m": weights(c, c, seed=6),
                        "gamma": rand(c, 1, 1, seed=7)})
    check(model, "Conv@NHWC")
    ops = plan_ops(model)
    assert ops.count("Transpose") == 2, ops  # x in, y out
    assert ops.count("Identity") == 2, ops


@needs_nhwc
def test_float64_convs_keep_onnx_layout():
    nodes = [helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])]
    model = make_model(nodes, [("x", [1, 16, 6, 6], TensorProto.DOUBLE)], [("y", None, TensorProto.DOUBLE)],
                       {"w": weights(16, 16, 3, 3, seed=1).astype(np.float64)})
    assert "Conv" in plan_ops(model) and not any(op.endswith("@NHWC") for op in plan_ops(model))


@needs_nhwc
def test_the_pass_switch_keeps_the_nchw_kernels():
    model = conv_model([1, 16, 8, 8], 16, 3, pads=(1, 1, 1, 1))
    assert plan_ops(model, passes={"channels_last": False}) == ["Conv"]


def test_default_rule_keeps_narrow_regions_in_onnx_layout(monkeypatch):
    """LeNet-sized convs (1 -> 6 -> 16 channels) stay on the NCHW kernels under the default rule."""
    monkeypatch.delenv("DNNX_CONV_NHWC_MIN_CHANNELS")
    nodes = [helper.make_node("Conv", ["x", "w0"], ["a"], kernel_shape=[5, 5]),
             helper.make_node("Relu", ["a"], ["b"]),
             helper.make_node("Conv", ["b", "w1"], ["y"], kernel_shape=[5, 5])]
    model = make_model(nodes, [("x", [1, 1, 28, 28])], [("y", None)],
                       {"w0": weights(6, 1, 5, 5, seed=1), "w1": weights(16, 6, 5, 5, seed=2)})
    ops = plan_ops(model)
    assert "Conv+Relu" in ops and not any(op.endswith("@NHWC") for op in ops), ops


# --- the AVX2 and portable tiles and the off switch, in child processes ----------------------------

CHILD = r"""
import sys, numpy as np
sys.path.insert(0, {tests!r})
import test_conv_channels_last_cpu as t
from ort_check import assert_matches_ort
extra = [([1, 24, 9, 9], 24, 3, (1, 1), (1, 1, 1, 1), (1, 1), 24),  # depthwise
         ([1, 16, 12, 12], 16, 3, (1, 1), (1, 1, 1, 1), (1, 1), 1)]  # winograd
for shape, k, kernel, strides, pads, dil, group in t.DENSE[:6] + extra:
    model = t.conv_model(shape, k, kernel, strides, pads, dil, group, fuse="relu")
    ops = t.plan_ops(model)
    print("ops", ops)
    print("algorithms", [row["algorithm"] for row in t.dnnx.load(model).plan()])
    assert_matches_ort(model, t.feeds_for(model))
print("ok")
"""


def cpu_has_avx2() -> bool:
    flags = open("/proc/cpuinfo").read() if os.path.exists("/proc/cpuinfo") else ""
    return " avx2" in flags and " fma" in flags


@pytest.mark.parametrize("mode", ["avx2", "portable", "off"])
def test_avx2_and_portable_tiles_and_off_switch_in_a_child(mode):
    env = dict(os.environ, DNNX_CONV_NHWC=mode, DNNX_CONV_NHWC_MIN_CHANNELS="0")
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "tests"), env.get("PYTHONPATH", "")])
    out = subprocess.run([sys.executable, "-c", CHILD.format(tests=str(REPO / "tests"))], env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    assert out.stdout.strip().endswith("ok")
    nhwc = "Conv+Relu@NHWC" in out.stdout
    assert nhwc == (mode != "off"), out.stdout[-2000:]
    if mode != "off":  # the forced path, or the portable loops where the CPU lacks AVX2
        path = "avx2" if mode == "avx2" and cpu_has_avx2() else "portable"
        assert f"({path})" in out.stdout and "(avx512)" not in out.stdout, out.stdout[-2000:]


@needs_nhwc
def test_batchnorm_after_a_concat_runs_channels_last():
    """DenseNet's pre-activation BatchNormalization (no conv before it to fold into)."""
    c = 16
    nodes = [helper.make_node("Conv", ["x", "w0"], ["a"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("Concat", ["a", "x"], ["cat"], axis=1),
             helper.make_node("BatchNormalization", ["cat", "s", "b", "m", "v"], ["n"], epsilon=1e-3),
             helper.make_node("Relu", ["n"], ["r"]),
             helper.make_node("Conv", ["r", "w1"], ["y"], kernel_shape=[1, 1])]
    rng = np.random.default_rng(0)
    model = make_model(nodes, [("x", [2, c, 7, 7])], [("y", None)],
                       {"w0": weights(c, c, 3, 3, seed=1), "w1": weights(32, 2 * c, 1, 1, seed=2),
                        "s": rand(2 * c, seed=3), "b": rand(2 * c, seed=4), "m": rand(2 * c, seed=5),
                        "v": rng.uniform(0.5, 2.0, 2 * c).astype(np.float32)})
    ops = plan_ops(model)
    assert "BatchNormalization+Relu@NHWC" in ops and "Relu" not in ops, ops  # fuse_batchnorm_relu
    assert_matches_ort(model, feeds_for(model))
    apart = {"fuse_batchnorm_relu": False}
    ops = plan_ops(model, passes=apart)
    assert "BatchNormalization@NHWC" in ops and "Relu" in ops, ops
    assert_matches_ort(model, feeds_for(model), passes=apart)


# (x shape, filters, pads): 3x3 unit-stride convs of one group with 36+ output tiles, which take
# the channels-last Winograd conv (Note [channels-last winograd]): odd sizes (a last tile half
# outside Y), asymmetric and no padding, channels and filters off the 16-wide blocks, batch 2.
WINOGRAD = [
    ([1, 16, 12, 12], 16, (1, 1, 1, 1)),
    ([2, 24, 13, 15], 40, (1, 0, 0, 1)),
    ([1, 17, 14, 14], 20, (0, 0, 0, 0)),
    ([1, 64, 15, 11], 96, (1, 1, 1, 1)),
    ([1, 130, 16, 16], 70, (2, 2, 2, 2)),
    ([1, 256, 9, 9], 200, (1, 1, 1, 1)),  # U past 1 MiB: the threads split the filters
]


@needs_nhwc
@pytest.mark.parametrize("x_shape,k,pads", WINOGRAD)
@pytest.mark.parametrize("fuse", [None, "add_relu", "relu6", "silu"])
def test_winograd_conv_matches_ort(x_shape, k, pads, fuse):
    model = conv_model(x_shape, k, 3, pads=pads, fuse=fuse)
    algorithms = [row["algorithm"] for row in dnnx.load(model).plan()]
    assert any(a.startswith("nhwc winograd") for a in algorithms), algorithms
    feeds = feeds_for(model)
    feeds["x"] *= 3
    check(model, "Conv" + {None: "", "add_relu": "+Add+Relu", "relu6": "+Clip", "silu": "+Swish"}[fuse] + "@NHWC", feeds)


@needs_nhwc
@pytest.mark.parametrize("x_shape,k", [([2, 32, 30, 30], 48), ([1, 256, 14, 14], 256)])
def test_winograd_same_bits_on_one_and_two_threads(x_shape, k):
    model = conv_model(x_shape, k, 3, pads=(1, 1, 1, 1), fuse="relu")
    feeds = feeds_for(model)
    results = []
    for threads in (1, 2):
        set_num_threads(threads)
        m = dnnx.load(model)
        assert any(row["algorithm"].startswith("nhwc winograd") for row in m.plan())
        results.append(m.run_dict(feeds)["y"])
    assert np.array_equal(results[0], results[1])


@needs_nhwc
@pytest.mark.parametrize("dynamic_shapes", [True, False])
@pytest.mark.parametrize("axes_dtype", [np.int64, np.int32])
def test_channel_shuffle_and_halves_stay_channels_last(dynamic_shapes, axes_dtype):
    # Note [channel shuffle]: the Slices of the channel axis run on axis 3, the shuffle as a
    # Reshape / Transpose [0, 1, 2, 4, 3] / Reshape of the NHWC bytes, and the Shape torch reads
    # as a Gather of the stored dims: no conversion inside (x in, y out, the shuffle's own Transpose)
    model = shuffle_unit(dynamic_shapes, axes_dtype)
    feeds = {"x": rand(3, 32, 6, 6, seed=4)}
    check(model, "Conv@NHWC", feeds, batch_size=3)
    assert transposes(model) == 3, plan_ops(model)


@needs_nhwc
def test_a_shuffled_value_read_as_it_is_goes_back_to_onnx_layout():
    # the 5-D value between the shuffle's steps is a graph output: one Transpose [0, 3, 4, 1, 2] back
    model = shuffle_unit(False, grouped_output=True)
    check(model, "Conv@NHWC", {"x": rand(2, 32, 6, 6, seed=5)})
    assert transposes(model) == 4, plan_ops(model)


@needs_nhwc
@pytest.mark.parametrize("keepdims, axes, axes_as_input", [(1, (2, 3), True), (1, (-1, -2), False),
                                                           (0, (2, 3), True), (0, (3, 2), False)])
def test_a_mean_over_pixels_is_a_channels_last_global_pool(keepdims, axes, axes_as_input):
    # Note [channels-last forms]: ReduceMean over H and W as GlobalAveragePool@NHWC (a Reshape
    # view to [N, C] without keepdims): no conversion but x in and the outputs out
    model = mean_gate(keepdims, axes, axes_as_input)
    check(model, "GlobalAveragePool@NHWC", {"x": rand(2, 32, 7, 7, seed=6)}, batch_size=2)
    assert transposes(model) == 2, plan_ops(model)  # x in, y out (m [N, C] needs none)


@needs_nhwc
def test_a_mean_over_other_axes_keeps_onnx_layout():
    model = mean_gate(0, axes=(1, 2, 3))  # m [N]
    ops = plan_ops(model, batch_size=2)
    assert "GlobalAveragePool@NHWC" not in ops and "ReduceMean" in ops, ops
    assert_matches_ort(model, {"x": rand(2, 32, 7, 7, seed=7)}, batch_size=2)
