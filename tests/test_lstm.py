"""LSTM on the CPU against onnxruntime (layout 0), against onnxruntime on transposed tensors
(layout 1, which onnxruntime does not implement), and against the ONNX node tests."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import dnnx
from ort_check import assert_matches_ort, make_model, rand, run_ort

NODE_TESTS = Path(__file__).resolve().parents[2] / "shared" / "external" / "models" / "onnx_lstm_node_tests"
OUTPUTS = ("Y", "Y_h", "Y_c")


def lstm_case(seq, batch, inp, hidden, *, direction="forward", layout=0, bias=True, lens=None,
              initial_h=False, initial_c=False, peepholes=False, outputs=OUTPUTS, opset=17, seed=0,
              name="lstm0", **attrs):
    """Builds one LSTM node model and its feeds. W, R, B, P are initializers; X, sequence_lens
    and the initial states are graph inputs. `outputs` lists the outputs to keep (by name)."""
    nd = 2 if direction == "bidirectional" else 1
    batch_major = layout == 1
    weights = {"W": rand(nd, 4 * hidden, inp, seed=seed + 1) * 0.5,
               "R": rand(nd, 4 * hidden, hidden, seed=seed + 2) * 0.5}
    if bias:
        weights["B"] = rand(nd, 8 * hidden, seed=seed + 3) * 0.5
    if peepholes:
        weights["P"] = rand(nd, 3 * hidden, seed=seed + 4) * 0.5
    state_shape = [batch, nd, hidden] if batch_major else [nd, batch, hidden]
    x_shape = [batch, seq, inp] if batch_major else [seq, batch, inp]
    feeds = {"X": rand(*x_shape, seed=seed)}
    graph_inputs = [("X", x_shape)]
    if lens is not None:
        feeds["sequence_lens"] = np.asarray(lens, dtype=np.int32)
        graph_inputs.append(("sequence_lens", [batch], TensorProto.INT32))
    if initial_h:
        feeds["initial_h"] = rand(*state_shape, seed=seed + 5)
        graph_inputs.append(("initial_h", state_shape))
    if initial_c:
        feeds["initial_c"] = rand(*state_shape, seed=seed + 6)
        graph_inputs.append(("initial_c", state_shape))

    names = ["X", "W", "R", "B" if bias else "", "sequence_lens" if lens is not None else "",
             "initial_h" if initial_h else "", "initial_c" if initial_c else "", "P" if peepholes else ""]
    while not names[-1]:
        names.pop()
    node_outputs = [o if o in outputs else "" for o in OUTPUTS]
    while not node_outputs[-1]:
        node_outputs.pop()
    if layout:
        attrs["layout"] = layout
    node = helper.make_node("LSTM", names, node_outputs, name=name, hidden_size=hidden,
                            direction=direction, **attrs)
    y_shape = [batch, seq, nd, hidden] if batch_major else [seq, nd, batch, hidden]
    shapes = {"Y": y_shape, "Y_h": state_shape, "Y_c": state_shape}
    model = make_model([node], graph_inputs, [(o, shapes[o]) for o in OUTPUTS if o in outputs],
                       weights, opset=opset)
    return model, feeds


def run_dnnx(model, feeds):
    return dnnx.load(model).run_dict(feeds)


# --- layout 0 against onnxruntime -------------------------------------------------------------

@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("bias", [True, False])
def test_directions(direction, bias):
    model, feeds = lstm_case(5, 3, 4, 6, direction=direction, bias=bias)
    assert_matches_ort(model, feeds)


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_initial_state_and_peepholes(direction):
    model, feeds = lstm_case(4, 2, 3, 5, direction=direction, initial_h=True, initial_c=True,
                             peepholes=True)
    assert_matches_ort(model, feeds)


@pytest.mark.parametrize("initial", [(True, False), (False, True)])
def test_one_initial_state(initial):
    model, feeds = lstm_case(3, 2, 3, 4, initial_h=initial[0], initial_c=initial[1])
    assert_matches_ort(model, feeds)


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_sequence_lens(direction):
    # Varied lengths, the full length and 1: Y is zero past each length, Y_h/Y_c at the last step.
    model, feeds = lstm_case(6, 4, 3, 5, direction=direction, lens=[6, 1, 4, 3], initial_h=True,
                             initial_c=True, peepholes=True)
    got = assert_matches_ort(model, feeds)
    assert np.all(got["Y"][1:, :, 1] == 0.0)
    assert np.all(got["Y"][4:, :, 2] == 0.0)


def test_sequence_lens_zero_length():
    # A zero-length sequence yields zero Y, Y_h and Y_c (onnxruntime's behaviour).
    model, feeds = lstm_case(4, 3, 2, 3, direction="bidirectional", lens=[0, 2, 4], initial_h=True,
                             initial_c=True)
    got = assert_matches_ort(model, feeds)
    assert np.all(got["Y_h"][:, 0] == 0.0)


@pytest.mark.parametrize("outputs", [("Y",), ("Y_h",), ("Y_c",), ("Y", "Y_c"), ("Y_h", "Y_c")])
def test_omitted_outputs(outputs):
    model, feeds = lstm_case(4, 2, 3, 4, direction="bidirectional", outputs=outputs, lens=[4, 2])
    got = assert_matches_ort(model, feeds)
    assert set(got) == set(outputs)


@pytest.mark.parametrize("hidden", [1, 7, 33])
def test_batch_one_odd_hidden(hidden):
    model, feeds = lstm_case(7, 1, 5, hidden, direction="bidirectional", initial_h=True, initial_c=True)
    assert_matches_ort(model, feeds)


def test_clip():
    model, feeds = lstm_case(5, 3, 4, 6, direction="bidirectional", peepholes=True, clip=0.4)
    assert_matches_ort(model, feeds)


def test_input_forget():
    model, feeds = lstm_case(5, 3, 4, 6, direction="bidirectional", peepholes=True, input_forget=1,
                             initial_c=True)
    assert_matches_ort(model, feeds)


def test_default_activations_spelled_out():
    model, feeds = lstm_case(3, 2, 3, 4, direction="bidirectional",
                             activations=["Sigmoid", "Tanh", "Tanh"] * 2)
    assert_matches_ort(model, feeds)


def test_hidden_size_from_r():
    # onnxruntime requires hidden_size, so the expected values come from the model that has it.
    model, feeds = lstm_case(3, 2, 3, 4)
    want = run_ort(model, feeds)
    del model.graph.node[0].attribute[:]  # no hidden_size, no direction: H is read from R
    got = run_dnnx(model, feeds)
    for name in OUTPUTS:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-4, atol=1e-5, err_msg=name)


@pytest.mark.parametrize("opset", [7, 14, 22])
def test_opsets(opset):
    model, feeds = lstm_case(4, 2, 3, 4, direction="reverse", initial_h=True, opset=opset)
    assert_matches_ort(model, feeds)


def test_weights_as_graph_inputs():
    # W and R fed at run time rather than stored as initializers.
    model, feeds = lstm_case(4, 2, 3, 4, bias=False)
    for name in ("W", "R"):
        init = next(t for t in model.graph.initializer if t.name == name)
        feeds[name] = numpy_helper.to_array(init)
        model.graph.input.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, list(init.dims)))
    del model.graph.initializer[:]
    assert_matches_ort(model, feeds)


def test_longer_sequence_matches():
    model, feeds = lstm_case(64, 8, 16, 32, direction="bidirectional", initial_h=True, initial_c=True,
                             lens=[64, 60, 1, 33, 64, 2, 17, 40])
    assert_matches_ort(model, feeds, rtol=1e-4, atol=2e-5)


# --- layout 1: onnxruntime has no kernel, so compare with a layout-0 run on transposed tensors --

def to_seq_major(feeds):
    out = dict(feeds)
    out["X"] = feeds["X"].transpose(1, 0, 2)
    for name in ("initial_h", "initial_c"):
        if name in feeds:
            out[name] = feeds[name].transpose(1, 0, 2)
    return out


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("outputs", [OUTPUTS, ("Y_h",), ("Y", "Y_c")])
def test_layout_batch_major(direction, outputs):
    kwargs = dict(direction=direction, lens=[5, 2, 4], initial_h=True, initial_c=True, peepholes=True,
                  outputs=outputs)
    model1, feeds1 = lstm_case(5, 3, 4, 6, layout=1, **kwargs)
    model0, _ = lstm_case(5, 3, 4, 6, layout=0, **kwargs)
    want = run_ort(model0, to_seq_major(feeds1))
    got = run_dnnx(model1, feeds1)
    assert set(got) == set(outputs)
    if "Y" in outputs:
        np.testing.assert_allclose(got["Y"], want["Y"].transpose(2, 0, 1, 3), rtol=1e-4, atol=1e-5)
    for name in ("Y_h", "Y_c"):
        if name in outputs:
            np.testing.assert_allclose(got[name], want[name].transpose(1, 0, 2), rtol=1e-4, atol=1e-5)


def test_layout_batch_major_against_reference():
    from onnx.reference import ReferenceEvaluator

    model, feeds = lstm_case(4, 3, 2, 5, layout=1, initial_h=True, initial_c=True)
    want = dict(zip(OUTPUTS, ReferenceEvaluator(model).run(None, feeds)))
    got = run_dnnx(model, feeds)
    for name in OUTPUTS:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-4, atol=1e-5, err_msg=name)


# --- the ONNX node tests ---------------------------------------------------------------------

def node_test_dirs():
    return sorted(NODE_TESTS.glob("test_lstm_*")) if NODE_TESTS.is_dir() else []


@pytest.mark.parametrize("case", node_test_dirs() or [None], ids=lambda p: p.name if p else "absent")
def test_onnx_node_tests(case):
    if case is None:
        pytest.skip(f"{NODE_TESTS} is absent")
    model = onnx.load(str(case / "model.onnx"))
    data = case / "test_data_set_0"

    def load(kind):
        files = sorted(data.glob(f"{kind}_*.pb"), key=lambda p: int(p.stem.split("_")[1]))
        return [numpy_helper.to_array(onnx.load_tensor(str(p))) for p in files]

    inputs = [i.name for i in model.graph.input
              if i.name not in {t.name for t in model.graph.initializer}]
    feeds = dict(zip(inputs, load("input")))
    got = run_dnnx(model, feeds)
    expected = load("output")
    assert len(expected) == len(model.graph.output)
    for out, want in zip(model.graph.output, expected):
        np.testing.assert_allclose(got[out.name], want, rtol=1e-4, atol=1e-5, err_msg=out.name)


# --- errors ----------------------------------------------------------------------------------

@pytest.mark.parametrize("attrs", [
    {"activations": ["Relu", "Tanh", "Tanh"]},
    {"activations": ["Sigmoid", "Tanh", "Tanh"] * 2},  # two directions' worth on a forward node
    {"activations": ["Sigmoid", "Tanh", "Tanh"], "activation_alpha": [1.0]},
])
def test_unsupported_activations(attrs):
    model, _ = lstm_case(3, 2, 3, 4, name="my_lstm", **attrs)
    with pytest.raises(dnnx.UnsupportedModelError, match="my_lstm") as err:
        dnnx.load(model)
    assert "activation" in str(err.value)


def test_bad_sequence_lens_value():
    model, feeds = lstm_case(3, 2, 3, 4, name="my_lstm", lens=[3, 1])
    m = dnnx.load(model)
    feeds["sequence_lens"] = np.array([4, 1], dtype=np.int32)
    with pytest.raises(ValueError, match="my_lstm.*sequence_lens"):
        m.run_dict(feeds)
    feeds["sequence_lens"] = np.array([3, 2], dtype=np.int32)
    assert m.run_dict(feeds)["Y"].shape == (3, 1, 2, 4)  # the model stays usable


def test_wrong_weight_shape():
    model, _ = lstm_case(3, 2, 3, 4, name="my_lstm")
    w = next(t for t in model.graph.initializer if t.name == "W")
    w.CopyFrom(numpy_helper.from_array(rand(1, 16, 5), "W"))
    with pytest.raises(dnnx.InvalidModelError, match="my_lstm.*input W"):
        dnnx.load(model)
