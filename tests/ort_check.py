"""Shared test helpers: build small ONNX models and compare dnnx with onnxruntime."""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import dnnx

FP32_RTOL = 1e-4  # float32 on the CPU: summation order differs from onnxruntime's, nothing else
FP32_ATOL = 1e-5


def make_model(nodes, inputs, outputs, initializers=(), opset=17):
    """nodes: onnx NodeProtos; inputs/outputs: (name, shape) or (name, shape, elem_type);
    initializers: {name: numpy array} or a list of TensorProtos."""

    def vi(spec):
        name, shape = spec[0], spec[1]
        elem = spec[2] if len(spec) > 2 else TensorProto.FLOAT
        return helper.make_tensor_value_info(name, elem, shape)

    if isinstance(initializers, dict):
        initializers = [numpy_helper.from_array(np.asarray(v), k) for k, v in initializers.items()]
    graph = helper.make_graph(list(nodes), "test", [vi(s) for s in inputs], [vi(s) for s in outputs],
                              initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = min(model.ir_version, 10)  # onnxruntime may lag the onnx package
    model = onnx.shape_inference.infer_shapes(model)  # fills outputs given with shape None
    onnx.checker.check_model(model)
    return model


def run_ort(model, feeds):
    import onnxruntime as ort

    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(None, feeds)))


@lru_cache(maxsize=1)
def ort_int8_exact() -> bool:
    """Whether onnxruntime's uint8 x int8 products are exact on this CPU. ONNX's integer ops are
    exact; MLAS's AVX2 kernel (an x86 CPU without VNNI) sums pairs of them in int16 with
    vpmaddubsw and saturates there (255 x 127 x 64 comes out as 32767 x 32), which dnnx does not
    (Note in engine/backends/cpu/quant/int8_gemm_cpu.h). Where it saturates, the int8 tests
    compare dnnx with an exact reference instead: qdq_reference_session, exact_int8_reference."""
    import onnxruntime as ort

    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", ["a", "b"], ["y"])], "probe",
        [helper.make_tensor_value_info("a", TensorProto.UINT8, [1, 64])],
        [helper.make_tensor_value_info("y", TensorProto.INT32, [1, 1])],
        [numpy_helper.from_array(np.full((64, 1), 127, np.int8), "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = min(model.ir_version, 10)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    y = sess.run(None, {"a": np.full((1, 64), 255, np.uint8)})[0]
    return int(y[0, 0]) == 255 * 127 * 64


def qdq_reference_session(model_bytes: bytes, options=None):
    """onnxruntime's session for a QDQ model: as it is where onnxruntime's int8 products are exact
    (ort_int8_exact), else with graph optimizations off, which runs the graph's own float meaning
    (DequantizeLinear, the float op, QuantizeLinear) instead of its saturating int8 kernels."""
    import onnxruntime as ort

    if not ort_int8_exact():
        options = options or ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(model_bytes, options, providers=["CPUExecutionProvider"])


def unsigned_weights(model):
    """A copy of `model` with every int8 initializer made uint8 (+128): the weights of a one-node
    integer model (B and its zero point), whose products with uint8 activations then run through
    onnxruntime's exact uint8 x uint8 kernel ((A - a_zp)(B + 128 - (b_zp + 128)) is the same sum).
    A weight without a zero point must have one given (0 as int8, 128 as uint8)."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    for t in out.graph.initializer:
        if t.data_type == TensorProto.INT8:
            shifted = (numpy_helper.to_array(t).astype(np.int16) + 128).astype(np.uint8)
            t.CopyFrom(numpy_helper.from_array(shifted, t.name))
    return out


def assert_matches_ort(model, feeds, rtol=FP32_RTOL, atol=FP32_ATOL, **load_kwargs):
    """Runs the model in dnnx and onnxruntime on the same feeds and compares every output."""
    expected = run_ort(model, feeds)
    got = dnnx.load(model, **load_kwargs).run_dict(feeds)
    assert set(got) == set(expected)
    for name, want in expected.items():
        assert got[name].shape == want.shape, f"{name}: shape {got[name].shape} != {want.shape}"
        np.testing.assert_allclose(got[name], want, rtol=rtol, atol=atol, err_msg=name)
    return got


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def assert_same_bits_on_one_and_two_threads(model, *inputs):
    """Loads and runs the model on 1 and then 2 CPU threads (the thread count is read at plan time)
    and checks that every output is bit-identical; restores the thread count."""
    outs, before = [], dnnx.threads.get_num_threads()
    try:
        for t in (1, 2):
            dnnx.threads.set_num_threads(t)
            outs.append(dnnx.load(model).run(*inputs))
    finally:
        dnnx.threads.set_num_threads(before)
    np.testing.assert_array_equal(outs[0], outs[1])
    return outs[0]
