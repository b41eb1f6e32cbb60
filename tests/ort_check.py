"""Shared test helpers: build small ONNX models and compare dnnx with onnxruntime."""
from __future__ import annotations

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
