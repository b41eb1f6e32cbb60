"""The fuse_conv_activation pass (Conv+Clip, Conv+HardSwish, Conv+Swish) makes CPU layers only:
the CUDA backend registers no kernel for them, so PassOptions::can_run keeps the conv and its
activation apart on CUDA, and the results stay CUDA's unfused ones (checked against the CPU's
fused layer and onnxruntime, cuda_check.py's fp32 tolerances)."""
import sys
import os

import pytest

import dnnx
from cuda_check import check_cuda
from ort_check import rand

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from test_conv_activation import FUSED, conv_act_model  # noqa: E402

UNFUSED = {"relu6": ["Conv", "Clip"], "hardswish": ["Conv", "HardSwish"], "silu": ["Conv", "Sigmoid", "Mul"]}


@pytest.mark.parametrize("kind", list(UNFUSED))
@pytest.mark.parametrize("algo", ["gemm(1x1)", "direct depthwise"])
def test_cuda_keeps_the_conv_and_its_activation_apart(algo, kind):
    model, (c, h, w) = conv_act_model(algo, kind)
    assert [r["op"] for r in dnnx.load(model, batch_size=2).plan()] == [FUSED[kind]]
    assert [r["op"] for r in dnnx.load(model, batch_size=2, device="cuda").plan()] == UNFUSED[kind]
    check_cuda(model, {"x": rand(2, c, h, w, seed=3)}, batch_size=2)
