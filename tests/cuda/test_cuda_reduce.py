"""The Reduce* ops on CUDA over cells of many elements (a block per cell, Note [reduce by block])
and of few (a thread per cell), against the CPU backend and onnxruntime: every kind, reduced axes
leading, trailing, in the middle and all of them (SSDlite's max over all its boxes), float32 and
ReduceMean's half storage. Max and Min are exact; a sum's order differs (a tree in the block, a
line on the CPU), so Sum, Mean, L1, L2, SumSquare, LogSum, LogSumExp (whose expf is within 2 ulp
of glibc's) and Prod compare within float32 rounding of up to 108,000
terms: two orders differ by about sqrt(n) * 2^-24 * the terms' size (2e-5 of the total for
n = 108,000), so rtol 1e-4, with atol 1e-4 for sums of normal terms that land near 0."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import dnnx
from ort_check import make_model, run_ort

RNG = np.random.default_rng(38)
OPS = ["ReduceMax", "ReduceMin", "ReduceSum", "ReduceMean", "ReduceL2", "ReduceProd", "ReduceL1", "ReduceSumSquare",
       "ReduceLogSum", "ReduceLogSumExp"]


def reduce_model(op, shape, axes, keepdims, elem=TensorProto.FLOAT):
    # ReduceSum takes axes as an input from opset 13, the others from 18: opset 13 with axes as
    # an attribute for those, an initializer for ReduceSum.
    inits = {}
    if op == "ReduceSum":
        inits["axes"] = np.array(axes, np.int64)
        node = helper.make_node(op, ["x", "axes"], ["y"], keepdims=keepdims, name="under_test")
    else:
        node = helper.make_node(op, ["x"], ["y"], axes=axes, keepdims=keepdims, name="under_test")
    return make_model([node], [("x", list(shape), elem)], [("y", None, elem)], inits, opset=13)


def data(op, shape):
    if op == "ReduceProd":  # near 1: a product of thousands stays finite
        return (1 + RNG.uniform(-1e-3, 1e-3, shape)).astype(np.float32)
    if op == "ReduceLogSum":  # positive terms: the log of their sum is defined
        return RNG.uniform(0.5, 1.5, shape).astype(np.float32)
    return RNG.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("shape, axes", [((27000, 4), [0, 1]), ((6, 5000), [1]), ((3000, 7), [0]),
                                         ((4, 300, 9), [1]), ((2, 3, 40), [2]), ((64, 500), [0, 1])], ids=str)
def test_reduce_large_and_small_cells(op, shape, axes):
    x = data(op, shape)
    model = reduce_model(op, shape, axes, keepdims=0)
    gpu = dnnx.load(model, device="cuda")
    row = [r for r in gpu.plan() if r["name"] == "under_test"][0]
    count = int(np.prod([shape[a] for a in axes]))
    assert row["algorithm"] == ("direct kernel, a block per cell" if count >= 128 else "direct kernel"), row
    exact = op in ("ReduceMax", "ReduceMin")
    rtol = 0.0 if exact else 1e-4
    for ref in (dnnx.load(model).run_dict({"x": x})["y"], run_ort(model, {"x": x})["y"]):
        for _ in range(2):
            got = gpu.run(x)
            assert got.shape == ref.shape
            np.testing.assert_allclose(got, ref, rtol=rtol, atol=0 if exact else 1e-4)


def test_reduce_mean_half_storage_over_a_large_cell():
    x = RNG.standard_normal((4, 8, 3000)).astype(np.float32)
    model = reduce_model("ReduceMean", x.shape, [2], keepdims=1)
    got = dnnx.load(model, device="cuda", precision="fp16").run(x)
    want = x.astype(np.float16).astype(np.float32).mean(axis=2, keepdims=True)
    # fp16 storage: the result rounds to fp16 (2^-11 relative) after a float sum
    np.testing.assert_allclose(got, want, rtol=2e-3, atol=1e-3)


def test_reduce_with_nan_in_a_large_cell_matches_the_cpu():
    x = RNG.standard_normal((5, 4000)).astype(np.float32)
    x[1, 17] = np.nan
    for op in ("ReduceMax", "ReduceMin", "ReduceSum"):
        model = reduce_model(op, x.shape, [1], keepdims=0)
        want = dnnx.load(model).run(x)
        got = dnnx.load(model, device="cuda").run(x)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, equal_nan=True, err_msg=op)
