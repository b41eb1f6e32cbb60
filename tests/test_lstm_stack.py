"""Stacked LSTM nodes (one layer each, the direction axis dropped between them, as exporters write a
multi-layer LSTM) and the fuse_lstm_stack pass. Only a backend with an LSTMStack kernel fuses them
(CUDA: tests/cuda/test_cuda_lstm_stack.py); on the CPU the graph stays as it is, with the pass on
or off, and the results are onnxruntime's. `stacked_lstm` builds the models for both test files."""
import numpy as np
import pytest
from onnx import helper, numpy_helper

import dnnx
from ort_check import assert_matches_ort, make_model, rand, run_ort

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


# A deep stack (4 layers x 40 steps, hidden 64) against float64: every step's fp32 rounding feeds
# back through R and on into the next layer, so fp32 results differ from the exact ones by more
# than the one-layer bounds allow. Measured here: the CPU backend and onnxruntime are off by up to
# 4.2e-5 and 4.8e-5 x max|Y| (relative L2 below 6e-6); they agree with each other more closely
# only because they sum in the same order. Any fp32 implementation (the CPU backend, cuDNN with
# or without the stack fused) is held to 4x that elementwise and 10x in L2.
DEEP_ATOL = 2e-4  # x max|ref|, elementwise
DEEP_L2 = 5e-5


def deep_stack():
    return stacked_lstm(4, 16, seq=40, inp=24, hidden=64, drop="reshape_infer")


def stack_reference64(model, x):
    """The stack in float64 (numpy; ONNX gate order i, o, f, c): Y, Y_h, Y_c of the last layer."""
    w = {t.name: numpy_helper.to_array(t).astype(np.float64) for t in model.graph.initializer}
    seq = x.astype(np.float64)  # [seq, batch, width]
    layer = 0
    while f"W{layer}" in w:
        wx, wh, b = w[f"W{layer}"][0], w[f"R{layer}"][0], w[f"B{layer}"][0]
        hidden = wh.shape[1]
        h = np.zeros((x.shape[1], hidden))
        c = np.zeros_like(h)
        ys = []
        for t in range(seq.shape[0]):
            i, o, f, g = np.split(seq[t] @ wx.T + h @ wh.T + b[:4 * hidden] + b[4 * hidden:], 4, axis=1)
            c = c / (1 + np.exp(-f)) + np.tanh(g) / (1 + np.exp(-i))
            h = np.tanh(c) / (1 + np.exp(-o))
            ys.append(h)
        seq = np.stack(ys)
        layer += 1
    return {"Y": seq[:, None], "Y_h": h[None], "Y_c": c[None]}


def assert_near_float64(got, want, what):
    for name, exact in want.items():
        err = np.abs(got[name].astype(np.float64) - exact)
        scale = np.abs(exact).max()
        assert err.max() <= DEEP_ATOL * scale, f"{what} {name}: max error {err.max() / scale:.3g} x max|ref|"
        rel = np.linalg.norm(err) / np.linalg.norm(exact)
        assert rel <= DEEP_L2, f"{what} {name}: relative L2 error {rel:.3g}"


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


def test_cpu_deep_stack_against_float64():
    # The bound the CUDA stack is held to (tests/cuda/test_cuda_lstm_stack.py) holds for the CPU.
    model, feeds = deep_stack()
    want = stack_reference64(model, feeds["X"])
    assert_near_float64(dnnx.load(model).run_dict(feeds), want, "cpu")
    assert_near_float64(run_ort(model, feeds), want, "onnxruntime")


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
