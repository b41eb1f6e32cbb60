"""The ONNX backend node tests that ship inside the onnx package, run through dnnx's
onnx.backend adapter (dnnx.backend) for every operator dnnx supports.

Every in-scope case runs; the cases below are excluded, each with its reason."""
import unittest

import onnx.backend.test

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
}


def build_cases():
    backend_test = onnx.backend.test.BackendTest(dnnx.backend, __name__)
    for pattern in IN_SCOPE:
        backend_test.include(pattern)
    for pattern in EXCLUDED:
        backend_test.exclude(pattern)
    return backend_test.test_cases


for _name, _case in build_cases().items():
    if issubclass(_case, unittest.TestCase):
        globals()[_name] = _case
