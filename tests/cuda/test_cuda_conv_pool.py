"""Conv(+Relu) -> MaxPool as one layer on CUDA (the fuse_conv_pool pass, backends/cuda/conv/conv_pool_cuda.cc):
the direct kernel for small problems (and, through its one-channel and tiled paths, for 5x5 and 3x3
windows under a 2x2 pool at any batch), the cuDNN conv + pool pair otherwise, both against the CPU
backend and onnxruntime with the fp32 tolerances of cuda_check.py (the direct kernel sums in
another order than cuDNN: well inside RTOL 1e-4 / L2 2e-5 for these sizes); the pass switched off
gives the same results; the exhaustive planner times both and a second process reads its choice
from the plan cache."""
import json
import subprocess
import sys

import numpy as np
import pytest
from onnx import helper

import dnnx
from cuda_check import assert_close, check_cuda
from dnnx.examples import build
from ort_check import make_model, rand

DIRECT = "direct conv+pool kernel"
UNFUSED = {"fuse_conv_pool": False}


def conv_pool_model(x_shape, w_shape, relu=False, bias=True, conv=None, pool=None):
    w = (rand(*w_shape, seed=1) / np.sqrt(np.prod(w_shape[1:]))).astype(np.float32)
    inits, inputs = {"w": w}, ["x", "w"]
    if bias:
        inits["b"] = rand(w_shape[0], seed=2)
        inputs.append("b")
    nodes = [helper.make_node("Conv", inputs, ["c"], name="conv", **(conv or {}))]
    if relu:
        nodes.append(helper.make_node("Relu", ["c"], ["r"], name="relu"))
    pool_attrs = pool or {"kernel_shape": [2, 2], "strides": [2, 2]}
    nodes.append(helper.make_node("MaxPool", ["r" if relu else "c"], ["y"], name="pool", **pool_attrs))
    return make_model(nodes, [("x", x_shape)], [("y", None)], inits)


CASES = {
    "lenet_conv1": ([1, 1, 28, 28], [20, 1, 5, 5], {}, None),
    "lenet_conv2": ([1, 20, 12, 12], [50, 20, 5, 5], {}, None),
    "lenet_conv2_batch8": ([8, 20, 12, 12], [50, 20, 5, 5], {}, None),
    "pads_strides": ([2, 3, 15, 13], [6, 3, 3, 3], {"pads": [1, 0, 2, 1], "strides": [1, 2]}, None),
    "dilations": ([2, 4, 16, 16], [5, 4, 3, 3], {"dilations": [2, 2], "pads": [2, 2, 2, 2]}, None),
    "overlapping_pool": ([2, 3, 17, 17], [8, 3, 3, 3], {}, {"kernel_shape": [3, 3], "strides": [2, 2]}),
    "odd_plane_floor": ([1, 2, 11, 9], [4, 2, 2, 2], {}, None),
    # the kernel's launch forms (conv_pool_kernels.cu): few blocks stage the input in shared memory
    # (above), many blocks do not (below), nor does a plane too large to stage
    "pads_strides_many_blocks": ([40, 3, 15, 13], [8, 3, 3, 3], {"pads": [1, 0, 2, 1], "strides": [1, 2]}, None),
    "odd_plane_many_blocks": ([64, 2, 11, 9], [4, 2, 2, 2], {}, None),
    "plane_too_large_to_stage": ([1, 16, 40, 40], [4, 16, 3, 3], {}, None),
}


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("case", list(CASES))
def test_small_conv_pool_runs_as_one_direct_kernel(case, relu, bias):
    x_shape, w_shape, conv, pool = CASES[case]
    model = conv_pool_model(x_shape, w_shape, relu=relu, bias=bias, conv=conv, pool=pool)
    (row,) = dnnx.load(model, device="cuda").plan()
    assert row["op"] == ("Conv+Relu+MaxPool" if relu else "Conv+MaxPool"), row
    assert row["algorithm"].startswith(DIRECT) and row["math"] == "fp32 (FMA, direct kernel)", row
    assert row["workspace"] == 0 and any("within the direct kernel's bound" in why for _, why in row["rejected"]), row
    x = rand(*x_shape, seed=3)
    check_cuda(model, {"x": x})
    unfused = dnnx.load(model, device="cuda", passes=UNFUSED)
    assert [r["op"] for r in unfused.plan()][-1] == "MaxPool"
    assert_close(dnnx.load(model, device="cuda").run(x), unfused.run(x), "fused vs unfused")


