"""Stacked LSTM nodes (one layer each, the direction axis dropped between them, as exporters write a
multi-layer LSTM) and the fuse_lstm_stack pass. Only a backend with an LSTMStack kernel fuses them
(CUDA: tests/cuda/test_cuda_lstm_stack.py); on the CPU the graph stays as it is, with the pass on
or off, and the results are onnxruntime's. `stacked_lstm` builds the models for both test files."""
import numpy as np
import pytest
from onnx import helper

import dnnx
from ort_check import assert_matches_ort, make_model, rand

STATES = ("Y", "Y_h", "Y_c")
DROPS = ("reshape", "reshape_infer", "squeeze", "squeeze_attr")


def stacked_lstm(layers, batch, *, seq=6, inp=5, hidden=8, drop="reshape", outputs=STATES, batch_dim=None,
                 hiddens=None, directions=None, initial_h_layer=None, tap_layer=None, state_tap_layer=None, seed=0):
    """`layers` LSTM nodes lstm0, lstm1, ...; between two, the earlier Y [seq, D, batch, H] is made
    [seq, batch, D*H] by `drop`: 'reshape' (a constant [seq, batch, D*H]), 'reshape_infer'
    ([0, -1, D*H]), 'squeeze' (axes [1] as an input, opset 17) or 'squeeze_attr' (axes as an
    attribute, opset 11). The graph outputs are the last LSTM's `outputs`. For cases that must not
    fuse: hiddens / directions per layer, initial_h_layer (that layer's initial_h a graph input),
    tap_layer (that layer's dropped Y also a graph output 'tap'), state_tap_layer (that layer's Y_h
    also a graph output 'tap_h'). batch_dim: a symbolic batch dim name. Returns (model, feeds)."""
    hiddens = hiddens or [hidden] * layers
    directions = directions or ["forward"] * layers
    opset = 11 if drop == "squeeze_attr" else 17
    b = batch_dim or batch
    nodes, inits, graph_inputs, graph_outputs = [], {}, [("X", [seq, b, inp])], []
    feeds = {"X": rand(seq, batch, inp, seed=seed)}
    x, width = "X", inp
    for l in range(layers):
        h, nd = hiddens[l], 2 if directions[l] == "bidirectional" else 1
        inits[f"W{l}"] = rand(nd, 4 * h, width, seed=seed + 10 * l + 1) * 0.4
        inits[f"R{l}"] = rand(nd, 4 * h, h, seed=seed + 10 * l + 2) * 0.4
        inits[f"B{l}"] = rand(nd, 8 * h, seed=seed + 10 * l + 3) * 0.4
        ins = [x, f"W{l}", f"R{l}", f"B{l}"]
        if l == initial_h_layer:
            ins += ["", f"initial_h{l}"]
            graph_inputs.append((f"initial_h{l}", [nd, b, h]))
            feeds[f"initial_h{l}"] = rand(nd, batch, h, seed=seed + 10 * l + 4)
        last = l == layers - 1
        outs = [o if o in outputs else "" for o in STATES] if last else [f"Y{l}"]
        if l == state_tap_layer:
            outs = [f"Y{l}", "tap_h"]
            graph_outputs.append(("tap_h", None))
        while not outs[-1]:
            outs.pop()
        if last:
            graph_outputs += [(o, None) for o in outs if o]
        nodes.append(helper.make_node("LSTM", ins, outs, name=f"lstm{l}", hidden_size=h, direction=directions[l]))
        if last:
            break
        dropped = f"S{l}"
        if drop.startswith("squeeze") and nd == 1:
            if drop == "squeeze":
                inits[f"axes{l}"] = np.array([1], np.int64)
                nodes.append(helper.make_node("Squeeze", [f"Y{l}", f"axes{l}"], [dropped], name=f"drop{l}"))
            else:
                nodes.append(helper.make_node("Squeeze", [f"Y{l}"], [dropped], name=f"drop{l}", axes=[1]))
        else:
            target = [0, -1, nd * h] if drop == "reshape_infer" else [seq, batch, nd * h]
            inits[f"shape{l}"] = np.array(target, np.int64)
            nodes.append(helper.make_node("Reshape", [f"Y{l}", f"shape{l}"], [dropped], name=f"drop{l}"))
        if l == tap_layer:
            graph_outputs.append((dropped, None))
        x, width = dropped, nd * h
    return make_model(nodes, graph_inputs, graph_outputs, inits, opset=opset), feeds


def lstm_ops(model, **load_kwargs):
    return [row["op"] for row in dnnx.load(model, **load_kwargs).plan() if "LSTM" in row["op"]]


@pytest.mark.parametrize("drop", DROPS)
@pytest.mark.parametrize("layers", [2, 4])
def test_cpu_keeps_stacked_lstms_apart(drop, layers):
    model, feeds = stacked_lstm(layers, 3, drop=drop)
    assert_matches_ort(model, feeds)
    assert lstm_ops(model) == ["LSTM"] * layers
    assert lstm_ops(model, passes={"fuse_lstm_stack": False}) == ["LSTM"] * layers


def test_cpu_results_do_not_depend_on_the_switch():
    model, feeds = stacked_lstm(3, 4, drop="reshape_infer", batch_dim="N")
    on = dnnx.load(model).run_dict(feeds)
    off = dnnx.load(model, passes={"fuse_lstm_stack": False}).run_dict(feeds)
    assert set(on) == set(STATES)
    for name in on:
        np.testing.assert_array_equal(on[name], off[name], err_msg=name)


def test_the_switch_and_the_fused_op_is_not_listed():
    model, _ = stacked_lstm(2, 1)
    assert "fuse_lstm_stack" in dnnx.pass_names()
    assert dnnx.load(model, passes={"fuse_lstm_stack": False}).passes["fuse_lstm_stack"] is False
    assert dnnx.load(model).passes["fuse_lstm_stack"] is True
    assert "LSTM" in dnnx.supported_ops() and "LSTMStack" not in dnnx.supported_ops()


def test_builder_makes_the_shapes_it_says():
    # The CUDA tests trust these models: every variant is a valid ONNX model onnxruntime runs.
    for kwargs in ({"directions": ["forward", "bidirectional", "forward"]}, {"hiddens": [8, 6, 6]},
                   {"initial_h_layer": 1}, {"tap_layer": 0}, {"state_tap_layer": 1}, {"outputs": ("Y_h",)}):
        model, feeds = stacked_lstm(3, 2, **kwargs)
        assert_matches_ort(model, feeds)
