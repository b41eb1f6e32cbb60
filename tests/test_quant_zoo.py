"""The quantized files of ../shared/external/zoo2 (onnxruntime's quantization tool: QDQ,
QOperator and dynamic quantization) against onnxruntime on the CPU: the outputs within one
quantization step (zoo.tol, relative to the output's largest magnitude). Skips when the shared
models are absent."""
import numpy as np
import pytest

import dnnx
from zoo_check import zoo2_inputs, zoo2_model


def tolerance(model):
    from bench_modules import bench_module

    return bench_module("_external_models").quantization_tolerance(model)


def ort_first_output(model, feeds):
    """(the first output's name, onnxruntime's value of it on the CPU)."""
    import onnxruntime as ort

    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    first = sess.get_outputs()[0].name
    return first, sess.run([first], feeds)[0]


def assert_within_one_step(name, model, got, want):
    """got is want within the model's quantization step, relative to want's largest magnitude."""
    assert got.shape == want.shape and got.dtype == want.dtype
    err = float(np.max(np.abs(got.astype(np.float64) - want)) / np.max(np.abs(want)))
    assert err <= tolerance(model), f"{name}: {err:.4f} of the largest output apart"


@pytest.mark.parametrize("name, batch", [("q_qdq_regnety_002", 1), ("q_qdq_regnety_002", 2),
                                         ("q_qop_efficientnet_b0", 1), ("q_qop_efficientnet_b0", 2),
                                         ("q_dyn_bert", 1), ("q_dyn_bert", 3)])
def test_quantized_zoo_model_matches_onnxruntime(name, batch):
    model = zoo2_model(name)
    feeds = zoo2_inputs(name, model, batch)
    first, want = ort_first_output(model, feeds)
    got = dnnx.load(model).run_dict(feeds)[first]
    assert_within_one_step(name, model, got, want)