@pytest.mark.parametrize("x_shape, w_shape", [
    ([256, 20, 16, 16], [50, 20, 4, 4]),  # a 4x4 window: no tiled path
    ([256, 20, 17, 17], [50, 20, 5, 5]),  # LeNet's conv2 shape: over 16 filters, cuDNN's
])
def test_large_batches_outside_the_tiled_path_run_the_cudnn_pair(x_shape, w_shape):
    model = conv_pool_model(x_shape, w_shape, relu=True)
    (row,) = dnnx.load(model, device="cuda").plan()
    assert ", then cudnnPoolingForward" in row["algorithm"], row
    assert [why for algo, why in row["rejected"] if algo == DIRECT and "over the direct kernel's bound" in why], row
    assert row["scratch"] >= 256 * 50 * 13 * 13 * 4, row  # the conv's output waits in the layer's scratch
    check_cuda(model, {"x": rand(*x_shape)})


TILED_CASES = {  # the direct kernel's tiled path (conv_pool_tiled_kernels.cu): several input channels,
    # up to 16 filters (Note [narrow convolutions] in conv_pool_cuda.cc), in chunks of 8
    "pytorch_lenet5_conv2_batch256": ([256, 6, 14, 14], [16, 6, 5, 5], {}),
    "cifar_conv2_padded": ([64, 12, 30, 30], [12, 12, 5, 5], {"pads": [1, 1, 1, 1]}),
    "3x3_padded": ([32, 16, 16, 16], [16, 16, 3, 3], {"pads": [1, 1, 1, 1]}),
    "5x5_asymmetric_pads_odd_plane": ([24, 3, 15, 14], [13, 3, 5, 5], {"pads": [2, 1, 0, 2]}),
    "more_pooled_outputs_than_threads": ([24, 4, 40, 40], [12, 4, 3, 3], {}),
}


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("case", list(TILED_CASES))
def test_tiled_conv_pool_at_large_batches_is_the_direct_kernel(case, relu, bias):
    x_shape, w_shape, conv = TILED_CASES[case]
    model = conv_pool_model(x_shape, w_shape, relu=relu, bias=bias, conv=conv)
    (row,) = dnnx.load(model, device="cuda").plan()
    assert row["algorithm"].startswith(DIRECT + ", tiled") and row["workspace"] == 0, row
    x = rand(*x_shape, seed=3)
    check_cuda(model, {"x": x})
    gpu = dnnx.load(model, device="cuda")
    np.testing.assert_array_equal(gpu.run(x), gpu.run(x))  # deterministic: a fixed summation order
    assert_close(gpu.run(x), dnnx.load(model, device="cuda", passes=UNFUSED).run(x), "tiled vs the cuDNN pair")


def test_exhaustive_search_times_the_tiled_path_against_the_pair():
    model = conv_pool_model([256, 20, 12, 12], [13, 20, 5, 5])
    (row,) = dnnx.load(model, device="cuda", algo_search="exhaustive", plan_cache=False).plan()
    timed = [why for _, why in row["rejected"] if "slower than the" in why]
    assert len(timed) == 1 and row["time_ms"] > 0, row
    if row["algorithm"].startswith(DIRECT):
        assert row["algorithm"].startswith(DIRECT + ", tiled") and "slower than the direct kernel" in timed[0], row
    check_cuda(model, {"x": rand(256, 20, 12, 12, seed=3)}, algo_search="exhaustive", plan_cache=False)


