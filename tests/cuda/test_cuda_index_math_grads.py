"""The CUDA gradients of the trigonometric and hyperbolic functions (and Softsign, Celu,
ThresholdedRelu, Shrink and Swish), Tile, CumSum and GatherND
(engine/backends/cuda/elementwise/float_math_cuda.cc, cumsum_cuda.cc, indexing/gather_nd_cuda.cc)
against the CPU's, which tests/test_math_gradients.py and tests/test_gradients_index_dense.py
check against float64 finite differences: the outputs, the loss and every parameter's gradient
through the tuner's gradient hook, with the forward and backward on the device (no host layer).
Tolerances: tests/cuda/test_cuda_activation_norm_grads.py's (CUDA's single-precision functions
within 2 ulp of glibc's; CumSum's warp scan sums in another order). GatherND's gradient sums
repeated tuples in tuple order with no atomics (Note [keyed row sums]): the same bits on every run."""
import numpy as np
import pytest
from onnx import helper

import dnnx

from ort_check import make_model
from test_cuda_activation_norm_grads import assert_runs_on_the_device, compare

RNG = np.random.default_rng(36)

# op -> the domain of h = x * q (x drawn in it, q near 1), as tests/test_math_gradients.py
TRIG = {"Sin": (-3, 3), "Cos": (-3, 3), "Tan": (-1.2, 1.2), "Asin": (-0.8, 0.8), "Acos": (-0.8, 0.8),
        "Atan": (-3, 3), "Sinh": (-2, 2), "Cosh": (-2, 2), "Asinh": (-3, 3), "Acosh": (1.3, 3), "Atanh": (-0.8, 0.8)}


