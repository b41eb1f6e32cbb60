"""CUDA graphs (Note [device runs] in engine/core/device_runner.cc): a plan's first run is eager,
its second captures, later runs replay; the results are those of eager runs, bit for bit; a new
batch size is planned and captured anew; cuda_graph=False switches it off; runs from several
threads take turns; a failing run (out of memory) leaves the model usable."""
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from onnx import helper

import dnnx
from dnnx.examples import build
from ort_check import make_model, rand


@pytest.fixture(scope="module")
def lenet():
    return build("lenet")


def states(model):
    return {tuple(g["input_shapes"][0]): g for g in model.graphs()}


def test_first_run_eager_second_captures_then_replays(lenet):
    model = dnnx.load(lenet, device="cuda")
    x = rand(8, 1, 28, 28)
    first = model.run(x)
    g = states(model)[(8, 1, 28, 28)]
    assert (g["state"], g["eager_runs"], g["captures"], g["replays"]) == ("pending", 1, 0, 0)
    for _ in range(4):
        np.testing.assert_array_equal(model.run(x), first)
    g = states(model)[(8, 1, 28, 28)]
    assert (g["state"], g["eager_runs"], g["captures"], g["replays"]) == ("captured", 1, 1, 4), g


def test_graph_replay_matches_eager_runs_exactly(lenet):
    with_graphs = dnnx.load(lenet, device="cuda")
    eager = dnnx.load(lenet, device="cuda", cuda_graph=False)
    cpu = dnnx.load(lenet)
    for seed in range(4):
        x = rand(16, 1, 28, 28, seed=seed)
        want = eager.run(x)
        np.testing.assert_array_equal(with_graphs.run(x), want)  # eager (first run), then replays
        np.testing.assert_allclose(want, cpu.run(x), rtol=1e-4, atol=1e-6)
    assert states(with_graphs)[(16, 1, 28, 28)]["replays"] == 3
    g = states(eager)[(16, 1, 28, 28)]
    assert (g["state"], g["replays"], g["captures"], g["eager_runs"]) == ("off", 0, 0, 4)


def test_new_batch_size_recaptures(lenet):
    model = dnnx.load(lenet, device="cuda")
    cpu = dnnx.load(lenet)
    for batch in (4, 4, 64, 64, 4, 4, 1, 1, 64):
        x = rand(batch, 1, 28, 28, seed=batch)
        np.testing.assert_allclose(model.run(x), cpu.run(x), rtol=1e-4, atol=1e-6, err_msg=f"batch {batch}")
    g = states(model)
    assert set(g) == {(4, 1, 28, 28), (64, 1, 28, 28), (1, 1, 28, 28)}  # one graph per plan
    assert all(s["state"] == "captured" and s["eager_runs"] == 1 for s in g.values()), g
    # Batch 64 grew the arena after batch 4 was captured. Where the larger arena got another
    # address, batch 4 was recorded again (2 captures); where the allocator handed back the same
    # address, its graph stayed valid (1). Either way every run after a plan's first replayed.
    assert g[(4, 1, 28, 28)]["captures"] in (1, 2) and g[(64, 1, 28, 28)]["captures"] in (1, 2), g
    assert (g[(4, 1, 28, 28)]["replays"], g[(64, 1, 28, 28)]["replays"], g[(1, 1, 28, 28)]["replays"]) == (3, 2, 1), g


def test_runs_from_many_threads_with_graphs_and_several_shapes(lenet):
    model = dnnx.load(lenet, device="cuda")
    xs = [rand(b, 1, 28, 28, seed=s) for s, b in enumerate([1, 8, 32, 8, 1, 32, 8, 1] * 4)]
    eager = dnnx.load(lenet, device="cuda", cuda_graph=False)
    want = [eager.run(x) for x in xs]
    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(model.run, xs))
    for i, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_array_equal(g, w, err_msg=f"call {i}")
    assert sum(s["replays"] for s in model.graphs()) > 0


def huge_intermediate_model():
    """y = (x [n,1] @ w [1,M]) @ v [M,1]: the [n, M] intermediate is 4*n*M bytes of arena while
    input and output stay small. M = 2^20: n = 40000 needs 168 GB, more than any GPU here has."""
    m = 1 << 20
    w = np.full((1, m), 0.5, dtype=np.float32)
    # positive terms: the 2^20-term sum has no cancellation, so fp32 stays within rtol
    v = (np.random.default_rng(7).uniform(0.5, 1.0, (m, 1)) / m).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["wide"], name="outer"),
             helper.make_node("MatMul", ["wide", "v"], ["y"], name="inner")]
    return make_model(nodes, [("x", ["n", 1])], [("y", ["n", 1])], {"w": w, "v": v}), w, v


def test_out_of_memory_is_a_device_error_and_the_model_stays_usable():
    model_proto, w, v = huge_intermediate_model()
    model = dnnx.load(model_proto, device="cuda")
    with pytest.raises(dnnx.DeviceError, match=r"activation arena of .* GiB for input shapes \[\[40000,1\]\].*out of device memory"):
        model.run(rand(40000, 1))
    for seed in range(3):  # eager, capture, replay: all after the failure
        x = rand(5, 1, seed=seed)
        want = (x.astype(np.float64) @ w.astype(np.float64)) @ v.astype(np.float64)
        np.testing.assert_allclose(model.run(x), want, rtol=1e-4, atol=1e-6)
    assert states(model)[(5, 1)]["state"] == "captured"
