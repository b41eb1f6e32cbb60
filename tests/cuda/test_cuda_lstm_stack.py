"""Stacked LSTM nodes on CUDA: the fuse_lstm_stack pass makes them one LSTMStack, run as ONE
cudnnRNNForward with numLayers = layers (lstm_stack_cuda.cc). Every case is checked against the
CPU backend and onnxruntime (cuda_check.py: fp32, FMA math, RTOL 1e-4, ATOL 1e-5 * max|ref|,
relative L2 2e-5) with the pass on, and the fused results against the unfused ones (one
cudnnRNNForward per node) within the same bounds: both are fp32 FMA sums of the same products,
only the order of the GEMMs' partial sums may differ, far below those bounds. Cases that must not
fuse keep their LSTM nodes and still match."""
import numpy as np
import pytest

import dnnx
from cuda_check import assert_close, check_cuda
from test_lstm_stack import DROPS, STATES, assert_near_float64, deep_stack, lstm_ops, stack_reference64, stacked_lstm

OFF = {"passes": {"fuse_lstm_stack": False}}


def check_fused_and_unfused(model, feeds):
    """CUDA with the pass == CPU == onnxruntime; CUDA without the pass == CUDA with it."""
    fused = check_cuda(model, feeds)
    unfused = dnnx.load(model, device="cuda", **OFF).run_dict(feeds)
    assert set(unfused) == set(fused)
    for name in fused:
        assert_close(fused[name], unfused[name], f"{name} (fused vs unfused)")
    return fused


def stack_rows(model, **load_kwargs):
    return [row for row in dnnx.load(model, device="cuda", **load_kwargs).plan() if row["op"] == "LSTMStack"]


@pytest.mark.parametrize("batch", [1, 8, 32])
@pytest.mark.parametrize("drop", DROPS)
@pytest.mark.parametrize("layers", [2, 3, 4])
def test_stacks_fuse_into_one_call(layers, drop, batch):
    model, feeds = stacked_lstm(layers, batch, drop=drop)
    check_fused_and_unfused(model, feeds)
    assert lstm_ops(model, device="cuda") == ["LSTMStack"]
    assert lstm_ops(model, device="cuda", **OFF) == ["LSTM"] * layers


@pytest.mark.parametrize("outputs", [("Y",), ("Y_h",), ("Y_c",), ("Y", "Y_c"), ("Y_h", "Y_c"), STATES])
def test_with_and_without_the_last_states(outputs):
    model, feeds = stacked_lstm(3, 8, outputs=outputs)
    got = check_fused_and_unfused(model, feeds)
    assert set(got) == set(outputs)
    assert lstm_ops(model, device="cuda") == ["LSTMStack"]


def test_the_plan_names_the_fused_layers():
    model, _ = stacked_lstm(4, 8, drop="squeeze")
    (row,) = stack_rows(model)
    assert row["name"] == "lstm0"
    assert "cudnnRNNForward" in row["algorithm"]
    assert "4 layers in one call: lstm0, lstm1, lstm2, lstm3" in row["algorithm"], row
    assert row["math"] == "fp32 (CUDNN_FMA_MATH)"


def test_deep_stack_against_float64():
    # 4 layers x 40 steps: held to float64, as the CPU backend and onnxruntime are (DEEP_ATOL,
    # DEEP_L2 in tests/test_lstm_stack.py say why the one-layer bounds are too tight here).
    model, feeds = deep_stack()
    assert lstm_ops(model, device="cuda") == ["LSTMStack"]
    want = stack_reference64(model, feeds["X"])
    assert_near_float64(dnnx.load(model, device="cuda").run_dict(feeds), want, "cuda fused")
    assert_near_float64(dnnx.load(model, device="cuda", **OFF).run_dict(feeds), want, "cuda unfused")


def test_symbolic_batch_fuses_where_the_reshape_holds_for_every_batch():
    # [0, -1, H] is right for every batch: fused, and re-planned for each new batch size.
    model, _ = stacked_lstm(3, 1, drop="reshape_infer", batch_dim="N")
    assert lstm_ops(model, device="cuda") == ["LSTMStack"]
    gpu = dnnx.load(model, device="cuda")
    for batch in (1, 5, 32):
        _, feeds = stacked_lstm(3, batch, drop="reshape_infer", batch_dim="N")
        check_fused_and_unfused(model, feeds)
        for name, want in dnnx.load(model).run_dict(feeds).items():
            assert_close(gpu.run_dict(feeds)[name], want, f"{name} (batch {batch})")


def test_symbolic_batch_with_a_constant_reshape_stays_apart():
    # A constant [seq, 1, H] fits batch 1 only: fused, a batch of 2 would run instead of failing
    # in the Reshape, so the pass leaves it.
    model, feeds = stacked_lstm(3, 1, drop="reshape", batch_dim="N")
    assert lstm_ops(model, device="cuda") == ["LSTM"] * 3
    check_cuda(model, feeds)


@pytest.mark.parametrize("case", [
    {"directions": ["forward", "bidirectional", "forward"]},
    {"directions": ["forward", "reverse", "forward"]},
    {"initial_h_layer": 1},
    {"hiddens": [8, 6, 4]},
])
def test_what_must_not_fuse_stays_apart(case):
    model, feeds = stacked_lstm(3, 4, **case)
    check_cuda(model, feeds)
    assert lstm_ops(model, device="cuda") == ["LSTM"] * 3


@pytest.mark.parametrize("case", [{"tap_layer": 1}, {"state_tap_layer": 1}])
def test_an_intermediate_used_elsewhere_splits_the_stack(case):
    # Layers 0-1 and 2-3 fuse; what layer 1 gives outside (its dropped Y or its Y_h) stays visible.
    model, feeds = stacked_lstm(4, 4, **case)
    check_fused_and_unfused(model, feeds)
    rows = stack_rows(model)
    assert [r["algorithm"].split(": ")[-1].rstrip(")") for r in rows] == ["lstm0, lstm1", "lstm2, lstm3"]


def test_weights_as_graph_inputs_stay_apart():
    # Layer 2's R is a graph input: layers 0-1 fuse, 2 and 3 run alone.
    from test_cuda_lstm import to_graph_input

    model, feeds = stacked_lstm(4, 4)
    model, feeds = to_graph_input(model, feeds, "R2")
    check_fused_and_unfused(model, feeds)
    assert lstm_ops(model, device="cuda") == ["LSTMStack", "LSTM", "LSTM"]


def test_tf32_runs_the_stack_with_tensor_op_math_permitted():
    model, feeds = stacked_lstm(3, 8, hidden=32)
    (row,) = stack_rows(model, precision="tf32")
    assert row["math"] == "tf32 permitted (CUDNN_DEFAULT_MATH)"
    got = dnnx.load(model, device="cuda", precision="tf32").run_dict(feeds)
    want = dnnx.load(model).run_dict(feeds)
    for name in want:
        # TF32 keeps 10 mantissa bits: relative errors near 1e-3 per product, saturating gates keep them small.
        rel = np.linalg.norm(got[name] - want[name]) / np.linalg.norm(want[name])
        assert rel < 1e-2, f"{name}: relative L2 error {rel:.3g}"


def test_without_cuda_graphs():
    model, feeds = stacked_lstm(4, 8, drop="squeeze")
    got = dnnx.load(model, device="cuda", cuda_graph=False).run_dict(feeds)
    for name, want in dnnx.load(model).run_dict(feeds).items():
        assert_close(got[name], want, name)
