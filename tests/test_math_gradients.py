"""Issue #35's differentiable math ops on the CPU: the backward of each against float64 central
differences (tests/grad_check.py, with its stated tolerances): the trigonometric, hyperbolic and
activation ops, the new reductions, CumSum, CumProd (through zeros), Mean and Sum (broadcast),
Hardmax (zero), RMSNormalization, LpNormalization,
MeanVarianceNormalization, NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (with
weights, ignore_index, every reduction and the log_prob output)."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper
from onnx.reference.op_run import OpRun

from grad_check import check_gradients
from ort_check import make_model

import dnnx

RNG = np.random.default_rng(35)


def rand(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def uniform(lo, hi, *shape):
    return RNG.uniform(lo, hi, shape).astype(np.float32)


# op -> (attributes, opset, the domain of h = x * q, drawn as x in it and q near 1)
UNARY = {
    "Sin": ({}, 17, (-3, 3)), "Cos": ({}, 17, (-3, 3)), "Tan": ({}, 17, (-1.2, 1.2)),
    "Asin": ({}, 17, (-0.8, 0.8)), "Acos": ({}, 17, (-0.8, 0.8)), "Atan": ({}, 17, (-3, 3)),
    "Sinh": ({}, 17, (-2, 2)), "Cosh": ({}, 17, (-2, 2)), "Asinh": ({}, 17, (-3, 3)),
    "Acosh": ({}, 17, (1.3, 3)), "Atanh": ({}, 17, (-0.8, 0.8)), "Softsign": ({}, 17, (-3, 3)),
    "Celu": ({"alpha": 0.7}, 17, (-3, 3)), "ThresholdedRelu": ({"alpha": 0.4}, 17, (-3, 3)),
    "Swish": ({"alpha": 1.3}, 24, (-3, 3)), "Shrink": ({"lambd": 0.6, "bias": 0.2}, 17, (-3, 3)),
}


@pytest.mark.parametrize("op", list(UNARY))
def test_unary_gradient(op):
    """h = x * q (q [6, 5] trainable, near 1) -> op -> * w (w [5] trainable)."""
    attrs, opset, (lo, hi) = UNARY[op]
    inits = {"q": uniform(0.95, 1.05, 6, 5), "w": rand(5)}
    nodes = [helper.make_node("Mul", ["x", "q"], ["h"]), helper.make_node(op, ["h"], ["a"], **attrs),
             helper.make_node("Mul", ["a", "w"], ["y"])]
    model = make_model(nodes, [("x", [6, 5])], [("y", None)], inits, opset=opset)
    x = uniform(lo * 0.9, hi * 0.9, 6, 5)
    if op in ("ThresholdedRelu", "Shrink"):  # keep clear of the jumps, where no derivative exists
        x = np.where(np.abs(np.abs(x) - 0.5) < 0.25, x + 0.6, x).astype(np.float32)
    check_gradients(model, list(inits), {"x": x}, rand(6, 5))


@pytest.mark.parametrize("op", ["ReduceL1", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"])
@pytest.mark.parametrize("axes", [[1], [0, 2]], ids=str)
def test_reduce_gradient(op, axes):
    inits = {"q": uniform(0.5, 1.5, 3, 4, 5), "axes": np.array(axes, np.int64)}
    nodes = [helper.make_node("Mul", ["x", "q"], ["h"]), helper.make_node(op, ["h", "axes"], ["y"], keepdims=0)]
    model = make_model(nodes, [("x", [3, 4, 5])], [("y", None)], inits, opset=18)
    out = [d for i, d in enumerate([3, 4, 5]) if i not in axes]
    check_gradients(model, ["q"], {"x": uniform(0.5, 1.5, 3, 4, 5)}, rand(*out))


@pytest.mark.parametrize("exclusive,reverse", [(0, 0), (1, 0), (0, 1), (1, 1)])
@pytest.mark.parametrize("axis", [1, -1])
def test_cumsum_gradient(exclusive, reverse, axis):
    inits = {"q": rand(2, 3, 4), "axis": np.array(axis, np.int64)}
    nodes = [helper.make_node("Mul", ["x", "q"], ["h"]),
             helper.make_node("CumSum", ["h", "axis"], ["y"], exclusive=exclusive, reverse=reverse)]
    model = make_model(nodes, [("x", [2, 3, 4])], [("y", None)], inits, opset=14)
    check_gradients(model, ["q"], {"x": rand(2, 3, 4)}, rand(2, 3, 4))


@pytest.mark.parametrize("exclusive,reverse", [(0, 0), (1, 0), (0, 1), (1, 1)])
@pytest.mark.parametrize("axis", [1, -1])
def test_cumprod_gradient(exclusive, reverse, axis):
    """h = x + q with exact zeros in h (one alone, two in a row) -> CumProd: the gradient through
    the zeros, where a quotient of prefix products would divide by zero."""
    q, x = rand(2, 3, 4), rand(2, 3, 4)
    for at in [(0, 1, 2), (1, 0, 0), (1, 1, 0), (0, 2, 3), (1, 2, 3), (1, 2, 2)]:
        q[at], x[at] = 0.0, 0.0
    inits = {"q": q, "axis": np.array(axis, np.int64)}
    nodes = [helper.make_node("Add", ["x", "q"], ["h"]),
             helper.make_node("CumProd", ["h", "axis"], ["y"], exclusive=exclusive, reverse=reverse)]
    model = make_model(nodes, [("x", [2, 3, 4])], [("y", None)], inits, opset=26)
    check_gradients(model, ["q"], {"x": x}, rand(2, 3, 4))


class Mean(OpRun):
    """Mean with numpy broadcasting on every input (onnx's reference adds in place into a copy of
    the first input, so it fails when the first is the one broadcast)."""

    op_domain = ""

    def _run(self, *args):
        return (sum(np.broadcast_arrays(*args)) / len(args),)


@pytest.mark.parametrize("op", ["Mean", "Sum"])
@pytest.mark.parametrize("shapes", [[[2, 3, 4]], [[2, 3, 4], [2, 3, 4]], [[2, 3, 4], [3, 1], [1, 3, 4]],
                                    [[4], [2, 1, 4], [2, 3, 4]]], ids=str)
def test_variadic_sum_gradient(op, shapes):
    """a_i = x_i * q_i (each q_i trainable, broadcast to the output) -> Mean or Sum of them all."""
    inits = {f"q{i}": rand(*s) for i, s in enumerate(shapes)}
    nodes = [helper.make_node("Mul", [f"x{i}", f"q{i}"], [f"a{i}"]) for i in range(len(shapes))]
    nodes.append(helper.make_node(op, [f"a{i}" for i in range(len(shapes))], ["y"]))
    model = make_model(nodes, [(f"x{i}", s) for i, s in enumerate(shapes)], [("y", None)], inits, opset=13)
    out = np.broadcast_shapes(*[tuple(s) for s in shapes])
    check_gradients(model, list(inits), {f"x{i}": rand(*s) for i, s in enumerate(shapes)}, rand(*out),
                    reference_ops=[Mean])


@pytest.mark.parametrize("axis", [1, -1])
def test_hardmax_gradient_is_zero(axis):
    """h = x * q -> Hardmax -> * w: y is piecewise constant in h, so q's gradient is exactly zero
    (central differences agree away from ties) while w's is the one-hot times the loss's dY."""
    inits = {"q": uniform(0.5, 1.5, 3, 5), "w": rand(3, 5)}
    nodes = [helper.make_node("Mul", ["x", "q"], ["h"]), helper.make_node("Hardmax", ["h"], ["a"], axis=axis),
             helper.make_node("Mul", ["a", "w"], ["y"])]
    model = make_model(nodes, [("x", [3, 5])], [("y", None)], inits, opset=13)
    x = (RNG.permutation(15).reshape(3, 5) + 1).astype(np.float32)  # no two h within a step of each other
    grads = check_gradients(model, list(inits), {"x": x}, rand(3, 5))
    assert not grads["q"].any()
    assert grads["w"].any()


@pytest.mark.parametrize("axis,scale_shape", [(-1, [4]), (1, [3, 4]), (1, [1, 4]), (0, [2, 3, 4])], ids=str)
def test_rms_norm_gradient(axis, scale_shape):
    inits = {"q": rand(2, 3, 4), "scale": rand(*scale_shape)}
    nodes = [helper.make_node("Mul", ["x", "q"], ["h"]),
             helper.make_node("RMSNormalization", ["h", "scale"], ["y"], axis=axis, epsilon=1e-3)]
    model = make_model(nodes, [("x", [2, 3, 4])], [("y", None)], inits, opset=23)
    check_gradients(model, list(inits), {"x": rand(2, 3, 4)}, rand(2, 3, 4))


class LpNormalization(OpRun):
    """ONNX LpNormalization as its spec, onnxruntime and dnnx read p = 1: the sum of |x| (onnx's own
    reference sums x without the absolute value)."""

    op_domain = ""

    def _run(self, x, axis=None, p=None):
        axis = -1 if axis is None else axis
        p = 2 if p is None else p
        norm = np.expand_dims(np.power(np.power(np.abs(x), p).sum(axis=axis), 1.0 / p), axis)
        return (np.where(norm == 0, 0, x / np.where(norm == 0, 1, norm)).astype(x.dtype),)


@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("axis", [0, -1])
def test_lp_norm_gradient(p, axis):
    inits = {"q": rand(3, 5)}
    nodes = [helper.make_node("Mul", ["x", "q"], ["h"]),
             helper.make_node("LpNormalization", ["h"], ["y"], p=p, axis=axis)]
    model = make_model(nodes, [("x", [3, 5])], [("y", None)], inits, opset=22)
    check_gradients(model, ["q"], {"x": rand(3, 5)}, rand(3, 5), reference_ops=[LpNormalization])


class MeanVarianceNormalization(OpRun):
    """MeanVarianceNormalization as onnxruntime and dnnx compute it, in the input's type (onnx's
    function form holds float32 constants, which its evaluator will not add to float64)."""

    op_domain = ""

    def _run(self, x, axes=None):
        axes = tuple([0, 2, 3] if axes is None else axes)
        c = x - x.mean(axis=axes, keepdims=True)
        return (c / np.sqrt((c * c).mean(axis=axes, keepdims=True)),)


@pytest.mark.parametrize("axes", [[0, 2, 3], [1], [2, 3]], ids=str)
def test_mvn_gradient(axes):
    inits = {"q": rand(2, 3, 2, 3)}
    nodes = [helper.make_node("Mul", ["x", "q"], ["h"]),
             helper.make_node("MeanVarianceNormalization", ["h"], ["y"], axes=axes)]
    model = make_model(nodes, [("x", [2, 3, 2, 3])], [("y", None)], inits, opset=13)
    check_gradients(model, ["q"], {"x": rand(2, 3, 2, 3)}, rand(2, 3, 2, 3), reference_ops=[MeanVarianceNormalization])


def loss_chain(op, reduction, weight, ignore_index, log_prob=False):
    """scores = x @ w [6, 4] (w trainable) -> op(scores, labels[, class weights]) -> y."""
    labels = np.array([0, 3, 1, 2, 3, 1], np.int64)
    inits = {"w": rand(5, 4), "labels": labels}
    inputs = ["s", "labels"]
    if weight:
        inits["cw"] = np.array([0.5, 1.0, 2.0, 1.5], np.float32)
        inputs.append("cw")
    attrs = {"reduction": reduction}
    if ignore_index is not None:
        attrs["ignore_index"] = ignore_index
    scalar = reduction != "none" and not log_prob
    outputs = ["loss" if scalar else "y"] + (["lp"] if log_prob else [])
    nodes = [helper.make_node("MatMul", ["x", "w"], ["s"]), helper.make_node(op, inputs, outputs, **attrs)]
    if scalar:  # the scalar loss as [1], the shape an MSE target takes
        inits["one"] = np.array([1], np.int64)
        nodes.append(helper.make_node("Reshape", ["loss", "one"], ["y"]))
    graph_out = [("lp", None)] if log_prob else [("y", None)]
    model = make_model(nodes, [("x", [6, 5])], graph_out, inits, opset=13)
    target = rand(6, 4) if log_prob else (rand(6) if reduction == "none" else rand(1))
    return model, ["w"], {"x": rand(6, 5)}, target


@pytest.mark.parametrize("op", ["NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"])
@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("weight,ignore_index", [(False, None), (True, None), (True, 3), (False, 1)])
def test_class_loss_gradient(op, reduction, weight, ignore_index):
    check_gradients(*loss_chain(op, reduction, weight, ignore_index))


def test_softmax_cross_entropy_log_prob_gradient():
    check_gradients(*loss_chain("SoftmaxCrossEntropyLoss", "mean", True, None, log_prob=True))


def test_trainable_class_weights_are_refused():
    model, _, feeds, target = loss_chain("NegativeLogLikelihoodLoss", "none", True, None)
    with pytest.raises(dnnx.UnsupportedModelError, match="class weights carry no gradient"):
        dnnx.load(model, optimize=False).finetune(trainable=["w", "cw"], loss="mse")


def test_loss_choices_match_the_onnx_loss_ops():
    """loss="nll" on a LogSoftmax-then-Identity output and loss="softmax_cross_entropy" on logits
    give the loss onnx's NegativeLogLikelihoodLoss / SoftmaxCrossEntropyLoss (onnxruntime) give."""
    from ort_check import run_ort

    w, x = rand(5, 4), rand(6, 5)
    labels = np.array([0, 3, 1, 2, 3, 1], np.int64)
    for loss, nodes, op in [
        ("nll", [helper.make_node("MatMul", ["x", "w"], ["s"]), helper.make_node("LogSoftmax", ["s"], ["lp"], axis=1),
                 helper.make_node("Identity", ["lp"], ["y"])], "NegativeLogLikelihoodLoss"),
        ("softmax_cross_entropy", [helper.make_node("MatMul", ["x", "w"], ["y"])], "SoftmaxCrossEntropyLoss"),
    ]:
        model = make_model(nodes, [("x", [6, 5])], [("y", None)], {"w": w}, opset=13)
        got, grads = dnnx.load(model, optimize=False).finetune(trainable=["w"], loss=loss, momentum=0.0).gradients(
            [x], labels)
        ref = make_model(nodes + [helper.make_node(op, ["y", "t"], ["loss"])], [("x", [6, 5]), ("t", [6], 7)],
                         [("loss", None)], {"w": w}, opset=13)
        want = run_ort(ref, {"x": x, "t": labels})["loss"]
        np.testing.assert_allclose(got, want, rtol=1e-5)
        assert grads["w"].shape == (5, 4)
    with pytest.raises(ValueError, match="nll takes integer class labels"):
        dnnx.load(model).finetune(trainable=["w"], loss="nll").step([x], np.zeros(6, np.float32))
