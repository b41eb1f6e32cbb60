"""One GRU or RNN node as a model with its feeds, for the CUDA GRU/RNN tests
(test_cuda_gru_rnn.py, test_cuda_gru_rnn_train.py). W, R, B are initializers (scaled so that the
gates stay away from saturation and a Relu RNN does not blow up over the steps); X,
sequence_lens and initial_h are graph inputs."""
import numpy as np
from onnx import TensorProto, helper

from ort_check import make_model, rand

OUTPUTS = ("Y", "Y_h")


def gates(op):
    return 3 if op == "GRU" else 1


def recurrent_case(op, seq, batch, inp, hidden, *, direction="forward", layout=0, bias=True, lens=None,
                   initial_h=False, outputs=OUTPUTS, seed=0, name="rec0", **attrs):
    """op: "GRU" or "RNN"; attrs: the node's other attributes (linear_before_reset, activations,
    clip). Returns (model, feeds)."""
    nd = 2 if direction == "bidirectional" else 1
    g = gates(op)
    batch_major = layout == 1
    weights = {"W": rand(nd, g * hidden, inp, seed=seed + 1) * 0.4,
               "R": rand(nd, g * hidden, hidden, seed=seed + 2) * 0.4}
    if bias:
        weights["B"] = rand(nd, 2 * g * hidden, seed=seed + 3) * 0.3
    state_shape = [batch, nd, hidden] if batch_major else [nd, batch, hidden]
    x_shape = [batch, seq, inp] if batch_major else [seq, batch, inp]
    feeds = {"X": rand(*x_shape, seed=seed)}
    graph_inputs = [("X", x_shape)]
    if lens is not None:
        feeds["sequence_lens"] = np.asarray(lens, dtype=np.int32)
        graph_inputs.append(("sequence_lens", [batch], TensorProto.INT32))
    if initial_h:
        feeds["initial_h"] = rand(*state_shape, seed=seed + 5) * 0.5
        graph_inputs.append(("initial_h", state_shape))
    names = ["X", "W", "R", "B" if bias else "", "sequence_lens" if lens is not None else "",
             "initial_h" if initial_h else ""]
    while not names[-1]:
        names.pop()
    node_outputs = [o if o in outputs else "" for o in OUTPUTS]
    while not node_outputs[-1]:
        node_outputs.pop()
    if layout:
        attrs["layout"] = layout
    node = helper.make_node(op, names, node_outputs, name=name, hidden_size=hidden, direction=direction, **attrs)
    y_shape = [batch, seq, nd, hidden] if batch_major else [seq, nd, batch, hidden]
    shapes = {"Y": y_shape, "Y_h": state_shape}
    model = make_model([node], graph_inputs, [(o, shapes[o]) for o in OUTPUTS if o in outputs], weights)
    return model, feeds


def gru_case(*args, **kwargs):
    """A GRU in cuDNN's form (linear_before_reset=1) unless the caller says otherwise."""
    kwargs.setdefault("linear_before_reset", 1)
    return recurrent_case("GRU", *args, **kwargs)


def rnn_case(*args, activation="Tanh", **kwargs):
    """An RNN with one activation for every direction (cuDNN's RNN_TANH / RNN_RELU)."""
    nd = 2 if kwargs.get("direction") == "bidirectional" else 1
    kwargs.setdefault("activations", [activation] * nd)
    return recurrent_case("RNN", *args, **kwargs)
