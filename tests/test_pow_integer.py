"""Pow with an int32/int64 base and with any integer exponent (unsigned ones too) on the CPU:
onnxruntime's double pow cast back, its lowest value where the double is NaN or out of range
(Note [integer pow] in engine/backends/cpu/elementwise/pow_prelu_cpu.cc)."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import dnnx
from ort_check import assert_matches_ort, make_model

NP = {TensorProto.INT32: np.int32, TensorProto.INT64: np.int64, TensorProto.FLOAT: np.float32,
      TensorProto.DOUBLE: np.float64, TensorProto.UINT8: np.uint8, TensorProto.UINT64: np.uint64,
      TensorProto.INT8: np.int8, TensorProto.UINT32: np.uint32}


def _model(base, exponent, x_shape, y_shape):
    return make_model([helper.make_node("Pow", ["x", "y"], ["z"], name="pow")],
                      [("x", x_shape, base), ("y", y_shape, exponent)], [("z", None, base)], opset=15)


@pytest.mark.parametrize("base", [TensorProto.INT32, TensorProto.INT64])
@pytest.mark.parametrize("exponent", [TensorProto.INT32, TensorProto.INT64, TensorProto.FLOAT, TensorProto.DOUBLE])
def test_integer_base_matches_ort(base, exponent):
    x = np.array([[2, -3, 0, 5, 1, -1, 7, 10]], NP[base])
    y = np.array([[3], [0], [-1], [2]]).astype(NP[exponent])  # broadcast [1,8] ^ [4,1]
    got = assert_matches_ort(_model(base, exponent, [1, 8], [4, 1]), {"x": x, "y": y}, rtol=0, atol=0)
    assert got["z"].dtype == NP[base]


@pytest.mark.parametrize("base", [TensorProto.INT32, TensorProto.INT64])
def test_integer_base_undefined_results_match_ort(base):
    # 0^-1 (inf), (-8)^0.5 (NaN), 3^40 (past int32's range), 3^39 (past double's 53 bits), 8^(1/3)
    x = np.array([0, -8, 3, 3, 8], NP[base])
    y = np.array([-1.0, 0.5, 40.0, 39.0, 1 / 3], np.float64)
    assert_matches_ort(_model(base, TensorProto.DOUBLE, [5], [5]), {"x": x, "y": y}, rtol=0, atol=0)


@pytest.mark.parametrize("base", [TensorProto.INT64, TensorProto.FLOAT])
@pytest.mark.parametrize("exponent", [TensorProto.UINT8, TensorProto.INT8, TensorProto.UINT32, TensorProto.UINT64])
def test_narrow_and_unsigned_exponents(base, exponent):
    # onnx allows every integer exponent type; onnxruntime's CPU kernel has none of these, so
    # the expectation is numpy's (exact for these small values)
    x = np.array([2, -3, 5, 1], NP[base])
    y = np.array([3, 2, 0, 100], NP[exponent])
    got = dnnx.load(_model(base, exponent, [4], [4])).run_dict({"x": x, "y": y})["z"]
    want = np.power(x.astype(np.float64), y.astype(np.float64)).astype(NP[base])
    np.testing.assert_array_equal(got, want)


def test_other_integer_bases_are_refused():
    with pytest.raises(dnnx.UnsupportedModelError, match="pow.*base X must be a float type, int32 or int64, got int8"):
        dnnx.load(_model(TensorProto.INT8, TensorProto.INT8, [2], [2]))
