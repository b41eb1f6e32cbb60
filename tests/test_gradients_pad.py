"""Pad's gradient against float64 finite differences (tests/grad_check.py, onnx's reference
evaluator as the oracle), every mode, behind a trainable Conv so that the gradient flows through
it: dX adds up every dY cell that copies an X element (edge repeats, reflect and wrap past one
period reach an element several times), negative amounts crop (no gradient for the dropped
elements), and a computed constant_value gets the sum over the constant cells. The tolerances
are grad_check.py's (float32 gradients against float64 central differences)."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from onnx.reference.op_run import OpRun

from grad_check import check_gradients
from ort_check import make_model

RNG = np.random.default_rng(19)


def rand(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


class Pad(OpRun):
    """ONNX Pad (11+) as onnxruntime and dnnx read negative amounts: they crop X first, numpy.pad
    then pads the cropped X (onnx's own reference passes them to numpy.pad, which refuses them)."""

    op_domain = ""

    def _run(self, data, pads, constant_value=None, axes=None, mode=None):
        rank = data.ndim
        axes = list(range(rank)) if axes is None else [int(a) % rank for a in axes]
        begin, end = [0] * rank, [0] * rank
        for i, a in enumerate(axes):
            begin[a], end[a] = int(pads[i]), int(pads[i + len(axes)])
        data = data[tuple(slice(max(0, -b), data.shape[d] - max(0, -e)) for d, (b, e) in enumerate(zip(begin, end)))]
        width = [(max(0, b), max(0, e)) for b, e in zip(begin, end)]
        mode = mode or "constant"
        if mode == "constant":
            return (np.pad(data, width, constant_values=0 if constant_value is None else constant_value),)
        return (np.pad(data, width, mode=mode),)


def out_shape(model):
    return [d.dim_value for d in model.graph.output[0].type.tensor_type.shape.dim]


def conv_then_pad(pads, mode, axes=None, with_value=False):
    """x [2, 2, 5, 4] -> 3x3 Conv (w, b) -> c [2, 3, 5, 4] -> Pad -> y; with_value: the constant is
    ReduceMean(c), a computed scalar, so that its gradient reaches w and b too."""
    inits = {"w": rand(3, 2, 3, 3, scale=0.4), "b": rand(3, scale=0.1), "pads": np.array(pads, np.int64)}
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])]
    inputs = ["c", "pads"]
    if with_value:
        nodes.append(helper.make_node("ReduceMean", ["c"], ["v"], keepdims=0))
        inputs.append("v")
    if axes is not None:
        inits["axes"] = np.array(axes, np.int64)
        inputs += [""] * (3 - len(inputs)) + ["axes"]
    nodes.append(helper.make_node("Pad", inputs, ["y"], mode=mode))
    return make_model(nodes, [("x", [2, 2, 5, 4])], [("y", None)], inits, opset=19)


PAD_CASES = [  # (pads, axes)
    ([0, 0, 2, 1, 0, 0, 1, 3], None),
    ([0, 1, -1, 2, 1, 0, 2, -1], None),  # negative amounts crop before the padding
    ([6, 7, 9, 5], [2, 3]),              # past one period of H=5 and W=4
]


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "wrap"])
@pytest.mark.parametrize("pads,axes", PAD_CASES, ids=["pad", "crop+pad", "past-a-period"])
def test_pad(mode, pads, axes):
    model = conv_then_pad(pads, mode, axes)
    check_gradients(model, ["w", "b"], {"x": rand(2, 2, 5, 4)}, rand(*out_shape(model)), reference_ops=[Pad])


def test_pad_computed_constant_value():
    model = conv_then_pad([0, 0, 1, 2, 0, 0, 2, 1], "constant", with_value=True)
    check_gradients(model, ["w", "b"], {"x": rand(2, 2, 5, 4)}, rand(*out_shape(model)))
