"""Note [conv activations on cuda] (engine/backends/cuda/conv/conv_activation.h): the
fuse_conv_activation pass's Conv+Clip, Conv+HardSwish and Conv+Swish run on CUDA as one layer (the
conv as Conv plans it, then the activation in place, or in the direct depthwise kernel's epilogue,
Note [depthwise activations]; by default, DNNX_PROBE_CUDA_CONV_ACTIVATION=0 keeps them apart), at
fp32 in ONNX's layout and at tf32, fp16
and bf16 channels-last; checked against the CPU's fused layer, onnxruntime and the same model
with the pass off (CUDA's unfused Clip, HardSwish, Sigmoid and Mul), within each precision's
tolerances (cuda_check.py for fp32, test_cuda_channels_last.py's for the others)."""
import os
import sys

import numpy as np
import pytest

import dnnx
from cuda_check import assert_close as assert_fp32_close, check_cuda
from ort_check import rand, run_ort
from test_cuda_bf16 import MODEL_ATOL as BF16_ATOL, MODEL_L2 as BF16_L2, MODEL_RTOL as BF16_RTOL, assert_bf16_close
from test_cuda_channels_last import assert_close

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from test_conv_activation import CONVS, FUSED, conv_act_model  # noqa: E402

pytestmark = pytest.mark.usefixtures("fixed_layout")  # the plans checked are the pass's (conftest.py)


@pytest.fixture(autouse=True)
def fused_on_cuda(monkeypatch):
    """The kernels' switch (conv_activation.h) on, as by default, whatever the environment says;
    each load opens a new CUDA context, which reads it."""
    monkeypatch.setenv("DNNX_PROBE_CUDA_CONV_ACTIVATION", "1")


def test_with_the_switch_off_cuda_keeps_the_conv_and_its_activation_apart(monkeypatch):
    monkeypatch.setenv("DNNX_PROBE_CUDA_CONV_ACTIVATION", "0")
    model, _ = conv_act_model("gemm(1x1)", "silu")
    assert [r["op"] for r in dnnx.load(model, batch_size=2, device="cuda").plan()] == ["Conv", "Sigmoid", "Mul"]

ACTIVATION = {"Conv+Clip": "clip", "Conv+HardSwish": "hardswish", "Conv+Swish": "swish"}


@pytest.mark.parametrize("kind", list(FUSED))
@pytest.mark.parametrize("algo", list(CONVS))
def test_a_conv_and_its_activation_are_one_cuda_layer_at_fp32(algo, kind):
    model, (c, h, w) = conv_act_model(algo, kind, bias=kind != "clip_max_only")
    rows = dnnx.load(model, batch_size=2, device="cuda").plan()
    assert [r["op"] for r in rows] == [FUSED[kind]], rows
    algorithm = rows[0]["algorithm"]
    if algorithm.startswith("direct depthwise"):  # Note [depthwise activations]: in the kernel's epilogue
        assert f"{ACTIVATION[FUSED[kind]]} fused)" in algorithm and "in place" not in algorithm, rows[0]
    else:
        assert algorithm.endswith(f"then the {ACTIVATION[FUSED[kind]]} kernel in place"), rows[0]
    x = rand(2, c, h, w, seed=3) * np.float32(2.0)  # values on both sides of 0, -3, 3 and 6
    fused = check_cuda(model, {"x": x}, batch_size=2)["y"]
    unfused = dnnx.load(model, batch_size=2, device="cuda", passes={"fuse_conv_activation": False})
    assert len(unfused.plan()) > 1
    assert_fp32_close(fused, unfused.run(x), "fused vs unfused on CUDA")


@pytest.mark.parametrize("precision", ["tf32", "fp16", "bf16"])
@pytest.mark.parametrize("kind", ["relu6", "hardswish", "silu"])
@pytest.mark.parametrize("algo", ["gemm(1x1)", "direct depthwise"])
def test_channels_last_conv_activations_at_reduced_precision(precision, kind, algo):
    model, (c, h, w) = conv_act_model(algo, kind)
    x = rand(4, c, h, w, seed=5) * np.float32(2.0)
    m = dnnx.load(model, batch_size=4, device="cuda", precision=precision, measure_precision=False)
    ops = [r["op"] for r in m.plan()]
    assert FUSED[kind] in ops or FUSED[kind] + "@NHWC" in ops, ops
    got = m.run(x)
    want = run_ort(model, {"x": x})["y"]
    if precision == "bf16":
        assert_bf16_close(got, want, "bf16 vs onnxruntime", BF16_RTOL, BF16_ATOL, BF16_L2)
    else:
        assert_close(precision, got, want, f"{precision} vs onnxruntime")


@pytest.mark.parametrize("precision", ["fp32", "tf32", "fp16", "bf16"])
@pytest.mark.parametrize("kind", list(FUSED))
def test_the_direct_depthwise_kernel_applies_the_activation_in_its_epilogue(precision, kind):
    # Note [depthwise activations]: the heuristic search takes the direct depthwise kernel (ranked
    # above cuDNN for a depthwise conv) in ONNX's layout at fp32 and channels-last at the others
    model, (c, h, w) = conv_act_model("direct depthwise", kind, bias=kind != "clip_max_only")
    x = rand(4, c, h, w, seed=7) * np.float32(2.0)
    m = dnnx.load(model, batch_size=4, device="cuda", precision=precision, measure_precision=False,
                  algo_search="heuristic")
    (row,) = [r for r in m.plan() if r["op"].startswith(FUSED[kind])]
    algorithm = row["algorithm"]
    assert algorithm.startswith("direct depthwise") and f"{ACTIVATION[FUSED[kind]]} fused)" in algorithm, row
    assert "in place" not in algorithm, row
    got = m.run(x)
    want = run_ort(model, {"x": x})["y"]
    if precision == "fp32":
        assert_fp32_close(got, want, "fp32 vs onnxruntime")
        unfused = dnnx.load(model, batch_size=4, device="cuda", passes={"fuse_conv_activation": False})
        assert_fp32_close(got, unfused.run(x), "fused vs unfused on CUDA")
    elif precision == "bf16":
        assert_bf16_close(got, want, "bf16 vs onnxruntime", BF16_RTOL, BF16_ATOL, BF16_L2)
    else:
        assert_close(precision, got, want, f"{precision} vs onnxruntime")
