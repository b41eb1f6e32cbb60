"""The direct depthwise convolution on CUDA (Note [direct depthwise conv] in
engine/backends/cuda/conv/depthwise_conv.h): group = C = M, 1-D and 2-D, any window, stride,
dilation and pads, in ONNX's layout and channels-last, float32, float16 and bfloat16 storage, with
the bias, Relu and residual fused. Each case is checked against onnxruntime with the tolerances
of its precision (cuda_check.py for fp32 and tf32: the kernel sums in fp32 FMAs, so tf32's
looser bounds are not needed; test_cuda_fp16.py and test_cuda_bf16.py for the half types, one
layer), and the plan must show that the direct kernel ran. The pack width (8, 4, 2 or 1 channels
per access) follows C: the cases cover each."""
import numpy as np
import pytest
from onnx import helper

import dnnx
from cuda_check import assert_close
from ort_check import make_model, rand, run_ort
from precision_check import assert_layer_close
from test_cuda_run_fallback import CANDIDATES

pytestmark = pytest.mark.usefixtures("fixed_layout")  # the pass's own forms (conftest.py)

DEPTHWISE = "direct depthwise"

# (C, spatial input dims, kernel, strides, dilations, pads): pads begin..., end...
CASES = {
    "3x3 s1 C32": (32, (14, 14), (3, 3), (1, 1), (1, 1), (1, 1, 1, 1)),
    "5x5 s2 C24": (24, (15, 13), (5, 5), (2, 2), (1, 1), (2, 2, 2, 2)),
    "7x7 C96 (ConvNeXt)": (96, (12, 12), (7, 7), (1, 1), (1, 1), (3, 3, 3, 3)),
    "3x3 dilated C20": (20, (11, 9), (3, 3), (1, 2), (2, 2), (2, 1, 2, 1)),
    "3x3 s2 C7 (odd)": (7, (10, 10), (3, 3), (2, 2), (1, 1), (1, 1, 1, 1)),
    "3x3 no pad C18": (18, (9, 12), (3, 3), (1, 1), (1, 1), (0, 0, 0, 0)),
    "1-D k5 C16": (16, (30,), (5,), (1,), (1,), (2, 2)),
}
ASYMMETRIC = (16, (9, 9), (3, 3), (2, 2), (1, 1), (0, 1, 1, 0))  # ONNX's layout only (channels-last refuses)


def depthwise_model(case, bias=True, tail=None, batch=2):
    """x [batch, C, dims...] -> depthwise Conv (-> Relu | -> Add(z) -> Relu)."""
    c, dims, kernel, strides, dilations, pads = case
    rng = np.random.default_rng(7)
    inits = {"w": (rng.standard_normal((c, 1) + kernel) * 0.3).astype(np.float32)}
    conv_in = ["x", "w"]
    if bias:
        inits["b"] = (rng.standard_normal(c) * 0.1).astype(np.float32)
        conv_in.append("b")
    nodes = [helper.make_node("Conv", conv_in, ["conv"], name="dw", group=c, kernel_shape=list(kernel),
                              strides=list(strides), dilations=list(dilations), pads=list(pads))]
    inputs = [("x", [batch, c, *dims])]
    out = "conv"
    if tail == "add_relu":
        y_dims = [(d + p0 + p1 - dl * (k - 1) - 1) // s + 1
                  for d, k, s, dl, p0, p1 in zip(dims, kernel, strides, dilations, pads[:len(dims)], pads[len(dims):])]
        inputs.append(("z", [batch, c, *y_dims]))
        nodes.append(helper.make_node("Add", ["conv", "z"], ["sum"], name="add"))
        out = "sum"
    if tail in ("relu", "add_relu"):
        nodes.append(helper.make_node("Relu", [out], ["y"], name="relu"))
        out = "y"
    return make_model(nodes, inputs, [(out, None)], inits)


def feeds_for(model):
    import onnx

    m = onnx.load_from_string(model) if isinstance(model, bytes) else model
    return {i.name: rand(*[d.dim_value for d in i.type.tensor_type.shape.dim], seed=len(i.name) + 3)
            for i in m.graph.input}


def conv_rows(m):
    return [row for row in m.plan() if row["op"].split("@")[0].startswith("Conv")]


