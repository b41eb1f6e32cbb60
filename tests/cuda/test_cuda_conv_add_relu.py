"""A residual join, Conv -> Add(z) -> Relu, as one layer on CUDA (the fuse_conv_add_relu pass: one
cudnnConvolutionBiasActivationForward with the residual as z), against the CPU backend and
onnxruntime with the fp32 tolerances of cuda_check.py, and against the same model with the pass
off; the cases the pass must leave alone keep their three layers."""
import numpy as np
import pytest

import dnnx
from cuda_check import assert_close, check_cuda
from ort_check import rand
from residual_models import broadcast_residual, residual_block, sum_read_elsewhere

FUSED = "Conv+Add+Relu"


@pytest.mark.parametrize("batch", [1, 8])
@pytest.mark.parametrize("bias, z_first, downsample, stride", [
    (True, False, False, 1), (False, False, False, 1), (True, True, False, 1), (True, False, True, 2),
    (False, True, True, 2),
])
def test_residual_join_is_one_layer(bias, z_first, downsample, stride, batch):
    model = residual_block(bias=bias, z_first=z_first, downsample=downsample, stride=stride, size=10)
    gpu = dnnx.load(model, device="cuda", batch_size=batch)
    rows = gpu.plan()
    ops = [row["op"] for row in rows]
    assert ops.count(FUSED) == 1 and "Add" not in ops and ops.count("Relu") == 0, ops
    row = next(r for r in rows if r["op"] == FUSED)
    assert "bias+residual+relu fused" in row["algorithm"] and "FMA" in row["math"], row
    x = rand(batch, 8, 10, 10, seed=batch)
    check_cuda(model, {"x": x})
    unfused = dnnx.load(model, device="cuda", passes={"fuse_conv_add_relu": False})
    assert "Add" in [r["op"] for r in unfused.plan(batch_size=batch)]
    assert_close(gpu.run(x), unfused.run(x), "fused vs unfused")


def test_a_broadcast_residual_is_not_fused():
    model = broadcast_residual()
    apart = {"fold_conv_add": False}  # z is a constant per-channel bias, which that pass folds
    assert [r["op"] for r in dnnx.load(model, device="cuda", passes=apart).plan()] == ["Conv", "Add", "Relu"]
    check_cuda(model, {"x": rand(2, 4, 6, 6)}, passes=apart)
    assert [r["op"] for r in dnnx.load(model, device="cuda").plan()] == ["Conv+Relu"]
    check_cuda(model, {"x": rand(2, 4, 6, 6)})


def test_a_sum_read_elsewhere_is_not_fused():
    model = sum_read_elsewhere()
    assert [r["op"] for r in dnnx.load(model, device="cuda").plan()] == ["Conv", "Add", "Relu", "Sigmoid"]
    check_cuda(model, {"x": rand(2, 4, 6, 6)})


@pytest.mark.parametrize("search", ["heuristic", "exhaustive"])
def test_deterministic_and_exhaustive_plans_of_the_fused_layer(search):
    model = residual_block(downsample=True, stride=2, size=10)
    x = rand(4, 8, 10, 10)
    gpu = dnnx.load(model, device="cuda", algo_search=search, deterministic=True, plan_cache=False)
    first = gpu.run(x)
    np.testing.assert_array_equal(gpu.run(x), first)
    check_cuda(model, {"x": x}, algo_search=search, deterministic=True, plan_cache=False)
