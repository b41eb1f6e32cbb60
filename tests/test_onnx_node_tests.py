"""The ONNX backend node tests that ship inside the onnx package, run through dnnx's
onnx.backend adapter (dnnx.backend); their data folders are read directly so that only in-scope
cases appear for every operator dnnx supports.

Every in-scope case runs; the cases below are excluded, each with its reason."""
import re

import numpy as np
import pytest
from onnx import TensorProto, numpy_helper
from onnx.backend.test.loader import load_model_tests

import dnnx.backend

IN_SCOPE = [
    r"test_(add|sub|mul|div)(_.*)?_cpu$",
    r"test_averagepool_.*_cpu$",
    r"test_batchnorm_.*_cpu$",
    r"test_cast_.*_cpu$",
    r"test_castlike_.*_cpu$",
    r"test_clip(_.*)?_cpu$",
    r"test_constantofshape_.*_cpu$",
    r"test_(constant|edge|reflect|wrap)_pad(_.*)?_cpu$",
    r"test_elu(_.*)?_cpu$",
    r"test_selu(_.*)?_cpu$",
    r"test_expand_.*_cpu$",
    r"test_gather_(\d|2d_indices|negative_indices).*_cpu$",
    r"test_global(average|max)pool(_.*)?_cpu$",
    r"test_leakyrelu(_.*)?_cpu$",
    r"test_lrn(_.*)?_cpu$",
    r"test_(max|min|sum)_.*_cpu$",
    r"test_reduce_mean_.*_cpu$",
    r"test_shape(_.*)?_cpu$",
    r"test_slice(_.*)?_cpu$",
    r"test_split_(equal|variable|zero|1d|2d).*_cpu$",
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
    r"test_neg(_.*)?_cpu$",
    r"test_maxpool_.*_cpu$",
    r"test_relu(_.*)?_cpu$",
    r"test_reshape_.*_cpu$",
    r"test_(sigmoid|tanh)(_.*)?_cpu$",
    r"test_(un)?squeeze(_.*)?_cpu$",
    r"test_transpose_.*_cpu$",
    # integer and bool values (issue #14)
    r"test_abs(_.*)?_cpu$",
    r"test_mod_.*_cpu$",
    r"test_(equal|less|greater)(_.*)?_cpu$",
    r"test_not_.*_cpu$",
    r"test_(and|or|xor)(\d|_).*_cpu$",
    r"test_where_.*_cpu$",
    r"test_range_.*_cpu$",
    # issue #15: the unary math ops, Pow, PRelu, the normalizations (Dropout's mask: test_dropout_ above)
    r"test_(exp|log|sqrt|reciprocal|erf|softplus|mish|hardswish)(_example)?_cpu$",
    r"test_gelu_.*_cpu$",
    r"test_hardsigmoid(_.*)?_cpu$",
    r"test_pow(_.*)?_cpu$",
    r"test_prelu_.*_cpu$",
    r"test_layer_normalization_.*_cpu$",
    r"test_instancenorm_.*_cpu$",
    r"test_group_normalization_.*_cpu$",
    # issue #15: resampling, transposed conv, reductions, indexing
    r"test_resize_.*_cpu$",
    r"test_upsample_.*_cpu$",
    r"test_convtranspose.*_cpu$",
    r"test_reduce_sum_(do_not|keep|default|negative|empty).*_cpu$",
    r"test_reduce_(max|min|prod|l2)_.*_cpu$",
    r"test_gather_elements_.*_cpu$",
    r"test_scatternd(_.*)?_cpu$",
    r"test_tile(_.*)?_cpu$",
    r"test_top_k(_.*)?_cpu$",
    r"test_arg(max|min)_.*_cpu$",
    # issue #15: GRU and RNN
    r"test_gru_.*_cpu$",
    r"test_rnn_.*_cpu$",
    r"test_simple_rnn_.*_cpu$",
]

EXCLUDED = {
    r"test_equal_string.*": "string tensors: dnnx runs numeric and bool tensors only",
    r"test_maxpool_2d_uint8.*": "uint8 tensors: dnnx computes in float32 only",
    r"test_identity_(sequence|opt).*": "sequence and optional types: dnnx runs tensors only",
    r".*_expanded(_ver18)?_cpu$": "function-expanded variants use ops outside the supported set",
    r"test_batchnorm_.*_training_mode.*": "training_mode=1 (batch statistics, running-mean outputs) is refused "
                                          "at load: inference only",
    r"test_cast(like)?_.*INT2.*": "int2/uint2 tensors: dnnx has no such dtype",
    r"test_cast(like)?_.*(STRING|E8M0).*": "string and float8e8m0 tensors: dnnx has no such dtype",
    r"test_clip_default_int8.*": "int8 tensors: dnnx's dtypes are float32, int32, int64 and bool",
    r"test_pow_types_(int32|int64)_.*": "an integer base: dnnx's Pow takes a float32 base (its exponent may be "
                                        "float32, int32 or int64)",
    r"test_pow_types_float32_uint(32|64).*": "unsigned integer exponents: dnnx's dtypes are float32, int32, int64 "
                                             "and bool",
    r"test_reduce_(max|min)_(bool_inputs|empty_set_bool).*": "bool inputs: dnnx's Reduce* ops take float32",
    r"test_top_k_uint64.*": "uint64 tensors: dnnx's dtypes are float32, int32, int64 and bool",
}

def _array(value):
    """A case's input or output as numpy: the Cast cases store some as TensorProtos (onnx's runner
    converts them the same way)."""
    return numpy_helper.to_array(value) if isinstance(value, TensorProto) else value


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
    # Shape-like inputs (a Reshape's shape, Slice's starts, ...) fed as graph inputs are value
    # inputs: their values join the plan key (Note [value inputs]), so they are fed as the case has them.
    rep = dnnx.backend.prepare(case.model, "CPU")
    assert case.data_sets, f"{case.name}: no test data"
    for inputs, expected in case.data_sets:
        inputs, expected = [_array(v) for v in inputs], [_array(v) for v in expected]
        outputs = rep.run(inputs)
        assert len(outputs) == len(expected)
        for got, want in zip(outputs, expected):
            assert got.shape == want.shape
            assert got.dtype == want.dtype  # every type comes back as itself (ml_dtypes' for float8, ...)
            if want.dtype.kind == "V":  # ml_dtypes (bfloat16, float8, int4, ...): compared as float32
                got, want = got.astype(np.float32), want.astype(np.float32)
            # the suite's own tolerances (rtol 1e-3, atol 1e-7), as onnx's runner applies them
            np.testing.assert_allclose(got, want, rtol=case.rtol, atol=case.atol)


def test_exclusions_have_reasons():
    assert all(reason for reason in EXCLUDED.values())
