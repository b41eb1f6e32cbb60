"""One GRU or RNN node as a model with its feeds, for the CUDA GRU/RNN tests
(test_cuda_gru_rnn.py, test_cuda_gru_rnn_train.py). W, R, B are initializers (scaled so that the
gates stay away from saturation and a Relu RNN does not blow up over the steps); X,
sequence_lens and initial_h are graph inputs."""
import test_recurrent
from test_recurrent import OUTPUTS


def gates(op):
    return 3 if op == "GRU" else 1


def recurrent_case(op, seq, batch, inp, hidden, **kwargs):
    """op: "GRU" or "RNN"; kwargs: tests/test_recurrent.py's recurrent_case (direction, layout, bias,
    lens, initial_h, outputs, seed, name) and the node's other attributes (linear_before_reset,
    activations, clip). W, R at 0.4, B at 0.3 and initial_h at 0.5 of standard normal. Returns
    (model, feeds)."""
    kwargs.setdefault("scale", 0.4)
    kwargs.setdefault("bias_scale", 0.3)
    kwargs.setdefault("state_scale", 0.5)
    return test_recurrent.recurrent_case(op, seq, batch, inp, hidden, **kwargs)


def gru_case(*args, **kwargs):
    """A GRU in cuDNN's form (linear_before_reset=1) unless the caller says otherwise."""
    kwargs.setdefault("linear_before_reset", 1)
    return recurrent_case("GRU", *args, **kwargs)


def rnn_case(*args, activation="Tanh", **kwargs):
    """An RNN with one activation for every direction (cuDNN's RNN_TANH / RNN_RELU)."""
    nd = 2 if kwargs.get("direction") == "bidirectional" else 1
    kwargs.setdefault("activations", [activation] * nd)
    return recurrent_case("RNN", *args, **kwargs)
