"""The ONNX backend node tests that ship inside the onnx package, run through dnnx's
onnx.backend adapter (dnnx.backend); their data folders are read directly so that only in-scope
cases appear for every operator dnnx supports.

Every in-scope case runs; the cases below are excluded, each with its reason."""
import re

import numpy as np
import pytest
from onnx.backend.test.loader import load_model_tests

import dnnx.backend

IN_SCOPE = [
    r"test_(add|sub|mul|div)(_.*)?_cpu$",
    r"test_concat_.*_cpu$",
    r"test_constant_cpu$",
    r"test_conv_.*_cpu$",
    r"test_dropout_.*_cpu$",
    r"test_flatten_.*_cpu$",
    r"test_gemm_.*_cpu$",
    r"test_identity(_.*)?_cpu$",
    r"test_(log)?softmax_.*_cpu$",
    r"test_lstm_.*_cpu$",
    r"test_matmul_.*_cpu$",
    r"test_maxpool_.*_cpu$",
    r"test_relu(_.*)?_cpu$",
    r"test_reshape_.*_cpu$",
    r"test_(sigmoid|tanh)(_.*)?_cpu$",
    r"test_(un)?squeeze(_.*)?_cpu$",
    r"test_transpose_.*_cpu$",
]

EXCLUDED = {
    r"test_(add|sub|mul|div)_u?int(8|16|32|64).*": "integer arithmetic: dnnx computes in float32 only",
    r"test_div_int32_trunc.*": "integer arithmetic: dnnx computes in float32 only",
    r"test_maxpool_2d_uint8.*": "uint8 tensors: dnnx computes in float32 only",
    r"test_maxpool_with_argmax_.*": "MaxPool's Indices output is refused at load (UnsupportedModelError)",
    r"test_dropout_default_mask.*": "Dropout's mask output (bool) is refused at load: inference only",
    r"test_identity_(sequence|opt).*": "sequence and optional types: dnnx runs tensors only",
    r".*_expanded(_ver18)?_cpu$": "function-expanded variants use ops outside the supported set",
    r"test_(reshape|squeeze|unsqueeze)_.*": "these cases feed the shape/axes as a run-time graph input; dnnx "
                                          "plans shapes at load and needs them constant (initializer or "
                                          "Constant), as exported models have them",
    r"test_squeeze_cpu$": "as above: axes fed as a run-time graph input",
}


def _selected_cases():
    cases = []
    for case in load_model_tests(kind="node"):
        name = case.name + "_cpu"
        if not any(re.match(p, name) for p in IN_SCOPE):
            continue
        if any(re.match(p, name) for p in EXCLUDED):
            continue
        cases.append(case)
    return cases


@pytest.mark.parametrize("case", _selected_cases(), ids=lambda c: c.name)
def test_onnx_node_case(case):
    rep = dnnx.backend.prepare(case.model, "CPU")
    assert case.data_sets, f"{case.name}: no test data"
    for inputs, expected in case.data_sets:
        outputs = rep.run(list(inputs))
        assert len(outputs) == len(expected)
        for got, want in zip(outputs, expected):
            assert got.shape == want.shape
            # the suite's own tolerances (rtol 1e-3, atol 1e-7), as onnx's runner applies them
            np.testing.assert_allclose(got, want, rtol=case.rtol, atol=case.atol)


def test_exclusions_have_reasons():
    assert all(reason for reason in EXCLUDED.values())
