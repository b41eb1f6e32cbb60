"""The CPU's direct depthwise conv (engine/backends/cpu/conv/conv_depthwise_cpu.cc, Note [direct
depthwise conv]) against onnxruntime, at the project's fp32 tolerance (rtol 1e-4, atol 1e-5:
tests/ort_check.py): 3x3, 5x5 and 7x7 (and 1x1, 1-D, and a 9x9 taking the runtime-width loop),
strides 1 and 2 (and 3), symmetric, asymmetric, SAME and no padding, dilations, odd sizes,
channel multipliers, bias or none, Relu and Add+Relu fused, batch 1, 3 and 0; the same bits on 1
and 2 threads; random shapes."""
import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

import dnnx
from dnnx.threads import blas_core_name, get_num_threads, set_num_threads
from ort_check import assert_matches_ort, make_model, rand
from residual_models import weights

pytestmark = [pytest.mark.skipif(blas_core_name() == "unknown", reason="no CPU backend"), pytest.mark.usefixtures("nchw_kernels")]

DEPTHWISE = "direct depthwise"


@pytest.fixture(autouse=True)
def restore_threads():
    before = get_num_threads()
    yield
    set_num_threads(before)


def conv_out(size, k, s, d, p0, p1):
    return (size + p0 + p1 - ((k - 1) * d + 1)) // s + 1


def depthwise_model(x_shape, k, mult=1, strides=None, pads=None, dilations=None, bias=True, fuse=None,
                    auto_pad=None, seed=1):
    """A depthwise Conv of x_shape [N, C, spatial...] with a k (int or list) window and `mult` filters per
    channel; fuse: None, "relu" or "add_relu" (the residual z an input, of y's shape)."""
    c = x_shape[1]
    spatial = x_shape[2:]
    kernel = [k] * len(spatial) if isinstance(k, int) else list(k)
    attrs = {"group": c, "kernel_shape": kernel}
    for name, value in (("strides", strides), ("pads", pads), ("dilations", dilations), ("auto_pad", auto_pad)):
        if value is not None:
            attrs[name] = value
    inits = {"w": weights(c * mult, 1, *kernel, seed=seed)}
    inputs = ["x", "w"]
    if bias:
        inits["b"] = rand(c * mult, seed=seed + 1)
        inputs.append("b")
    nodes = [helper.make_node("Conv", inputs, ["c" if fuse else "y"], name="conv", **attrs)]
    graph_inputs = [("x", list(x_shape))]
    if fuse == "relu":
        nodes.append(helper.make_node("Relu", ["c"], ["y"], name="relu"))
    elif fuse == "add_relu":
        st = strides or [1] * len(spatial)
        dl = dilations or [1] * len(spatial)
        pd = pads or [0] * (2 * len(spatial))
        r = len(spatial)
        out = [x_shape[0], c * mult] + [conv_out(spatial[i], kernel[i], st[i], dl[i], pd[i], pd[i + r])
                                        for i in range(r)]
        nodes += [helper.make_node("Add", ["c", "z"], ["s"], name="add"),
                  helper.make_node("Relu", ["s"], ["y"], name="relu")]
        graph_inputs.append(("z", out))
    return make_model(nodes, graph_inputs, [("y", None)], inits)


def input_shape(model, i):
    return [d.dim_value for d in model.graph.input[i].type.tensor_type.shape.dim]


def plan_row(model, **load_kwargs):
    (row,) = dnnx.load(model, **load_kwargs).plan()
    return row


