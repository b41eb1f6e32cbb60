"""LSTM on CUDA (cuDNN's RNN v8 API) against the CPU backend and onnxruntime: every direction,
both layouts, sequence_lens (zero lengths too) from a graph input or a constant, initial states,
omitted outputs, weights that are graph inputs, stacked layers, and what cuDNN cannot run
(peepholes, clip, input_forget), refused at load naming the node."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import dnnx
from cuda_check import assert_close, check_cuda
from dnnx.examples import build
from ort_check import make_model, rand
from test_lstm import lstm_case

OUTPUTS = ("Y", "Y_h", "Y_c")


def check(model, feeds, layout=0):
    """onnxruntime has no layout-1 LSTM: the CPU backend (itself checked against onnxruntime on
    transposed tensors in tests/test_lstm.py) is the oracle there."""
    return check_cuda(model, feeds, ort=layout == 0)


def to_initializer(model, feeds, name):
    """Moves the graph input `name` into the initializers (a constant), with its feed's value."""
    keep = [i for i in model.graph.input if i.name != name]
    del model.graph.input[:]
    model.graph.input.extend(keep)
    model.graph.initializer.append(numpy_helper.from_array(feeds.pop(name), name))
    return model, feeds


def to_graph_input(model, feeds, name):
    """Moves the initializer `name` into the graph inputs, fed with its value."""
    init = next(t for t in model.graph.initializer if t.name == name)
    feeds[name] = numpy_helper.to_array(init)
    model.graph.input.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, list(init.dims)))
    keep = [t for t in model.graph.initializer if t.name != name]
    del model.graph.initializer[:]
    model.graph.initializer.extend(keep)
    return model, feeds


@pytest.mark.parametrize("layout", [0, 1])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("bias", [True, False])
def test_directions_and_layouts(layout, direction, bias):
    model, feeds = lstm_case(5, 3, 4, 6, direction=direction, layout=layout, bias=bias)
    check(model, feeds, layout)


@pytest.mark.parametrize("layout", [0, 1])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_initial_states_and_sequence_lens(layout, direction):
    model, feeds = lstm_case(6, 4, 3, 5, direction=direction, layout=layout, lens=[6, 1, 4, 3], initial_h=True,
                             initial_c=True)
    got = check(model, feeds, layout)
    y = got["Y"] if layout == 0 else got["Y"].transpose(1, 2, 0, 3)  # [seq, D, batch, H]
    assert np.all(y[1:, :, 1] == 0.0) and np.all(y[4:, :, 2] == 0.0)


@pytest.mark.parametrize("layout", [0, 1])
def test_zero_length_sequences_give_zeros(layout):
    model, feeds = lstm_case(4, 3, 2, 3, direction="bidirectional", layout=layout, lens=[0, 2, 4], initial_h=True,
                             initial_c=True)
    got = check(model, feeds, layout)
    state_axis = 1 if layout == 0 else 0
    for name in ("Y_h", "Y_c"):
        assert np.all(np.take(got[name], 0, axis=state_axis) == 0.0), name


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_constant_sequence_lens_fixed_at_plan_time(direction):
    model, feeds = lstm_case(6, 4, 3, 5, direction=direction, lens=[6, 0, 4, 3], initial_h=True)
    model, feeds = to_initializer(model, feeds, "sequence_lens")
    plan = dnnx.load(model, device="cuda").plan()
    assert "lengths read per run" not in plan[0]["algorithm"], plan[0]
    check(model, feeds)


@pytest.mark.parametrize("outputs", [("Y",), ("Y_h",), ("Y_c",), ("Y", "Y_c"), ("Y_h", "Y_c")])
@pytest.mark.parametrize("layout", [0, 1])
def test_omitted_outputs(outputs, layout):
    model, feeds = lstm_case(4, 2, 3, 4, direction="bidirectional", layout=layout, outputs=outputs, lens=[4, 2],
                             initial_h=True, initial_c=True)
    got = check(model, feeds, layout)
    assert set(got) == set(outputs)


@pytest.mark.parametrize("hidden", [1, 7, 33])
def test_batch_one_odd_hidden(hidden):
    model, feeds = lstm_case(7, 1, 5, hidden, direction="bidirectional", initial_h=True, initial_c=True)
    check(model, feeds)