def check(model, precision, **load):
    feeds = feeds_for(model)
    m = dnnx.load(model, device="cuda", precision=precision, plan_cache=False,
                  **({"measure_precision": False} if precision in ("fp16", "bf16") else {}), **load)
    rows = conv_rows(m)
    assert len(rows) == 1 and rows[0]["algorithm"].startswith(DEPTHWISE), rows
    got = m.run_dict(feeds)
    for name, want in run_ort(model, feeds).items():
        assert_layer_close(precision, got[name], want, name)  # fp32 FMAs whatever tf32 allows
    return rows[0]


@pytest.mark.parametrize("precision", ["fp32", "tf32", "fp16", "bf16"])
@pytest.mark.parametrize("case", list(CASES))
def test_depthwise_conv_runs_the_direct_kernel(case, precision):
    row = check(depthwise_model(CASES[case]), precision)
    assert "direct depthwise kernel" in row["math"]
    if precision in ("fp16", "bf16"):
        assert row["math"].startswith(precision + " storage, fp32 FMA")


@pytest.mark.parametrize("precision", ["fp16", "bf16"])
@pytest.mark.parametrize("case", ["3x3 s1 C32", "3x3 dilated C20", "3x3 s2 C7 (odd)"])
def test_depthwise_conv_in_onnx_layout_at_half_precision(case, precision):
    row = check(depthwise_model(CASES[case]), precision, passes={"channels_last": False})
    assert not row["op"].endswith("@NHWC")


@pytest.mark.parametrize("precision", ["fp32", "fp16"])
def test_asymmetric_pads_are_the_kernels_own(precision):
    check(depthwise_model(ASYMMETRIC), precision)


@pytest.mark.parametrize("precision", ["fp32", "fp16", "bf16"])
@pytest.mark.parametrize("tail, fused", [("relu", "(bias+relu fused)"), ("add_relu", "(bias+residual+relu fused)")])
@pytest.mark.parametrize("bias", [True, False])
def test_depthwise_conv_fuses_bias_relu_and_residual(tail, fused, bias, precision):
    for case in ("3x3 s1 C32", "3x3 s2 C7 (odd)"):
        row = check(depthwise_model(CASES[case], bias=bias, tail=tail), precision)
        assert row["algorithm"].startswith(f"{DEPTHWISE} {fused}"), row["algorithm"]


def test_more_pixels_than_the_grid_has_rows_loop():
    # channels-last, 2 channels: a block row holds 256 groups of 4 outputs, the grid 65535 rows at
    # most (67.1M outputs): 8200 x 8300 outputs need the grid-stride loop
    case = (2, (8200, 8300), (3, 3), (1, 1), (1, 1), (1, 1, 1, 1))
    check(depthwise_model(case, batch=1), "fp16")


def test_the_exhaustive_search_times_it_against_cudnn():
    model = depthwise_model(CASES["7x7 C96 (ConvNeXt)"], batch=8)
    feeds = feeds_for(model)
    m = dnnx.load(model, device="cuda", algo_search="exhaustive", plan_cache=False)
    row = conv_rows(m)[0]
    timed = [why for algo, why in row["rejected"] if algo.startswith(DEPTHWISE) or "depthwise" in why]
    assert row["algorithm"].startswith(DEPTHWISE) or timed, row  # taken, or rejected with its time
    for name, want in run_ort(model, feeds).items():
        assert_close(m.run_dict(feeds)[name], want, name)


def test_a_failing_depthwise_kernel_gives_way_to_cudnn(monkeypatch):
    assert DEPTHWISE in CANDIDATES
    model = depthwise_model(CASES["3x3 s1 C32"])
    feeds = feeds_for(model)
    monkeypatch.setenv("DNNX_TEST_FAIL_ALGO", DEPTHWISE + ":run")
    m = dnnx.load(model, device="cuda", plan_cache=False)
    assert conv_rows(m)[0]["algorithm"].startswith(DEPTHWISE)
    for _ in range(3):  # eager (the fallback happens here), then a capture, then a replay
        got = m.run_dict(feeds)
        for name, want in run_ort(model, feeds).items():
            assert_close(got[name], want, name)
    row = conv_rows(m)[0]
    assert row["fallbacks"] and row["fallbacks"][0][0].startswith(DEPTHWISE), row
    assert not row["algorithm"].startswith(DEPTHWISE) and not row["algorithm"].startswith("on the host"), row