# (x shape, kernel, multiplier, attrs): MobileNetV2's, EfficientNet's and ConvNeXt's layers at
# batch 1 and the edge cases around them.
CASES = [
    ([1, 32, 112, 112], 3, 1, {"pads": [1, 1, 1, 1]}),                        # MobileNetV2's first
    ([1, 96, 112, 112], 3, 1, {"pads": [1, 1, 1, 1], "strides": [2, 2]}),     # its stride 2
    ([1, 40, 28, 28], 5, 1, {"pads": [2, 2, 2, 2]}),                          # EfficientNet 5x5
    ([1, 24, 15, 15], 5, 1, {"pads": [2, 2, 2, 2], "strides": [2, 2]}),       # odd size, stride 2
    ([1, 16, 14, 14], 7, 1, {"pads": [3, 3, 3, 3]}),                          # ConvNeXt 7x7
    ([2, 7, 13, 9], 7, 1, {"pads": [3, 3, 3, 3], "strides": [2, 2]}),
    ([3, 5, 11, 17], 3, 1, {}),                                               # unpadded
    ([1, 6, 10, 13], 3, 1, {"pads": [0, 1, 2, 0]}),                           # asymmetric
    ([1, 6, 9, 10], 3, 1, {"pads": [2, 2, 2, 2]}),                            # pads wider than needed
    ([1, 4, 12, 12], 3, 1, {"auto_pad": "SAME_UPPER", "strides": [2, 2]}),
    ([1, 4, 11, 12], 3, 1, {"auto_pad": "SAME_LOWER", "strides": [2, 2]}),
    ([1, 8, 17, 19], 3, 1, {"pads": [2, 2, 2, 2], "dilations": [2, 2]}),      # dilated
    ([1, 8, 17, 19], 5, 1, {"pads": [1, 3, 2, 1], "dilations": [1, 3]}),
    ([2, 4, 8, 8], 3, 2, {"strides": [2, 2]}),                                # multiplier 2
    ([1, 3, 9, 11], 3, 3, {"pads": [1, 1, 1, 1]}),
    ([1, 6, 13, 12], [3, 5], 1, {"pads": [1, 2, 1, 2], "strides": [1, 2]}),   # 3x5, mixed strides
    ([1, 5, 16, 16], 3, 1, {"pads": [1, 1, 1, 1], "strides": [3, 3]}),        # stride 3: runtime stride
    ([1, 5, 20, 21], 9, 1, {"pads": [4, 4, 4, 4]}),                           # 9x9: runtime width
    ([1, 5, 7, 7], 1, 1, {}),                                                 # 1x1
    ([1, 5, 1, 1], 3, 1, {"pads": [1, 1, 1, 1]}),                             # a 1x1 image, all padding
    ([2, 6, 20], 3, 1, {"pads": [1, 1]}),                                     # 1-D
    ([1, 6, 25], 5, 1, {"pads": [2, 2], "strides": [2]}),
]


@pytest.mark.parametrize("x_shape, k, mult, attrs", CASES)
@pytest.mark.parametrize("bias", [True, False])
def test_depthwise_conv_matches_ort(x_shape, k, mult, attrs, bias):
    model = depthwise_model(x_shape, k, mult, bias=bias, **attrs)
    row = plan_row(model)
    kernel = "x".join(map(str, [k] * (len(x_shape) - 2) if isinstance(k, int) else k))
    assert row["algorithm"].startswith(f"{DEPTHWISE} {kernel}"), row["algorithm"]
    assert_matches_ort(model, {"x": rand(*x_shape, seed=3)})


@pytest.mark.parametrize("x_shape, k, mult, attrs", [CASES[1], CASES[3], CASES[5], CASES[12]])
@pytest.mark.parametrize("fuse", ["relu", "add_relu"])
def test_depthwise_conv_fused_epilogues_match_ort(x_shape, k, mult, attrs, fuse):
    model = depthwise_model(x_shape, k, mult, fuse=fuse, **attrs)
    row = plan_row(model)
    assert row["op"] == {"relu": "Conv+Relu", "add_relu": "Conv+Add+Relu"}[fuse]
    assert row["algorithm"].startswith(DEPTHWISE)
    feeds = {"x": rand(*x_shape, seed=4)}
    if fuse == "add_relu":
        feeds["z"] = rand(*input_shape(model, 1), seed=5)
    assert_matches_ort(model, feeds)


def test_depthwise_conv_empty_batch():
    model = depthwise_model([1, 8, 10, 10], 3, pads=[1, 1, 1, 1])
    m = dnnx.load(model, batch_size=0)
    y = m.run_dict({"x": np.zeros((0, 8, 10, 10), np.float32)})["y"]
    assert y.shape == (0, 8, 10, 10)


