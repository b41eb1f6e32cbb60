"""GRU and RNN on the CPU against onnxruntime (layout 0), against onnxruntime on transposed
tensors (layout 1, which onnxruntime does not implement), and PyTorch's export pattern."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import dnnx
from ort_check import assert_matches_ort, make_model, rand, run_ort

OUTPUTS = ("Y", "Y_h")
GATES = {"GRU": 3, "RNN": 1}


def recurrent_case(op, seq, batch, inp, hidden, *, direction="forward", layout=0, bias=True, lens=None,
                   initial_h=False, outputs=OUTPUTS, opset=17, seed=0, name="rec0", scale=0.5, bias_scale=None,
                   state_scale=1.0, **attrs):
    """Builds one GRU or RNN node model and its feeds. W, R, B are initializers; X,
    sequence_lens and initial_h are graph inputs. `outputs` lists the outputs to keep; the
    weights are standard normal times `scale` (B times `bias_scale`, default `scale`), initial_h
    times `state_scale`. tests/cuda/recurrent_cases.py builds its cases here too."""
    g = GATES[op]
    nd = 2 if direction == "bidirectional" else 1
    batch_major = layout == 1
    weights = {"W": rand(nd, g * hidden, inp, seed=seed + 1) * scale,
               "R": rand(nd, g * hidden, hidden, seed=seed + 2) * scale}
    if bias:
        weights["B"] = rand(nd, 2 * g * hidden, seed=seed + 3) * (scale if bias_scale is None else bias_scale)
    state_shape = [batch, nd, hidden] if batch_major else [nd, batch, hidden]
    x_shape = [batch, seq, inp] if batch_major else [seq, batch, inp]
    feeds = {"X": rand(*x_shape, seed=seed)}
    graph_inputs = [("X", x_shape)]
    if lens is not None:
        feeds["sequence_lens"] = np.asarray(lens, dtype=np.int32)
        graph_inputs.append(("sequence_lens", [batch], TensorProto.INT32))
    if initial_h:
        feeds["initial_h"] = rand(*state_shape, seed=seed + 5) * state_scale
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
    model = make_model([node], graph_inputs, [(o, shapes[o]) for o in OUTPUTS if o in outputs], weights,
                       opset=opset)
    return model, feeds


def run_dnnx(model, feeds):
    return dnnx.load(model).run_dict(feeds)


BOTH = pytest.mark.parametrize("op", ["GRU", "RNN"])
DIRECTIONS = pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])


# --- layout 0 against onnxruntime -------------------------------------------------------------

@BOTH
@DIRECTIONS
@pytest.mark.parametrize("bias", [True, False])
def test_directions(op, direction, bias):
    model, feeds = recurrent_case(op, 5, 3, 4, 6, direction=direction, bias=bias)
    assert_matches_ort(model, feeds)


@DIRECTIONS
@pytest.mark.parametrize("lbr", [0, 1])
def test_gru_linear_before_reset(direction, lbr):
    model, feeds = recurrent_case("GRU", 5, 3, 4, 6, direction=direction, initial_h=True, linear_before_reset=lbr)
    assert_matches_ort(model, feeds)


@BOTH
@DIRECTIONS
def test_initial_h(op, direction):
    model, feeds = recurrent_case(op, 4, 2, 3, 5, direction=direction, initial_h=True)
    assert_matches_ort(model, feeds)


@pytest.mark.parametrize("op,attrs", [("GRU", {}), ("GRU", {"linear_before_reset": 1}), ("RNN", {})])
@DIRECTIONS
def test_sequence_lens(op, attrs, direction):
    # Varied lengths, the full length and 1: Y is zero past each length, Y_h at the last step.
    model, feeds = recurrent_case(op, 6, 4, 3, 5, direction=direction, lens=[6, 1, 4, 3], initial_h=True, **attrs)
    got = assert_matches_ort(model, feeds)
    assert np.all(got["Y"][1:, :, 1] == 0.0)
    assert np.all(got["Y"][4:, :, 2] == 0.0)


@BOTH
def test_sequence_lens_zero_length(op):
    model, feeds = recurrent_case(op, 4, 3, 2, 3, direction="bidirectional", lens=[0, 2, 4], initial_h=True)
    got = assert_matches_ort(model, feeds)
    assert np.all(got["Y_h"][:, 0] == 0.0)


@pytest.mark.parametrize("activations", [["Relu"], ["Sigmoid"], ["Tanh"], ["Relu", "Sigmoid"]])
def test_rnn_activations(activations):
    direction = "bidirectional" if len(activations) == 2 else "forward"
    model, feeds = recurrent_case("RNN", 5, 3, 4, 6, direction=direction, initial_h=True, activations=activations)
    assert_matches_ort(model, feeds)


def test_rnn_one_activation_for_both_directions():
    # One activation on a bidirectional node serves both directions; onnxruntime wants one each.
    model, feeds = recurrent_case("RNN", 4, 2, 3, 4, direction="bidirectional", activations=["Relu", "Relu"])
    want = run_ort(model, feeds)
    model.graph.node[0].attribute.remove(next(a for a in model.graph.node[0].attribute if a.name == "activations"))
    model.graph.node[0].attribute.append(helper.make_attribute("activations", ["Relu"]))
    got = run_dnnx(model, feeds)
    for name in OUTPUTS:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-4, atol=1e-5, err_msg=name)


@pytest.mark.parametrize("op,attrs", [("GRU", {}), ("GRU", {"linear_before_reset": 1}),
                                      ("RNN", {"activations": ["Relu", "Tanh"]})])
def test_clip(op, attrs):
    model, feeds = recurrent_case(op, 5, 3, 4, 6, direction="bidirectional", initial_h=True, clip=0.4, **attrs)
    assert_matches_ort(model, feeds)


@BOTH
@pytest.mark.parametrize("outputs", [("Y",), ("Y_h",)])
def test_omitted_outputs(op, outputs):
    model, feeds = recurrent_case(op, 4, 2, 3, 4, direction="bidirectional", outputs=outputs, lens=[4, 2])
    got = assert_matches_ort(model, feeds)
    assert set(got) == set(outputs)


def test_gru_default_activations_spelled_out():
    model, feeds = recurrent_case("GRU", 3, 2, 3, 4, direction="bidirectional", activations=["Sigmoid", "Tanh"] * 2)
    assert_matches_ort(model, feeds)


@BOTH
@pytest.mark.parametrize("opset", [7, 14, 22])
def test_opsets(op, opset):
    model, feeds = recurrent_case(op, 4, 2, 3, 4, direction="reverse", initial_h=True, opset=opset)
    assert_matches_ort(model, feeds)


@BOTH
def test_hidden_size_from_r(op):
    model, feeds = recurrent_case(op, 3, 2, 3, 4)
    want = run_ort(model, feeds)
    del model.graph.node[0].attribute[:]  # no hidden_size, no direction: H is read from R
    got = run_dnnx(model, feeds)
    for name in OUTPUTS:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-4, atol=1e-5, err_msg=name)


@pytest.mark.parametrize("op,attrs", [("GRU", {}), ("GRU", {"linear_before_reset": 1}), ("RNN", {})])
def test_longer_sequence_matches(op, attrs):
    # Weights of scale 0.2: at 0.5 a 32-wide RNN is chaotic over 48 steps, and float32 rounding
    # alone (onnxruntime's included) moves Y by 1e-4 from a float64 run.
    model, feeds = recurrent_case(op, 48, 8, 16, 32, direction="bidirectional", initial_h=True,
                                  lens=[48, 40, 1, 33, 48, 2, 17, 30], scale=0.2, **attrs)
    assert_matches_ort(model, feeds, rtol=1e-4, atol=2e-5)


@pytest.mark.parametrize("hidden", [1, 7, 33])
def test_gru_batch_one_odd_hidden(hidden):
    model, feeds = recurrent_case("GRU", 7, 1, 5, hidden, direction="bidirectional", initial_h=True,
                                  linear_before_reset=1)
    assert_matches_ort(model, feeds)


# --- layout 1: onnxruntime has no kernel, so compare with a layout-0 run on transposed tensors --

def to_seq_major(feeds):
    out = dict(feeds)
    out["X"] = feeds["X"].transpose(1, 0, 2)
    if "initial_h" in feeds:
        out["initial_h"] = feeds["initial_h"].transpose(1, 0, 2)
    return out


@pytest.mark.parametrize("op,attrs", [("GRU", {}), ("GRU", {"linear_before_reset": 1}),
                                      ("RNN", {"activations": ["Relu"]})])
@DIRECTIONS
def test_layout_batch_major(op, attrs, direction):
    if direction == "bidirectional" and "activations" in attrs:
        attrs = {"activations": ["Relu", "Tanh"]}
    kwargs = dict(direction=direction, lens=[5, 2, 4], initial_h=True, **attrs)
    model1, feeds1 = recurrent_case(op, 5, 3, 4, 6, layout=1, **kwargs)
    model0, _ = recurrent_case(op, 5, 3, 4, 6, layout=0, **kwargs)
    want = run_ort(model0, to_seq_major(feeds1))
    got = run_dnnx(model1, feeds1)
    np.testing.assert_allclose(got["Y"], want["Y"].transpose(2, 0, 1, 3), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got["Y_h"], want["Y_h"].transpose(1, 0, 2), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("op,attrs", [("GRU", {"linear_before_reset": 1}), ("RNN", {})])
def test_layout_batch_major_against_reference(op, attrs):
    from onnx.reference import ReferenceEvaluator

    model, feeds = recurrent_case(op, 4, 3, 2, 5, layout=1, initial_h=True, **attrs)
    want = dict(zip(OUTPUTS, ReferenceEvaluator(model).run(None, feeds)))
    got = run_dnnx(model, feeds)
    for name in OUTPUTS:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-4, atol=1e-5, err_msg=name)


# --- PyTorch's export pattern ----------------------------------------------------------------

def torch_style_gru(seq, batch, inp, hidden, seed=0):
    """What torch.onnx.export makes of a one-layer batch_first nn.GRU: a Transpose to seq-major,
    a GRU with linear_before_reset=1 whose W/R/B are PyTorch's (r, z, n) blocks reordered to
    ONNX's (z, r, h), a Squeeze of the direction axis and a Transpose back to batch-major."""
    w_ih, w_hh = rand(3 * hidden, inp, seed=seed + 1) * 0.4, rand(3 * hidden, hidden, seed=seed + 2) * 0.4
    b_ih, b_hh = rand(3 * hidden, seed=seed + 3) * 0.4, rand(3 * hidden, seed=seed + 4) * 0.4

    def reorder(a):  # PyTorch r, z, n -> ONNX z, r, h
        r, z, n = np.split(a, 3, axis=0)
        return np.concatenate([z, r, n], axis=0)

    weights = {"W": reorder(w_ih)[None], "R": reorder(w_hh)[None],
               "B": np.concatenate([reorder(b_ih), reorder(b_hh)])[None],
               "axes": np.array([1], dtype=np.int64)}
    nodes = [helper.make_node("Transpose", ["x"], ["x_t"], perm=[1, 0, 2]),
             helper.make_node("GRU", ["x_t", "W", "R", "B", "", "h0"], ["y", "y_h"], hidden_size=hidden,
                              linear_before_reset=1),
             helper.make_node("Squeeze", ["y", "axes"], ["y_s"]),
             helper.make_node("Transpose", ["y_s"], ["out"], perm=[1, 0, 2])]
    model = make_model(nodes, [("x", [batch, seq, inp]), ("h0", [1, batch, hidden])],
                       [("out", [batch, seq, hidden]), ("y_h", [1, batch, hidden])], weights)
    feeds = {"x": rand(batch, seq, inp, seed=seed), "h0": rand(1, batch, hidden, seed=seed + 5)}
    return model, feeds, (w_ih, w_hh, b_ih, b_hh)


