"""Conv -> Clip (ReLU6, any constant clip), Conv -> HardSwish and Conv -> SiLU (Sigmoid and Mul
reading the conv's output) as one CPU layer each (the fuse_conv_activation pass: Conv+Clip,
Conv+HardSwish, Conv+Swish, the activation applied per output tile, Note [conv activation
epilogue] in engine/backends/cpu/conv/conv_activation_cpu.cc), on every CPU conv path (GEMM 1x1,
im2col, direct, winograd, direct depthwise), against onnxruntime (fp32: rtol 1e-4, atol 1e-5,
ort_check's) and against the same model with the pass off; the patterns the pass must leave alone
keep their layers; fine-tuning through a fused layer trains it (the tail is planned unfused)."""
import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

import dnnx
from ort_check import assert_matches_ort, make_model, rand, run_ort

# The NCHW kernels (the channels-last ones: test_conv_channels_last_cpu.py).
pytestmark = pytest.mark.usefixtures("nchw_kernels")

# name -> (x shape (C, H, W), w shape, conv attributes): one per CPU conv algorithm
CONVS = {
    "gemm(1x1)": ((8, 7, 6), (12, 8, 1, 1), {}),
    "im2col+gemm": ((6, 9, 9), (10, 6, 3, 3), {"pads": [1, 1, 1, 1], "strides": [2, 2]}),
    "direct": ((3, 10, 10), (6, 3, 3, 3), {}),
    "winograd": ((16, 12, 12), (16, 16, 3, 3), {"pads": [1, 1, 1, 1]}),
    "direct depthwise": ((8, 11, 11), (8, 1, 3, 3), {"pads": [1, 1, 1, 1], "group": 8}),
}


def activation_nodes(kind, inits):
    """The nodes after the conv (reading "c", writing "y") and the constants they add."""
    if kind == "relu6":
        inits.update({"lo": np.array(0.0, np.float32), "hi": np.array(6.0, np.float32)})
        return [helper.make_node("Clip", ["c", "lo", "hi"], ["y"], name="act")]
    if kind == "clip_max_only":
        inits.update({"hi": np.array(0.5, np.float32)})
        return [helper.make_node("Clip", ["c", "", "hi"], ["y"], name="act")]
    if kind == "hardswish":
        return [helper.make_node("HardSwish", ["c"], ["y"], name="act")]
    if kind == "silu":
        return [helper.make_node("Sigmoid", ["c"], ["s"], name="sig"), helper.make_node("Mul", ["c", "s"], ["y"], name="act")]
    if kind == "silu_swapped":
        return [helper.make_node("Sigmoid", ["c"], ["s"], name="sig"), helper.make_node("Mul", ["s", "c"], ["y"], name="act")]
    raise ValueError(kind)


FUSED = {"relu6": "Conv+Clip", "clip_max_only": "Conv+Clip", "hardswish": "Conv+HardSwish", "silu": "Conv+Swish",
         "silu_swapped": "Conv+Swish"}


def conv_act_model(algo, kind, bias=True, scale=3.0):
    (c, h, w), wshape, attrs = CONVS[algo]
    inits = {"w": rand(*wshape, seed=1) * np.float32(scale / np.sqrt(np.prod(wshape[1:])))}
    ins = ["x", "w"]
    if bias:
        inits["b"] = rand(wshape[0], seed=2)
        ins.append("b")
    nodes = [helper.make_node("Conv", ins, ["c"], name="conv", **attrs)] + activation_nodes(kind, inits)
    return make_model(nodes, [("x", ["N", c, h, w])], [("y", None)], inits), (c, h, w)


def plan_rows(model, **kw):
    return dnnx.load(model, **kw).plan()


@pytest.mark.parametrize("kind", list(FUSED))
@pytest.mark.parametrize("algo", list(CONVS))
def test_conv_activation_is_one_layer(algo, kind):
    model, (c, h, w) = conv_act_model(algo, kind, bias=kind != "clip_max_only")
    rows = plan_rows(model, batch_size=2)
    assert [r["op"] for r in rows] == [FUSED[kind]], rows
    assert rows[0]["algorithm"].startswith(algo), rows[0]
    x = rand(2, c, h, w, seed=3) * np.float32(2.0)  # values on both sides of 0, -3, 3 and 6
    fused = assert_matches_ort(model, {"x": x}, batch_size=2)["y"]
    unfused = dnnx.load(model, batch_size=2, passes={"fuse_conv_activation": False})
    assert len(unfused.plan()) > 1
    np.testing.assert_allclose(fused, unfused.run(x), rtol=1e-6, atol=1e-6, err_msg="fused vs unfused")


