"""CUDA graphs (Note [device runs] in engine/runtime/device_runner.cc): a plan's first run is eager,
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


def test_a_plan_past_device_memory_is_refused_and_the_model_stays_usable():
    # [40000, 1048576] float32 is 156 GiB, past the H200's 139.8: since the size checks (issue
    # #18, Note [absurd sizes]) the planner refuses it before allocating, naming the tensor and
    # its bytes; it used to be a DeviceError from the failed arena allocation.
    model_proto, w, v = huge_intermediate_model()
    model = dnnx.load(model_proto, device="cuda")
    with pytest.raises(ValueError, match=r"output 'wide': \[40000,1048576\] float32 needs 167772160000 bytes.*cuda:0"):
        model.run(rand(40000, 1))
    for seed in range(3):  # eager, capture, replay: all after the failure
        x = rand(5, 1, seed=seed)
        want = (x.astype(np.float64) @ w.astype(np.float64)) @ v.astype(np.float64)
        np.testing.assert_allclose(model.run(x), want, rtol=1e-4, atol=1e-6)
    assert states(model)[(5, 1)]["state"] == "captured"


# --- edge copies (Note [edge copies] in engine/runtime/device_runner.cc) ------------------------------
# A replayed run copies its device inputs in and its device outputs out inside the graph, at the
# addresses of that run: inputs and outputs that move between calls must still be read and
# written where they are now.

def test_device_inputs_and_outputs_that_move_between_replays(lenet):
    model = dnnx.load(lenet, device="cuda")
    cpu = dnnx.load(lenet)
    xs = [rand(4, 1, 28, 28, seed=s) for s in range(6)]
    devs = [model.to_device(x) for x in xs]  # all alive: six input addresses
    kept = []  # every output kept alive, so that each run writes a fresh address
    for round_ in range(2):
        for x, xd in zip(xs, devs):
            y = model.run(xd, output="device")
            kept.append(y)
            np.testing.assert_allclose(y.numpy(), cpu.run(x), rtol=1e-4, atol=1e-6, err_msg=f"round {round_}")
    assert len({y.data_ptr for y in kept}) == len(kept)
    g = states(model)[(4, 1, 28, 28)]
    assert (g["state"], g["eager_runs"], g["captures"], g["replays"]) == ("captured", 1, 1, 11), g
    # the same input array rewritten between calls: read anew by each replay
    xd = model.to_device(xs[0])
    for x in xs[1:]:
        xd = model.to_device(x)  # a fresh array each time; the pool may hand back the same address
        np.testing.assert_allclose(model.run(xd, output="device").numpy(), cpu.run(x), rtol=1e-4, atol=1e-6)


def many_io_model(n=11):
    """n inputs, each through its own Relu to its own output, and one sum of all: more edge copies
    than one copy launch carries (8), so that a graph records several copy nodes each way."""
    nodes = [helper.make_node("Relu", [f"x{i}"], [f"y{i}"], name=f"relu{i}") for i in range(n)]
    nodes.append(helper.make_node("Sum", [f"x{i}" for i in range(n)], ["total"], name="sum"))
    return make_model(nodes, [(f"x{i}", [2, 5]) for i in range(n)], [(f"y{i}", None) for i in range(n)] + [("total", None)])


def test_more_inputs_and_outputs_than_one_copy_node_holds_and_mixed_host_and_device_inputs():
    n = 11
    model = dnnx.load(many_io_model(n), device="cuda")
    for trial in range(5):  # eager, capture, replays
        xs = [rand(2, 5, seed=10 * trial + i) for i in range(n)]
        # host and device inputs mixed, differently on each call: host ones are copied outside the graph
        feeds = [model.to_device(x) if (i + trial) % 3 else x for i, x in enumerate(xs)]
        outs = model.run(*feeds, output="device" if trial % 2 else "numpy")
        got = [o.numpy() if trial % 2 else o for o in outs]
        for i in range(n):
            np.testing.assert_array_equal(got[i], np.maximum(xs[i], 0), err_msg=f"trial {trial}, y{i}")
        np.testing.assert_allclose(got[n], np.sum(xs, axis=0), rtol=1e-6, atol=1e-6, err_msg=f"trial {trial}, total")
    g = model.graphs()[0]
    assert (g["state"], g["eager_runs"], g["replays"]) == ("captured", 1, 4), g


def test_unaligned_device_inputs_are_copied_exactly(lenet):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA device")
    model = dnnx.load(lenet, device="cuda")
    cpu = dnnx.load(lenet)
    base = torch.from_numpy(rand(3 * 784 + 3, seed=5)).cuda()
    for offset in (1, 2, 3, 0, 1):  # 4-byte aligned only, then 16-byte aligned, then not again
        xt = base[offset:offset + 3 * 784].view(3, 1, 28, 28)
        want = cpu.run(xt.cpu().numpy())
        np.testing.assert_allclose(model.run(xt), want, rtol=1e-4, atol=1e-6, err_msg=f"offset {offset}")
    assert states(model)[(3, 1, 28, 28)]["replays"] == 4