def torch_gru_reference(x, h0, w_ih, w_hh, b_ih, b_hh):
    """nn.GRU's documented equations in float64 (batch_first, one layer, one direction)."""
    sig = lambda v: 1.0 / (1.0 + np.exp(-v))  # noqa: E731
    h = h0[0].astype(np.float64)
    out = []
    for t in range(x.shape[1]):
        gi = x[:, t].astype(np.float64) @ w_ih.T + b_ih
        gh = h @ w_hh.T + b_hh
        (i_r, i_z, i_n), (h_r, h_z, h_n) = np.split(gi, 3, axis=1), np.split(gh, 3, axis=1)
        r, z = sig(i_r + h_r), sig(i_z + h_z)
        n = np.tanh(i_n + r * h_n)
        h = (1 - z) * n + z * h
        out.append(h)
    return np.stack(out, axis=1), h[None]


def test_pytorch_gru_export_pattern():
    model, feeds, params = torch_style_gru(7, 3, 5, 8)
    got = assert_matches_ort(model, feeds)
    want_out, want_h = torch_gru_reference(feeds["x"], feeds["h0"], *params)
    np.testing.assert_allclose(got["out"], want_out, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got["y_h"], want_h, rtol=1e-4, atol=1e-5)


# --- errors ----------------------------------------------------------------------------------