def test_clip_bounds_as_attributes_opset_6():
    inits = {"w": rand(4, 3, 1, 1, seed=1)}
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
             helper.make_node("Clip", ["c"], ["y"], name="act", min=-0.25, max=0.75)]
    model = make_model(nodes, [("x", ["N", 3, 5, 5])], [("y", None)], inits, opset=10)
    assert [r["op"] for r in plan_rows(model)] == ["Conv+Clip"]
    assert_matches_ort(model, {"x": rand(2, 3, 5, 5, seed=4)}, batch_size=2)


def test_computed_clip_bounds_are_not_fused():
    inits = {"w": rand(4, 3, 1, 1, seed=1)}
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
             helper.make_node("Clip", ["c", "lo"], ["y"], name="act")]
    model = make_model(nodes, [("x", ["N", 3, 5, 5]), ("lo", [])], [("y", None)], inits)
    assert [r["op"] for r in plan_rows(model)] == ["Conv", "Clip"]
    assert_matches_ort(model, {"x": rand(2, 3, 5, 5, seed=4), "lo": np.array(0.1, np.float32)}, batch_size=2)


def test_silu_whose_parts_are_read_elsewhere_is_not_fused():
    # the conv's output is also a graph output; the Sigmoid's output also read by an Add
    inits = {"w": rand(4, 3, 1, 1, seed=1)}
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
             helper.make_node("Sigmoid", ["c"], ["s"], name="sig"),
             helper.make_node("Mul", ["c", "s"], ["y"], name="mul")]
    model = make_model(nodes, [("x", ["N", 3, 5, 5])], [("y", None), ("c", None)], inits)
    assert [r["op"] for r in plan_rows(model)] == ["Conv", "Sigmoid", "Mul"]
    nodes2 = nodes + [helper.make_node("Add", ["s", "y"], ["z"], name="add")]
    model2 = make_model(nodes2, [("x", ["N", 3, 5, 5])], [("z", None)], inits)
    assert [r["op"] for r in plan_rows(model2)] == ["Conv", "Sigmoid", "Mul", "Add"]
    # Mul(c, c) with a Sigmoid beside it is no SiLU
    nodes3 = [nodes[0], nodes[1], helper.make_node("Mul", ["c", "c"], ["m"], name="mul"),
              helper.make_node("Add", ["s", "m"], ["y"], name="add")]
    model3 = make_model(nodes3, [("x", ["N", 3, 5, 5])], [("y", None)], inits)
    assert "Conv+Swish" not in [r["op"] for r in plan_rows(model3)]
    assert_matches_ort(model3, {"x": rand(2, 3, 5, 5, seed=4)}, batch_size=2)