@pytest.mark.parametrize("pool, why", [
    ({"kernel_shape": [2, 2], "strides": [2, 2], "pads": [1, 1, 1, 1]}, "pads"),
    ({"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}, "ceil_mode"),
])
def test_pools_the_direct_kernel_does_not_take_run_as_the_pair(pool, why):
    model = conv_pool_model([2, 3, 13, 13], [4, 3, 3, 3], pool=pool)
    (row,) = dnnx.load(model, device="cuda").plan()
    assert row["op"] == "Conv+MaxPool" and ", then " in row["algorithm"], row
    assert [w for algo, w in row["rejected"] if algo == DIRECT and why in w], row
    check_cuda(model, {"x": rand(2, 3, 13, 13)})


def test_a_conv_output_read_elsewhere_is_not_fused():
    w = rand(4, 3, 3, 3, seed=1)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
             helper.make_node("MaxPool", ["c"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("ReduceMean", ["c"], ["m"], name="mean", keepdims=1)]
    model = make_model(nodes, [("x", [1, 3, 10, 10])], [("p", None), ("m", None)], {"w": w})
    assert [r["op"] for r in dnnx.load(model, device="cuda").plan()] == ["Conv", "MaxPool", "ReduceMean"]
    check_cuda(model, {"x": rand(1, 3, 10, 10)})


@pytest.mark.parametrize("batch", [1, 16, 256])
def test_lenet_layers_and_results(batch):
    gpu = dnnx.load(build("lenet"), device="cuda", batch_size=batch)
    ops = [row["op"] for row in gpu.plan()]
    assert ops[:2] == ["Conv+MaxPool", "Conv+MaxPool"] and "MaxPool" not in ops, ops
    if batch == 1:
        assert all(row["algorithm"].startswith(DIRECT) for row in gpu.plan()[:2])
    x = rand(batch, 1, 28, 28, seed=batch)
    check_cuda(build("lenet"), {"x": x}, ort=False)
    np.testing.assert_array_equal(gpu.run(x), gpu.run(x))  # deterministic: a fixed summation order


PROCESS = """
import json, sys
import dnnx
from dnnx.examples import build
m = dnnx.load(build("lenet"), device="cuda", algo_search="exhaustive", batch_size=4, plan_cache=sys.argv[1])
rows = [[r["op"], r["algorithm"], r["time_ms"]] for r in m.plan() if "MaxPool" in r["op"]]
print(json.dumps({"stats": m.planner_stats(), "rows": rows}))
"""


def test_exhaustive_search_times_both_and_a_second_process_times_nothing(tmp_path):
    cache = tmp_path / "plan-cache.json"

    def process():
        done = subprocess.run([sys.executable, "-c", PROCESS, str(cache)], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout.strip().splitlines()[-1])

    first = process()
    assert first["stats"]["timing_runs"] >= 2, first  # each conv+pool layer timed both ways
    assert len(first["rows"]) == 2 and all(time is not None and time > 0 for _, _, time in first["rows"]), first
    keys = [k for k in json.loads(cache.read_text())["entries"] if k.startswith("conv+pool fwd")]
    assert len(keys) == 2, keys
    second = process()
    assert second["stats"]["timing_runs"] == 0, second
    assert [r[2] for r in second["rows"]] == [r[2] for r in first["rows"]], (first, second)
    x = rand(4, 1, 28, 28)
    gpu = dnnx.load(build("lenet"), device="cuda", algo_search="exhaustive", batch_size=4, plan_cache=cache)
    assert_close(gpu.run(x), dnnx.load(build("lenet")).run(x), "exhaustive lenet vs cpu")


ONE_CHANNEL_CASES = {  # the direct kernel's one-input-channel path (conv_pool_c1_kernels.cu)
    "lenet_conv1_batch256": ([256, 1, 28, 28], [20, 1, 5, 5], {}),
    "3x3_padded_odd_pooled_width": ([64, 1, 15, 14], [7, 1, 3, 3], {"pads": [1, 1, 1, 1]}),
    "5x5_asymmetric_pads": ([33, 1, 20, 17], [12, 1, 5, 5], {"pads": [2, 1, 0, 2]}),
    "more_filters_than_a_block": ([16, 1, 12, 12], [96, 1, 3, 3], {}),
}


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("case", list(ONE_CHANNEL_CASES))
def test_one_channel_conv_pool_at_any_batch_is_the_direct_kernel_and_matches_the_pair_bit_for_bit(case, relu, bias):
    x_shape, w_shape, conv = ONE_CHANNEL_CASES[case]
    model = conv_pool_model(x_shape, w_shape, relu=relu, bias=bias, conv=conv)
    (row,) = dnnx.load(model, device="cuda").plan()
    assert row["algorithm"].startswith(DIRECT + ", 1 input channel"), row
    x = rand(*x_shape, seed=3)
    check_cuda(model, {"x": x})
    # The pair (the direct one-channel conv, then cuDNN's pool) sums the same taps in the same order.
    unfused = dnnx.load(model, device="cuda", passes=UNFUSED)
    assert unfused.plan()[0]["algorithm"].startswith("direct (1 input channel)"), unfused.plan()
    np.testing.assert_array_equal(dnnx.load(model, device="cuda").run(x), unfused.run(x))


def test_one_channel_batch_1_keeps_the_few_blocks_launch():
    model = conv_pool_model([1, 1, 28, 28], [20, 1, 5, 5])
    (row,) = dnnx.load(model, device="cuda").plan()
    assert row["algorithm"].startswith(DIRECT) and "1 input channel" not in row["algorithm"], row
    check_cuda(model, {"x": rand(1, 1, 28, 28, seed=3)})