def test_depthwise_conv_symbolic_batch_matches_ort():
    # A batch dim bound per run: the plan for batch 4 splits 4 * C planes.
    model = depthwise_model([1, 12, 15, 14], 5, pads=[2, 2, 2, 2], strides=[2, 2])
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "N"
    assert_matches_ort(model, {"x": rand(4, 12, 15, 14, seed=9)})


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("batch", [1, 3])
def test_depthwise_conv_gives_the_same_bits_on_any_threads(threads, batch):
    model = depthwise_model([batch, 48, 29, 31], 5, mult=2, pads=[2, 1, 2, 3], strides=[2, 2], fuse="add_relu")
    feeds = {"x": rand(batch, 48, 29, 31, seed=7), "z": rand(*input_shape(model, 1), seed=8)}
    set_num_threads(1)
    want = dnnx.load(model).run_dict(feeds)["y"]
    set_num_threads(threads)
    m = dnnx.load(model)
    algorithm = m.plan()[0]["algorithm"]
    assert algorithm.startswith(DEPTHWISE)
    if threads == 2:
        assert algorithm.endswith("x2 threads"), algorithm
    np.testing.assert_array_equal(m.run_dict(feeds)["y"], want)
    assert_matches_ort(model, feeds)


@pytest.mark.parametrize("seed", range(12))
def test_random_depthwise_convs_match_ort(seed):
    rng = np.random.default_rng(seed)
    rank = int(rng.choice([1, 2, 2, 2]))
    k = [int(rng.choice([1, 2, 3, 5, 7])) for _ in range(rank)]
    strides = [int(rng.integers(1, 3)) for _ in range(rank)]
    dilations = [int(rng.choice([1, 1, 2])) for _ in range(rank)]
    pads = [int(rng.integers(0, k[i % rank])) for i in range(2 * rank)]
    spatial = [int(rng.integers((k[i] - 1) * dilations[i] + 1, 24)) for i in range(rank)]
    x_shape = [int(rng.integers(1, 4)), int(rng.integers(1, 20))] + spatial
    mult = int(rng.choice([1, 1, 2]))
    model = depthwise_model(x_shape, k, mult, strides=strides, pads=pads, dilations=dilations,
                            bias=bool(rng.integers(0, 2)), seed=seed)
    assert plan_row(model)["algorithm"].startswith(DEPTHWISE)
    assert_matches_ort(model, {"x": rand(*x_shape, seed=seed + 100)})


@pytest.mark.parametrize("x_shape, w_shape, group, reason", [
    ([1, 8, 10, 10], [8, 2, 3, 3], 4, "not depthwise (2 channels per group)"),
    ([1, 4, 5, 6, 7], [4, 1, 3, 3, 3], 4, "a 3-D window"),
])
def test_convs_the_depthwise_kernel_leaves_to_im2col(x_shape, w_shape, group, reason):
    node = helper.make_node("Conv", ["x", "w"], ["y"], name="conv", group=group, pads=[1] * (2 * (len(x_shape) - 2)))
    model = make_model([node], [("x", x_shape)], [("y", None)], {"w": weights(*w_shape, seed=1)})
    row = plan_row(model)
    assert not row["algorithm"].startswith(DEPTHWISE)
    assert ("direct depthwise", reason) in [tuple(r) for r in row["rejected"]]
    assert_matches_ort(model, {"x": rand(*x_shape, seed=2)})


def test_run_sees_fine_tuned_depthwise_weights(tmp_path):
    # The kernel reads W and B from its inputs on every run (nothing packed at plan time), so
    # Model.run after fine-tuning steps is the saved, tuned model's output in onnxruntime.
    from ort_check import run_ort

    c = 6
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="dw", group=c, kernel_shape=[3, 3],
                              pads=[1, 1, 1, 1], strides=[2, 2]),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("ReduceMean", ["r"], ["f"], name="pool", axes=[2, 3], keepdims=0),
             helper.make_node("Gemm", ["f", "fc_w", "fc_b"], ["logits"], name="fc", transB=1)]
    model = make_model(nodes, [("x", ["N", c, 9, 9])], [("logits", None)],
                       {"w": weights(c, 1, 3, 3, seed=1), "b": rand(c, seed=2), "fc_w": rand(4, c, seed=3),
                        "fc_b": rand(4, seed=4)})
    m = dnnx.load(model)
    assert any(r["algorithm"].startswith(DEPTHWISE) for r in m.plan())
    tuner = m.finetune(trainable="all", lr=0.1)
    x = rand(8, c, 9, 9, seed=5)
    y = np.arange(8) % 4
    for _ in range(3):
        tuner.step(x, y)
    assert not np.array_equal(tuner.weights()["w"], numpy_helper.to_array(model.graph.initializer[0]))
    path = tmp_path / "tuned.onnx"
    m.save(path)
    want = run_ort(onnx.load(path), {"x": x})["logits"]
    np.testing.assert_allclose(m.run(x), want, rtol=1e-4, atol=1e-5)