def test_batchnorm_folds_then_the_clip_fuses():
    # Conv -> BN -> Clip (MobileNetV2's block) ends as one Conv+Clip
    c = 6
    inits = {"w": rand(c, 1, 3, 3, seed=1), "scale": rand(c, seed=2), "bias": rand(c, seed=3),
             "mean": rand(c, seed=4), "var": np.abs(rand(c, seed=5)) + 0.5,
             "lo": np.array(0.0, np.float32), "hi": np.array(6.0, np.float32)}
    nodes = [helper.make_node("Conv", ["x", "w"], ["c0"], name="conv", group=c, pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c0", "scale", "bias", "mean", "var"], ["c"], name="bn"),
             helper.make_node("Clip", ["c", "lo", "hi"], ["y"], name="relu6")]
    model = make_model(nodes, [("x", ["N", c, 8, 8])], [("y", None)], inits)
    assert [r["op"] for r in plan_rows(model)] == ["Conv+Clip"]
    assert_matches_ort(model, {"x": rand(3, c, 8, 8, seed=6)}, batch_size=3)


@pytest.mark.parametrize("kind", ["relu6", "hardswish", "silu"])
def test_finetuning_through_a_fused_layer(kind, tmp_path):
    # conv+activation -> global pool -> flatten -> gemm: inference runs the fused layer, the trainer
    # plans the tail unfused (train/tail_fusion.cc) and its gradients go through the activation
    (c, h, w), wshape, attrs = CONVS["im2col+gemm"]
    inits = {"w": rand(*wshape, seed=1) * np.float32(0.3), "b": rand(wshape[0], seed=2),
             "fc_w": rand(4, wshape[0], seed=3) * np.float32(0.3), "fc_b": rand(4, seed=4)}
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", **attrs)] + activation_nodes(kind, inits)
    nodes += [helper.make_node("ReduceMean", ["y"], ["f"], name="pool", axes=[2, 3], keepdims=0),
              helper.make_node("Gemm", ["f", "fc_w", "fc_b"], ["logits"], name="fc", transB=1)]
    model = make_model(nodes, [("x", ["N", c, h, w])], [("logits", None)], inits)
    m = dnnx.load(model)
    assert FUSED[kind] in [r["op"] for r in m.plan()]
    if kind == "relu6":
        # a frozen head keeps the fused layer and trains what follows it
        head = dnnx.load(model)
        tuner = head.finetune(trainable="last:1", lr=0.1)
        x = rand(8, c, h, w, seed=5)
        for _ in range(3):
            tuner.step(x, np.arange(8) % 4)
        assert not np.allclose(tuner.weights()["fc_w"], inits["fc_w"])
        np.testing.assert_allclose(head.run(x), run_ort(_saved(head, tmp_path), {"x": x})["logits"], rtol=1e-4,
                                   atol=1e-5)
    tuner = m.finetune(trainable="all", lr=0.1)
    x = rand(8, c, h, w, seed=5)
    labels = np.arange(8) % 4
    for _ in range(3):
        tuner.step(x, labels)
    assert not np.allclose(tuner.weights()["w"], inits["w"])
    np.testing.assert_allclose(m.run(x), run_ort(_saved(m, tmp_path), {"x": x})["logits"], rtol=1e-4, atol=1e-5)


def _saved(m, tmp_path):
    path = tmp_path / "tuned.onnx"
    m.save(path)
    return onnx.load(path)


@pytest.mark.parametrize("op, attrs", [("HardSwish", {}), ("HardSigmoid", {}), ("HardSigmoid", {"alpha": 0.3, "beta": 0.4}),
                                       ("Sigmoid", {})])
def test_vectorized_standalone_activations(op, attrs):
    # the standalone kernels (one vectorized loop each) on both sides of every piece, at the
    # ends of the float range, with inf and NaN, and a length that is no multiple of 8
    x = np.concatenate([rand(1037, seed=9) * np.float32(5.0),
                        np.array([0.0, -0.0, 3.0, -3.0, 6.0, 2.5, -2.5, 88.0, -88.0, 1e30, -1e30, np.inf, -np.inf, np.nan],
                                 np.float32)]).reshape(1, -1)
    model = make_model([helper.make_node(op, ["x"], ["y"], name="act", **attrs)], [("x", list(x.shape))], [("y", None)])
    assert [r["op"] for r in plan_rows(model)] == [op]
    assert_matches_ort(model, {"x": x})


@pytest.mark.parametrize("algo", ["gemm(1x1)", "direct depthwise"])
def test_silu_fused_equals_unfused_bit_for_bit(algo):
    # Note [sigmoid rows]: the Conv+Swish epilogue and the Sigmoid kernel share one sigmoid, so the
    # fused layer's bits are the unfused Conv, Sigmoid and Mul's (rows of 12 and 8 channels: a
    # vector's tail under a mask); x spans both sides of 0 and the exp's clamps
    model, (c, h, w) = conv_act_model(algo, "silu", scale=60.0)
    x = rand(2, c, h, w, seed=5) * np.float32(3.0)
    fused = dnnx.load(model, batch_size=2)
    assert [r["op"] for r in fused.plan()] == ["Conv+Swish"]
    unfused = dnnx.load(model, batch_size=2, passes={"fuse_conv_activation": False})
    np.testing.assert_array_equal(fused.run(x), unfused.run(x))


@pytest.mark.parametrize("n", [1, 7, 15, 16, 17, 31, 33])
def test_sigmoid_rows_tails_and_specials(n):
    # Note [sigmoid rows]: whole vectors and a masked tail; NaN stays NaN, and every value is within
    # 4 ulp of float64's sigmoid (onnxruntime's own is 1e-7 apart), or under 3e-38 where it is
    # smaller (e^-x is clamped at e^88.72: sigmoid(-inf) is 2.9e-39, not 0)
    specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 88.0, -88.0, 100.0, -100.0, 1e-30], np.float32)
    x = np.concatenate([specials, rand(n, seed=n) * np.float32(8.0)])[:n].reshape(1, -1)
    model = make_model([helper.make_node("Sigmoid", ["x"], ["y"], name="act")], [("x", list(x.shape))], [("y", None)])
    y = dnnx.load(model).run(x)
    ref = (1.0 / (1.0 + np.exp(-x.astype(np.float64)))).astype(np.float32)
    np.testing.assert_array_equal(np.isnan(y), np.isnan(x))
    finite = ~np.isnan(x)
    ulp = np.spacing(np.abs(ref[finite]))
    assert np.all(np.abs(y[finite].astype(np.float64) - ref[finite]) <= 4 * ulp + 3e-38), (x, y, ref)
    assert y[x == np.inf].tolist() in ([], [1.0])
