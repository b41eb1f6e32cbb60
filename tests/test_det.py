"""Det against onnxruntime: single and batched matrices, 1x1, singular and permuted ones."""
import numpy as np
import pytest
from onnx import helper

from ort_check import assert_matches_ort, make_model, rand


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (2, 3, 1, 1), (5, 5)])
def test_det_matches_ort(shape):
    model = make_model([helper.make_node("Det", ["x"], ["y"])], [("x", list(shape))], [("y", None)], opset=11)
    assert_matches_ort(model, {"x": rand(*shape)}, rtol=1e-4, atol=1e-5)


def test_det_singular_and_permutation():
    x = np.stack([np.array([[1, 2, 3], [2, 4, 6], [0, 1, 1]], np.float32),   # singular: 0
                  np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0]], np.float32),   # a cyclic permutation: +1
                  np.array([[0, 1, 0], [1, 0, 0], [0, 0, 1]], np.float32)])  # a swap: -1
    model = make_model([helper.make_node("Det", ["x"], ["y"])], [("x", [3, 3, 3])], [("y", None)], opset=11)
    assert_matches_ort(model, {"x": x}, atol=1e-6)
