"""Gradient test models for issue #15's ops (the unary math ops, Abs, Pow, PRelu, the
normalizations, Dropout with its mask), shared by the CPU tests against float64 finite
differences (tests/test_activation_norm_gradients.py) and the CUDA ones against the CPU
(tests/cuda/test_cuda_activation_norm_grads.py). Each builder takes the test file's
`rand(*shape, scale=1.0)` and returns (model, trainable, feeds, MSE target)."""
from __future__ import annotations

import numpy as np
from onnx import helper

from ort_check import make_model

# op -> (attributes, opset, the input's domain): "positive" keeps h = x * q in [0.25, 2.25]
# (Log, Sqrt, Reciprocal), "any" draws both signs.
UNARY_OPS = {
    "Exp": ({}, 17, "any"),
    "Log": ({}, 17, "positive"),
    "Sqrt": ({}, 17, "positive"),
    "Reciprocal": ({}, 17, "positive"),
    "Erf": ({}, 17, "any"),
    "Gelu": ({}, 20, "any"),
    "Gelu-tanh": ({"approximate": "tanh"}, 20, "any"),
    "HardSigmoid": ({"alpha": 0.3, "beta": 0.4}, 17, "any"),
    "HardSwish": ({}, 17, "any"),
    "Softplus": ({}, 17, "any"),
    "Mish": ({}, 18, "any"),
    "Abs": ({}, 17, "any"),
}


def _positive(rand, *shape):
    return (0.5 + np.abs(rand(*shape)) % 1.0).astype(np.float32)  # in [0.5, 1.5)


def unary_chain(rand, case: str):
    """h = x * q (q [6, 5] trainable) -> op -> * w (w [5] trainable) -> y [6, 5]. HardSigmoid's and
    HardSwish's inputs are scaled by 3 so that every branch of the piecewise forms is taken."""
    attrs, opset, domain = UNARY_OPS[case]
    op = case.split("-")[0]
    if domain == "positive":
        x, q = _positive(rand, 6, 5), _positive(rand, 6, 5)
    else:
        spread = 3.0 if op in ("HardSigmoid", "HardSwish") else 1.0
        x, q = rand(6, 5, scale=spread), rand(6, 5)
    inits = {"q": q, "w": rand(5)}
    nodes = [helper.make_node("Mul", ["x", "q"], ["h"]), helper.make_node(op, ["h"], ["a"], **attrs),
             helper.make_node("Mul", ["a", "w"], ["y"])]
    model = make_model(nodes, [("x", [6, 5])], [("y", None)], inits, opset=opset)
    return model, list(inits), {"x": x}, rand(6, 5)


def pow_chain(rand, base_shape, exponent_shape):
    """a = x * q (x, q [2, 3, 4], positive: a real power), z = a ^ e with the exponent e (trainable,
    of exponent_shape, in [1, 2)) broadcast -> [2, 3, 4]."""
    inits = {"q": _positive(rand, *base_shape), "e": (_positive(rand, *exponent_shape) + 0.5).astype(np.float32)}
    nodes = [helper.make_node("Mul", ["x", "q"], ["a"]), helper.make_node("Pow", ["a", "e"], ["y"])]
    model = make_model(nodes, [("x", list(base_shape))], [("y", None)], inits)
    out = np.broadcast_shapes(tuple(base_shape), tuple(exponent_shape))
    return model, list(inits), {"x": _positive(rand, *base_shape)}, rand(*out)


def prelu_chain(rand, slope_shape):
    """h = x * q (both signs, [2, 3, 4, 5]) -> PRelu(slope, unidirectionally broadcast) -> y."""
    inits = {"q": rand(2, 3, 4, 5), "slope": rand(*slope_shape, scale=0.5)}
    nodes = [helper.make_node("Mul", ["x", "q"], ["h"]), helper.make_node("PRelu", ["h", "slope"], ["y"])]
    model = make_model(nodes, [("x", [2, 3, 4, 5])], [("y", None)], inits, opset=16)
    return model, list(inits), {"x": rand(2, 3, 4, 5)}, rand(2, 3, 4, 5)


# (op, X's shape, attributes, opset, the parameters' shape, with bias)
NORM_CASES = {
    "layer-last": ("LayerNormalization", (4, 3, 6), {"epsilon": 1e-3}, 17, (6,), True),
    "layer-axis1": ("LayerNormalization", (2, 3, 4, 5), {"axis": 1}, 17, (3, 4, 5), True),
    "layer-no-bias": ("LayerNormalization", (5, 8), {"axis": -1}, 17, (8,), False),
    "instance": ("InstanceNormalization", (2, 3, 4, 5), {"epsilon": 1e-3}, 17, (3,), True),
    "group21": ("GroupNormalization", (2, 6, 3, 4), {"num_groups": 3}, 21, (6,), True),
}


def norm_chain(rand, case: str, stash_double: bool = False):
    """h = x * q (q of X's shape, trainable) -> the normalization (scale, bias trainable) -> y.
    stash_double: GroupNormalization's stash_type 11 (double), for the float64 oracle: onnx's
    reference evaluator runs GroupNormalization's function body, which casts to stash_type
    (float32 by default: a float32 loss is too coarse for central differences). dnnx computes
    the statistics in float32 whatever stash_type says."""
    op, shape, attrs, opset, pshape, bias = NORM_CASES[case]
    if stash_double and op == "GroupNormalization":
        attrs = {**attrs, "stash_type": 11}
    inits = {"q": rand(*shape), "scale": rand(*pshape)}
    inputs = ["h", "scale"]
    if bias:
        inits["bias"] = rand(*pshape)
        inputs.append("bias")
    nodes = [helper.make_node("Mul", ["x", "q"], ["h"]), helper.make_node(op, inputs, ["y"], **attrs)]
    # Y's shape given: onnx's shape inference leaves GroupNormalization's output unknown.
    model = make_model(nodes, [("x", list(shape))], [("y", list(shape))], inits, opset=opset)
    return model, list(inits), {"x": rand(*shape)}, rand(*shape)


def dropout_mask_chain(rand):
    """x [5, 4] -> Gemm(w1) -> Dropout (its mask output unused) -> Tanh -> Gemm(w2) -> [5, 3]: the
    gradient passes through the view while its kernel writes the mask."""
    inits = {"w1": rand(4, 6), "w2": rand(6, 3)}
    nodes = [helper.make_node("Gemm", ["x", "w1"], ["h"]), helper.make_node("Dropout", ["h"], ["d", "mask"]),
             helper.make_node("Tanh", ["d"], ["t"]), helper.make_node("Gemm", ["t", "w2"], ["y"])]
    model = make_model(nodes, [("x", [5, 4])], [("y", None)], inits)
    return model, list(inits), {"x": rand(5, 4)}, rand(5, 3)
