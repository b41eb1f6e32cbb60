"""CausalConvWithState (opset 27) against onnxruntime at sizes the onnx node cases leave out: many
channels over a long row, wide kernels, an input shorter than the carried state with a past
state, SiLU with bias and past; a sequence fed in pieces, present_state carried into past_state,
gives the one-shot result; and the load-time errors a user can cause."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import dnnx
from ort_check import assert_matches_ort, make_model, rand

NAMES = ["input", "weight", "bias", "past_state"]
OPSET = 27


def cc_model(shapes, activation=None, checked=True, elem=TensorProto.FLOAT):
    node_inputs = [n if n in shapes else "" for n in NAMES]
    while not node_inputs[-1]:
        node_inputs.pop()
    attrs = {"activation": activation} if activation else {}
    node = helper.make_node("CausalConvWithState", node_inputs, ["output", "present_state"], **attrs)
    b, c, length = shapes["input"]
    k = shapes["weight"][2]
    inputs = [(n, s, elem) for n, s in shapes.items()]
    outputs = [("output", [b, c, length], elem), ("present_state", [b, c, max(k - 1, 0)], elem)]
    if checked:
        return make_model([node], inputs, outputs, opset=OPSET)
    graph = helper.make_graph([node], "test", [helper.make_tensor_value_info(n, e, s) for n, s, e in inputs],
                              [helper.make_tensor_value_info(n, e, s) for n, s, e in outputs])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])


def shapes_of(b, c, length, k, bias=True, past=True):
    s = {"input": [b, c, length], "weight": [c, 1, k]}
    if bias:
        s["bias"] = [c]
    if past:
        s["past_state"] = [b, c, k - 1]
    return s


@pytest.mark.parametrize("b, c, length, k, bias, past, activation", [
    (3, 64, 57, 4, True, True, "silu"),
    (2, 96, 33, 9, False, True, None),
    (1, 40, 3, 7, True, True, "swish"),   # the input shorter than the state: past positions carried on
    (4, 16, 2, 6, False, False, None),    # likewise from zeros
    (2, 128, 1, 4, True, True, "silu"),   # one decode step
])
def test_matches_onnxruntime(b, c, length, k, bias, past, activation):
    shapes = shapes_of(b, c, length, k, bias, past)
    feeds = {n: rand(*s, seed=i) for i, (n, s) in enumerate(shapes.items())}
    assert_matches_ort(cc_model(shapes, activation), feeds)


def test_pieces_carry_the_state():
    """A row of 20 positions in one call equals pieces of 7, 1, 2 and 10 with present_state fed back."""
    b, c, k = 2, 8, 5
    full = shapes_of(b, c, 20, k)
    feeds = {n: rand(*s, seed=i) for i, (n, s) in enumerate(full.items())}
    whole = dnnx.load(cc_model(full, "silu")).run_dict(feeds)
    state, outs, lo = feeds["past_state"], [], 0
    for n in (7, 1, 2, 10):
        part = shapes_of(b, c, n, k)
        got = dnnx.load(cc_model(part, "silu")).run_dict(
            {"input": feeds["input"][:, :, lo:lo + n], "weight": feeds["weight"], "bias": feeds["bias"],
             "past_state": state})
        outs.append(got["output"])
        state, lo = got["present_state"], lo + n
    np.testing.assert_allclose(np.concatenate(outs, axis=2), whole["output"], rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(state, whole["present_state"])


@pytest.mark.parametrize("change, message", [
    ({"weight": [4, 2, 3]}, r"weight \[4,2,3\] must be \[channels 4, 1, k\] with k >= 1"),
    ({"weight": [4, 1, 0]}, r"weight \[4,1,0\] must be \[channels 4, 1, k\] with k >= 1"),
    ({"past_state": [2, 4, 5]}, r"past_state \[2,4,5\] must be \[batch, channels, k-1\] \[2,4,2\]"),
    ({"bias": [3]}, r"bias \[3\] must be \[channels 4\]"),
    ({"input": [2, 4]}, r"input \[2,4\] must be 3-D \[batch, channels, length\]"),
])
def test_shape_errors_name_the_input(change, message):
    shapes = {**shapes_of(2, 4, 6, 3), **change}
    node_inputs = [n if n in shapes else "" for n in NAMES]
    node = helper.make_node("CausalConvWithState", node_inputs, ["output", "present_state"])
    graph = helper.make_graph([node], "test",
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in shapes.items()],
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, ["a", "b", "c"])
                               for n in ("output", "present_state")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    with pytest.raises(dnnx.InvalidModelError, match=message):
        dnnx.load(model)


def test_unknown_activation_is_refused():
    with pytest.raises(dnnx.InvalidModelError, match="activation 'gelu' is not one of none, silu, swish"):
        dnnx.load(cc_model(shapes_of(1, 2, 4, 3), "gelu", checked=False))
