"""A residual join, Conv -> Add(z) -> Relu, as one layer on the CPU (the fuse_conv_add_relu pass:
the conv kernel adds z and applies the Relu in its epilogue, engine/backends/cpu/conv/conv_epilogue_cpu.h),
against onnxruntime and against the same model with the pass off; the cases the pass must leave
alone keep their three layers."""
import numpy as np
import pytest
from onnx import helper

import dnnx
from dnnx.threads import get_num_threads, set_num_threads
from ort_check import assert_matches_ort, make_model, rand
from residual_models import broadcast_residual, residual_block, sum_read_elsewhere, weights

# The NCHW kernels (the channels-last ones: test_conv_channels_last_cpu.py).
pytestmark = pytest.mark.usefixtures("nchw_kernels")

FUSED = "Conv+Add+Relu"


def plan_ops(model, **load_kwargs):
    return [row["op"] for row in dnnx.load(model, **load_kwargs).plan()]


@pytest.mark.parametrize("batch", [1, 8])
@pytest.mark.parametrize("bias, z_first, downsample, stride", [
    (True, False, False, 1), (False, False, False, 1), (True, True, False, 1), (True, False, True, 2),
    (False, True, True, 2),
])
def test_residual_join_is_one_layer(bias, z_first, downsample, stride, batch):
    model = residual_block(bias=bias, z_first=z_first, downsample=downsample, stride=stride)
    cpu = dnnx.load(model, batch_size=batch)
    ops = [row["op"] for row in cpu.plan()]
    assert ops.count(FUSED) == 1 and "Add" not in ops and "Relu" not in ops, ops
    assert ops[-1] == FUSED  # it takes the Add's place: after the downsample conv it reads
    x = rand(batch, 8, 11, 11, seed=batch)
    fused = assert_matches_ort(model, {"x": x}, batch_size=batch)["y"]
    unfused = dnnx.load(model, batch_size=batch, passes={"fuse_conv_add_relu": False})
    assert "Add" in [row["op"] for row in unfused.plan()]
    np.testing.assert_allclose(fused, unfused.run(x), rtol=1e-6, atol=1e-6, err_msg="fused vs unfused")


@pytest.mark.parametrize("bias", [True, False])
def test_the_downsample_bias_moves_into_the_join(bias):
    # relu(conv_b + bb + (down + bd)) = relu(conv_b + down + (bb + bd)): the downsample conv
    # loses its bias input (one pass over its output less), the join adds the sum
    model = residual_block(bias=bias, downsample=True, down_bias=True, stride=2)
    rows = {row["name"]: row for row in dnnx.load(model, batch_size=2).plan()}
    assert len(rows["down"]["inputs"]) == 2, rows["down"]
    fused = next(row for row in rows.values() if row["op"] == FUSED)
    assert len(fused["inputs"]) == 4, fused
    x = rand(2, 8, 11, 11, seed=7)
    folded = assert_matches_ort(model, {"x": x}, batch_size=2)["y"]
    unfused = dnnx.load(model, batch_size=2, passes={"fuse_conv_add_relu": False})
    np.testing.assert_allclose(folded, unfused.run(x), rtol=1e-6, atol=1e-6, err_msg="folded vs unfused")


def test_the_fused_layer_keeps_the_conv_algorithm():
    rows = {row["name"]: row for row in dnnx.load(residual_block(downsample=True, stride=2), batch_size=2).plan()}
    fused = next(row for row in rows.values() if row["op"] == FUSED)
    assert fused["algorithm"].startswith(("im2col+gemm", "direct (padded copy)")), fused  # a padded 3x3 of few filters
    assert rows["down"]["algorithm"].startswith("gather+gemm(1x1)"), rows["down"]


def test_a_pointwise_conv_fuses_too():
    # a 1x1 conv (gemm(1x1), no col) with the residual: the bottleneck's last conv in ResNet-50
    inits = {"w": weights(6, 6, 1, 1, seed=1), "b": rand(6, seed=2)}
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv"),
             helper.make_node("Add", ["x", "c"], ["s"], name="add"),
             helper.make_node("Relu", ["s"], ["y"], name="relu")]
    model = make_model(nodes, [("x", ["N", 6, 7, 5])], [("y", None)], inits)
    assert plan_ops(model) == [FUSED]
    assert_matches_ort(model, {"x": rand(3, 6, 7, 5)}, batch_size=3)


def test_a_broadcast_residual_is_not_fused():
    model = broadcast_residual()
    apart = {"fold_conv_add": False}  # z is a constant per-channel bias, which that pass folds
    assert plan_ops(model, passes=apart) == ["Conv", "Add", "Relu"]
    assert_matches_ort(model, {"x": rand(2, 4, 6, 6)}, passes=apart)
    assert plan_ops(model) == ["Conv+Relu"]
    assert_matches_ort(model, {"x": rand(2, 4, 6, 6)})


def test_a_sum_read_elsewhere_is_not_fused():
    model = sum_read_elsewhere()
    assert plan_ops(model) == ["Conv", "Add", "Relu", "Sigmoid"]
    assert_matches_ort(model, {"x": rand(2, 4, 6, 6)})


def test_two_threads_split_the_fused_layer_like_the_conv():
    model = residual_block(downsample=True, stride=2)
    x = rand(4, 8, 11, 11, seed=5)
    one = dnnx.load(model, batch_size=4, passes={"fuse_conv_add_relu": False}).run(x)
    before = get_num_threads()
    set_num_threads(2)  # kernels are split at load
    try:
        two = dnnx.load(model, batch_size=4)
    finally:
        set_num_threads(before)
    fused = next(row for row in two.plan() if row["op"] == FUSED)
    assert fused["algorithm"].endswith("x2 threads"), fused
    np.testing.assert_allclose(two.run(x), one, rtol=1e-6, atol=1e-6)
