"""Cast between float32, float64, float16, int32 and int64 against onnxruntime (bool:
tests/test_int_bool_ops.py; every other type: tests/test_dtypes.py); a type dnnx has none of is
refused at load."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import dnnx
from ort_check import assert_matches_ort, make_model

TYPES = {TensorProto.FLOAT: np.float32, TensorProto.INT32: np.int32, TensorProto.INT64: np.int64,
         TensorProto.DOUBLE: np.float64, TensorProto.FLOAT16: np.float16}


@pytest.mark.parametrize("src", list(TYPES))
@pytest.mark.parametrize("dst", list(TYPES))
def test_cast_matches_ort(src, dst):
    model = make_model([helper.make_node("Cast", ["x"], ["y"], to=dst)], [("x", [2, 5], src)], [("y", None, dst)])
    x = np.array([[-2.7, -1.5, -0.2, 0.0, 0.4], [1.5, 2.9, 100.25, -100.75, 7.0]]).astype(TYPES[src])
    got = assert_matches_ort(model, {"x": x})
    assert got["y"].dtype == TYPES[dst]


@pytest.mark.parametrize("to,name", [(TensorProto.COMPLEX64, "COMPLEX64"), (TensorProto.FLOAT8E8M0, "FLOAT8E8M0")])
def test_cast_to_other_types_is_refused(to, name):
    node = helper.make_node("Cast", ["x"], ["y"], name="cast_x", to=to)
    model = make_model([node], [("x", [2])], [("y", [2], to)])
    with pytest.raises(dnnx.UnsupportedModelError, match=f"cast_x.*cast to {name} is not supported"):
        dnnx.load(model)
