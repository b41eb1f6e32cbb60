"""Ops without CUDA kernels (Hardmax, MeanVarianceNormalization, LpNormalization) and MaxPool with its Indices
output (which CUDA refuses) run on the host inside a CUDA plan (Note [host fallback]): the plan
says so, and the outputs are the CPU backend's, exactly (the host layer is the CPU kernel; the
device layers around it are fp32 and exact here). Tile, ArgMax, ArgMin, GatherElements, ScatterND
and TopK, which ran there before, have device kernels now: tests/cuda/test_cuda_indexing.py."""
import warnings

import numpy as np
import pytest
from onnx import TensorProto, helper

import dnnx
from ort_check import make_model

RNG = np.random.default_rng(21)
I64 = TensorProto.INT64


def relu_then(node, inputs, outputs, inits, opset=18):
    """x -> Relu (on the device) -> the node under test (name "under_test")."""
    return make_model([helper.make_node("Relu", ["x"], ["r"]), node], inputs, outputs, inits, opset=opset)


CASES = {
    "Hardmax": (helper.make_node("Hardmax", ["r"], ["y"], axis=2, name="under_test"), {}, [("y", None)]),
    "MeanVarianceNormalization": (helper.make_node("MeanVarianceNormalization", ["r"], ["y"], axes=[0, 2],
                                                   name="under_test"), {}, [("y", None)]),
    "LpNormalization": (helper.make_node("LpNormalization", ["r"], ["y"], axis=1, p=2, name="under_test"), {},
                        [("y", None)]),
}


@pytest.mark.parametrize("op", sorted(CASES))
def test_an_op_without_a_cuda_kernel_runs_on_the_host_in_a_cuda_plan(op):
    node, inits, outputs = CASES[op]
    model = relu_then(node, [("x", [2, 4, 5])], outputs, inits)
    with pytest.warns(dnnx.HostFallbackWarning, match="under_test"):
        m = dnnx.load(model, device="cuda")
    assert [r["name"] for r in m.plan() if r["algorithm"].startswith("on the host")] == ["under_test"], m.plan()
    cpu = dnnx.load(model)
    for step in range(3):  # eager, capture, replay
        x = RNG.standard_normal((2, 4, 5)).astype(np.float32)
        got, want = m.run(x), cpu.run(x)
        for g, w in zip(got if isinstance(got, (list, tuple)) else [got], want if isinstance(want, (list, tuple)) else [want]):
            np.testing.assert_array_equal(g, w)


def test_max_pool_indices_run_on_the_host_in_a_cuda_plan():
    node = helper.make_node("MaxPool", ["r"], ["y", "i"], kernel_shape=[2, 2], strides=[2, 2], name="under_test")
    model = relu_then(node, [("x", [2, 3, 6, 6])], [("y", None), ("i", None, I64)], {}, opset=13)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dnnx.HostFallbackWarning)
        m = dnnx.load(model, device="cuda")
    rows = [r for r in m.plan() if r["name"] == "under_test"]
    assert rows and rows[0]["algorithm"].startswith("on the host"), m.plan()
    x = RNG.standard_normal((2, 3, 6, 6)).astype(np.float32)
    for g, w in zip(m.run(x), dnnx.load(model).run(x)):
        np.testing.assert_array_equal(g, w)