@pytest.mark.parametrize("op,attrs", [
    ("GRU", {"activations": ["Relu", "Tanh"]}),
    ("GRU", {"activations": ["Sigmoid", "Tanh"] * 2}),  # two directions' worth on a forward node
    ("RNN", {"activations": ["Softsign"]}),
    ("RNN", {"activations": ["Tanh"], "activation_alpha": [1.0]}),
])
def test_unsupported_activations(op, attrs):
    model, _ = recurrent_case(op, 3, 2, 3, 4, name="my_rec", **attrs)
    with pytest.raises(dnnx.UnsupportedModelError, match="my_rec") as err:
        dnnx.load(model)
    assert "activation" in str(err.value)


@BOTH
def test_bad_sequence_lens_value(op):
    model, feeds = recurrent_case(op, 3, 2, 3, 4, name="my_rec", lens=[3, 1])
    m = dnnx.load(model)
    feeds["sequence_lens"] = np.array([4, 1], dtype=np.int32)
    with pytest.raises(ValueError, match="my_rec.*sequence_lens"):
        m.run_dict(feeds)
    feeds["sequence_lens"] = np.array([3, 2], dtype=np.int32)
    assert m.run_dict(feeds)["Y"].shape == (3, 1, 2, 4)  # the model stays usable


@BOTH
def test_wrong_weight_shape(op):
    model, _ = recurrent_case(op, 3, 2, 3, 4, name="my_rec")
    w = next(t for t in model.graph.initializer if t.name == "W")
    w.CopyFrom(numpy_helper.from_array(rand(1, 16, 5), "W"))
    with pytest.raises(dnnx.InvalidModelError, match="my_rec.*input W"):
        dnnx.load(model)


def test_bad_linear_before_reset():
    model, _ = recurrent_case("GRU", 3, 2, 3, 4, name="my_gru", linear_before_reset=2)
    with pytest.raises(dnnx.InvalidModelError, match="my_gru.*linear_before_reset"):
        dnnx.load(model)
