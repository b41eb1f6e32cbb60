"""The types CUDA's kernels were not written for (int8, uint64, float8, ...: Note [dtypes] in
engine/ir/tensor.h) inside CUDA plans: CudaBackend::plan_node refuses such nodes, so they run on
the host (Note [host fallback]), and graph inputs and outputs of those types cross to and from
the device as bytes. float64, float16 and bfloat16 are float32 inside a device model, converted
at the graph's edges (python/dnnx/_edges.py)."""
import warnings

import ml_dtypes
import numpy as np
from onnx import TensorProto as T, helper

import dnnx
from ort_check import make_model, run_ort


def _load(model):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dnnx.HostFallbackWarning)
        return dnnx.load(model, device="cuda")


def test_int8_and_uint64_nodes_run_on_the_host_with_onnxruntime_values():
    nodes = [helper.make_node("Add", ["a", "b"], ["s"], name="add_int8"),
             helper.make_node("Cast", ["s"], ["u"], to=T.UINT64, name="to_u64"),
             helper.make_node("Mul", ["u", "u"], ["y"], name="mul_u64")]
    model = make_model(nodes, [("a", [2, 3], T.INT8), ("b", [3], T.INT8)], [("y", [2, 3], T.UINT64)], opset=14)  # Add takes int8 from opset 14
    m = _load(model)
    hosts = {r["name"] for r in m.plan() if r["algorithm"].startswith("on the host")}
    assert {"add_int8", "to_u64", "mul_u64"} <= hosts, m.plan()
    feeds = {"a": np.array([[1, -2, 100], [127, -128, 5]], np.int8), "b": np.array([3, -4, 100], np.int8)}
    got = m.run_dict(feeds)["y"]
    want = run_ort(model, feeds)["y"]
    assert got.dtype == np.uint64
    np.testing.assert_array_equal(got, want)


def test_float8_data_movement_between_device_layers():
    nodes = [helper.make_node("Cast", ["x"], ["q"], to=T.FLOAT8E4M3FN, name="quant"),
             helper.make_node("Transpose", ["q"], ["t"], perm=[1, 0]),
             helper.make_node("Cast", ["t"], ["y"], to=T.FLOAT, name="dequant"),
             helper.make_node("Relu", ["y"], ["r"])]
    model = make_model(nodes, [("x", [2, 3])], [("r", [3, 2]), ("q", [2, 3], T.FLOAT8E4M3FN)], opset=19)
    x = np.array([[0.3, -1.7, 500.0], [2.2, 0.0, -3.1]], np.float32)
    r, q = _load(model).run(x)
    want_q = x.astype(ml_dtypes.float8_e4m3fn)  # saturate=1: 500 clips to 448
    want_q[0, 2] = ml_dtypes.float8_e4m3fn(448)
    np.testing.assert_array_equal(q.view(np.uint8), want_q.view(np.uint8))
    np.testing.assert_array_equal(r, np.maximum(want_q.astype(np.float32).T, 0))


def test_float64_model_is_float32_inside_with_its_edges_converted():
    model = make_model([helper.make_node("Add", ["a", "b"], ["y"])], [("a", [3], T.DOUBLE), ("b", [3], T.DOUBLE)],
                       [("y", [3], T.DOUBLE)])
    m = _load(model)
    assert "a: float64 -> float32 at the input edge" in m.plan().notes
    y = m.run_dict({"a": np.ones(3), "b": np.array([0.5, 1e-3, -2.0])})["y"]
    assert y.dtype == np.float64
    np.testing.assert_allclose(y, [1.5, 1.001, -1.0], rtol=1e-6)