def test_weights_as_graph_inputs_are_packed_per_run():
    model, feeds = lstm_case(4, 2, 3, 4, direction="bidirectional", lens=[4, 3])
    for name in ("W", "R", "B"):
        model, feeds = to_graph_input(model, feeds, name)
    gpu = dnnx.load(model, device="cuda")
    assert "weights packed per run" in gpu.plan()[0]["algorithm"]
    check(model, feeds)
    # A second run with other weights uses them (nothing of the first run's weights is kept).
    feeds = dict(feeds, W=feeds["W"] * 0.5)
    for name, want in dnnx.load(model).run_dict(feeds).items():
        assert_close(gpu.run_dict(feeds)[name], want, name)


def test_longer_sequence():
    model, feeds = lstm_case(32, 8, 16, 32, direction="bidirectional", initial_h=True, initial_c=True,
                             lens=[32, 30, 1, 17, 32, 2, 9, 20])
    check(model, feeds)


def test_stacked_layers_and_the_example_model():
    hidden = 16
    nodes, weights = [], {}
    x = "X"
    for layer in range(3):
        inp = 8 if layer == 0 else hidden
        weights[f"W{layer}"] = rand(1, 4 * hidden, inp, seed=layer) * 0.3
        weights[f"R{layer}"] = rand(1, 4 * hidden, hidden, seed=layer + 10) * 0.3
        weights[f"B{layer}"] = rand(1, 8 * hidden, seed=layer + 20) * 0.3
        nodes.append(helper.make_node("LSTM", [x, f"W{layer}", f"R{layer}", f"B{layer}"], [f"Y{layer}"],
                                      name=f"lstm{layer}", hidden_size=hidden))
        weights[f"shape{layer}"] = np.array([10, 3, hidden], dtype=np.int64)
        nodes.append(helper.make_node("Reshape", [f"Y{layer}", f"shape{layer}"], [f"S{layer}"], name=f"squeeze{layer}"))
        x = f"S{layer}"
    model = make_model(nodes, [("X", [10, 3, 8])], [(x, [10, 3, hidden])], weights)
    check(model, {"X": rand(10, 3, 8)})
    check(build("lstm"), {"x": rand(16, 5, 8)})


def test_sequence_lens_out_of_range_is_a_value_error():
    model, feeds = lstm_case(4, 2, 3, 4, lens=[4, 5])
    gpu = dnnx.load(model, device="cuda")
    with pytest.raises(ValueError, match="sequence_lens\\[1\\] is 5"):
        gpu.run_dict(feeds)
    feeds["sequence_lens"] = np.array([4, 2], dtype=np.int32)
    assert set(gpu.run_dict(feeds)) == set(OUTPUTS)


@pytest.mark.parametrize("variant,why", [({"peepholes": True}, "peepholes"), ({"clip": 0.5}, "clip"),
                                         ({"input_forget": 1}, "input_forget")])
def test_what_cudnn_cannot_run_runs_on_the_host_naming_the_node(variant, why):
    # Note [host fallback]: the LSTM runs on the CPU inside the CUDA plan, warned about once.
    model, feeds = lstm_case(4, 2, 3, 4, **variant)
    with pytest.warns(dnnx.HostFallbackWarning, match=f"lstm0.*{why}"):
        gpu = dnnx.load(model, device="cuda")
    want = dnnx.load(model).run_dict(feeds)
    for _ in range(3):  # eager, captured, replayed
        got = gpu.run_dict(feeds)
        for name, value in want.items():
            np.testing.assert_allclose(got[name], value, rtol=1e-6, atol=1e-7)  # the same CPU kernel
    assert [g["state"] for g in gpu.graphs()] == ["captured"]


def test_all_zero_peepholes_are_no_peepholes():
    model, feeds = lstm_case(4, 2, 3, 4, direction="bidirectional", peepholes=True, initial_c=True)
    p = next(t for t in model.graph.initializer if t.name == "P")
    p.CopyFrom(numpy_helper.from_array(np.zeros(numpy_helper.to_array(p).shape, np.float32), "P"))
    check(model, feeds)


def test_plan_row():
    model, _ = lstm_case(5, 3, 4, 6, direction="reverse", layout=1, lens=[5, 2, 4])
    (row,) = dnnx.load(model, device="cuda").plan()
    assert row["algorithm"].startswith("cudnnRNNForward"), row
    assert "sequences reversed by kernel" in row["algorithm"] and "lengths read per run" in row["algorithm"]
    assert row["math"] == "fp32 (CUDNN_FMA_MATH)"
    assert row["workspace"] > 0
