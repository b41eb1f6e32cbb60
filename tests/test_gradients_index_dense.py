"""GatherND's and Einsum's backward against float64 finite differences (tests/grad_check.py):
a trainable tensor upstream of the op (h = x * q), so the gradient flows through it; Einsum's
second operand trainable too."""
import numpy as np
import pytest
from onnx import TensorProto, helper

from grad_check import check_gradients
from ort_check import make_model

RNG = np.random.default_rng(11)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("data_shape,indices,batch_dims", [
    ((4, 5, 3), np.array([[0, 1], [3, -1], [0, 1]], np.int64), 0),      # a repeated tuple adds up
    ((4, 5, 3), np.array([[[2]], [[-1]]], np.int64), 0),
    ((3, 5, 2), np.array([[[1], [4]], [[0], [0]], [[-1], [2]]], np.int64), 1),
])
def test_gather_nd(data_shape, indices, batch_dims):
    inits = {"q": rand(*data_shape), "i": indices}
    nodes = [helper.make_node("Mul", ["x", "q"], ["h"]),
             helper.make_node("GatherND", ["h", "i"], ["y"], batch_dims=batch_dims)]
    model = make_model(nodes, [("x", list(data_shape))], [("y", None)], inits, opset=13)
    out_shape = [d.dim_value for d in model.graph.output[0].type.tensor_type.shape.dim]
    check_gradients(model, ["q"], {"x": rand(*data_shape)}, rand(*out_shape))


@pytest.mark.parametrize("equation,shapes", [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    ("ij->ji", [(3, 4)]),
    ("ij->i", [(3, 4)]),
    ("ii->i", [(4, 4)]),
    ("iij,jk->ik", [(3, 3, 4), (4, 2)]),
    ("ab,cd->ac", [(2, 3), (4, 5)]),                    # a label summed on each side
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (1, 3, 4, 2)]),  # broadcast ellipsis: sums over the broadcast
])
def test_einsum(equation, shapes):
    # operand 0 is h = x * q0 (q0 trainable); the others are trainable initializers
    inits = {f"q{i}": rand(*s) for i, s in enumerate(shapes)}
    names = ["h"] + [f"q{i}" for i in range(1, len(shapes))]
    nodes = [helper.make_node("Mul", ["x", "q0"], ["h"]), helper.make_node("Einsum", names, ["y"], equation=equation)]
    feeds = {"x": rand(*shapes[0])}
    out_shape = list(np.einsum(equation, *[feeds["x"]] + [inits[f"q{i}"] for i in range(1, len(shapes))]).shape)
    model = make_model(nodes, [("x", list(shapes[0]))], [("y", out_shape)], inits, opset=12)
    check_gradients(model, list(inits), feeds, rand(*out_shape) if out_shape else np.float32(RNG.standard_normal()))