def rand(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def uniform(lo, hi, *shape):
    return RNG.uniform(lo, hi, shape).astype(np.float32)


@pytest.mark.parametrize("op", list(TRIG))
def test_trig_gradient(op):
    """h = x * q (q [6, 5] trainable, near 1) -> op -> * w (w [5] trainable)."""
    lo, hi = TRIG[op]
    inits = {"q": uniform(0.95, 1.05, 6, 5), "w": rand(5)}
    nodes = [helper.make_node("Mul", ["x", "q"], ["h"]), helper.make_node(op, ["h"], ["a"]),
             helper.make_node("Mul", ["a", "w"], ["y"])]
    model = make_model(nodes, [("x", [6, 5])], [("y", None)], inits, opset=17)
    tuner = compare(model, list(inits), {"x": uniform(lo * 0.9, hi * 0.9, 6, 5)}, rand(6, 5))
    assert_runs_on_the_device(tuner, op)


# The differentiable ones of float_math_cuda.cc besides the trigonometric functions: op ->
# (attributes, opset); x in (-3, 3), away from ThresholdedRelu's and Shrink's jumps by the draw.
FLOAT_MATH = {"Softsign": ({}, 17), "Celu": ({"alpha": 1.5}, 17), "ThresholdedRelu": ({"alpha": 0.4}, 17),
              "Shrink": ({"lambd": 0.7, "bias": 0.25}, 17), "Swish": ({"alpha": 0.8}, 24)}


@pytest.mark.parametrize("op", list(FLOAT_MATH))
def test_float_math_gradient(op):
    """h = x * q (q [6, 5] trainable, near 1) -> op -> * w (w [5] trainable)."""
    attrs, opset = FLOAT_MATH[op]
    inits = {"q": uniform(0.95, 1.05, 6, 5), "w": rand(5)}
    nodes = [helper.make_node("Mul", ["x", "q"], ["h"]), helper.make_node(op, ["h"], ["a"], **attrs),
             helper.make_node("Mul", ["a", "w"], ["y"])]
    model = make_model(nodes, [("x", [6, 5])], [("y", None)], inits, opset=opset)
    tuner = compare(model, list(inits), {"x": uniform(-3, 3, 6, 5)}, rand(6, 5))
    assert_runs_on_the_device(tuner, op)


@pytest.mark.parametrize("shape, repeats", [((2, 3, 4), (2, 1, 3)), ((5,), (4,)), ((2, 1, 3, 2), (1, 3, 2, 2))], ids=str)
def test_tile_gradient(shape, repeats):
    """h = x * q -> Tile: each dX element sums its tiles in the CPU's order (no atomics)."""
    inits = {"q": rand(*shape), "repeats": np.array(repeats, np.int64)}
    nodes = [helper.make_node("Mul", ["x", "q"], ["h"]), helper.make_node("Tile", ["h", "repeats"], ["y"])]
    model = make_model(nodes, [("x", list(shape))], [("y", None)], inits, opset=17)
    out = [s * r for s, r in zip(shape, repeats)]
    tuner = compare(model, ["q"], {"x": rand(*shape)}, rand(*out))
    assert_runs_on_the_device(tuner, "Tile")


@pytest.mark.parametrize("exclusive,reverse", [(0, 0), (1, 0), (0, 1), (1, 1)])
@pytest.mark.parametrize("shape,axis", [((2, 3, 4), 1), ((2, 3, 4), -1), ((3, 300), 1), ((40, 33), 0)], ids=str)
def test_cumsum_gradient(shape, axis, exclusive, reverse):
    """h = x * q -> CumSum along the axis (the warp form for inner < 32, the line form else)."""
    inits = {"q": rand(*shape), "axis": np.array(axis, np.int64)}
    nodes = [helper.make_node("Mul", ["x", "q"], ["h"]),
             helper.make_node("CumSum", ["h", "axis"], ["y"], exclusive=exclusive, reverse=reverse)]
    model = make_model(nodes, [("x", list(shape))], [("y", None)], inits, opset=14)
    tuner = compare(model, ["q"], {"x": rand(*shape)}, rand(*shape))
    assert_runs_on_the_device(tuner, "CumSum")


@pytest.mark.parametrize("data_shape,indices,batch_dims", [
    ((4, 5, 3), np.array([[0, 1], [3, -1], [0, 1]], np.int64), 0),      # a repeated tuple adds up
    ((4, 5, 3), np.array([[[2]], [[-1]]], np.int64), 0),
    ((3, 5, 2), np.array([[[1], [4]], [[0], [0]], [[-1], [2]]], np.int64), 1),
    ((2, 3, 6, 4), np.array([[[5, 0], [0, 3]], [[-1, 2], [-6, -4]]], np.int64)[:, None].repeat(3, axis=1), 2),
])
def test_gather_nd_gradient(data_shape, indices, batch_dims):
    inits = {"q": rand(*data_shape), "i": indices}
    nodes = [helper.make_node("Mul", ["x", "q"], ["h"]),
             helper.make_node("GatherND", ["h", "i"], ["y"], batch_dims=batch_dims)]
    model = make_model(nodes, [("x", list(data_shape))], [("y", None)], inits, opset=13)
    out_shape = [d.dim_value for d in model.graph.output[0].type.tensor_type.shape.dim]
    tuner = compare(model, ["q"], {"x": rand(*data_shape)}, rand(*out_shape))
    assert_runs_on_the_device(tuner, "GatherND")


def test_gather_nd_gradient_is_the_same_on_every_run():
    # 500 tuples over 24 slices of 16: every slice named many times
    data_shape = (4, 6, 16)
    indices = np.stack([RNG.integers(-4, 4, 500), RNG.integers(-6, 6, 500)], axis=1).astype(np.int64)
    inits = {"q": rand(*data_shape), "i": indices}
    nodes = [helper.make_node("Mul", ["x", "q"], ["h"]), helper.make_node("GatherND", ["h", "i"], ["y"])]
    model = make_model(nodes, [("x", list(data_shape))], [("y", None)], inits, opset=13)
    x, target = rand(*data_shape), rand(500, 16)
    m = dnnx.load(model, device="cuda", optimize=False)
    tuner = m.finetune(trainable=["q"], loss="mse", momentum=0.0)
    first = np.asarray(tuner.gradients(x, target)[1]["q"])
    assert np.isfinite(first).all() and np.abs(first).max() > 0
    for _ in range(3):
        np.testing.assert_array_equal(np.asarray(tuner.gradients(x, target)[1]["q"]), first)
