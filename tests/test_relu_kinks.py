"""bench/_relu_kinks.py, which the whole-network CUDA gradient tests use to pick inputs away from
the kinks of a ReLU network: the smallest |Relu input| and the smallest gap between a MaxPool
window's two largest values, on models where both are known by construction."""
import numpy as np
import pytest
from onnx import helper

from bench_modules import bench_module
from ort_check import make_model

kinks = bench_module("_relu_kinks")


def relu_then_pool():
    nodes = [helper.make_node("Relu", ["x"], ["r"]),
             helper.make_node("MaxPool", ["r"], ["y"], kernel_shape=[2, 2], strides=[2, 2])]
    return make_model(nodes, [("x", [1, 1, 4, 4])], [("y", None)])


def test_the_margins_of_a_known_input():
    x = np.full((1, 1, 4, 4), -1.0, np.float32)
    x[0, 0, 0, 0], x[0, 0, 0, 1] = 3.0, 2.5   # window (0, 0): gap 0.5
    x[0, 0, 2, 2], x[0, 0, 3, 3] = 1.25, 1.0  # window (1, 1): gap 0.25
    x[0, 0, 1, 3] = 1e-4                      # the Relu input nearest 0; window (0, 1): gap 1e-4 over a 0
    relu, pool = kinks.kink_margin(relu_then_pool(), {"x": x})
    assert relu == pytest.approx(1e-4)
    assert pool == pytest.approx(1e-4)


def test_windows_of_zeros_do_not_count():
    """A window whose largest value is 0 (every input negative) sends its gradient into a masked
    element whichever wins: no kink. Window (0, 0) holds the only positive value."""
    x = np.full((1, 1, 4, 4), -1.0, np.float32)
    x[0, 0, 0, 0] = 2.0
    relu, pool = kinks.kink_margin(relu_then_pool(), {"x": x})
    assert relu == pytest.approx(1.0) and pool == pytest.approx(2.0)


def test_at_size_changes_only_the_image_dims():
    model = make_model([helper.make_node("Relu", ["x"], ["y"])], [("x", [2, 3, 8, 8])], [("y", None)])
    resized = kinks.at_size(model, 5, 7)
    dims = [d.dim_value for d in resized.graph.input[0].type.tensor_type.shape.dim]
    assert dims == [2, 3, 5, 7]
    assert [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim] == [2, 3, 8, 8]
