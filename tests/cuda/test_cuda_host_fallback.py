"""Host layers inside CUDA plans (Note [host fallback] in engine/runtime/host_fallback.h): a node
CUDA has no kernel for runs on the CPU backend within the same plan, between copies queued on the
model's stream, recorded into its CUDA graph like the rest; plan() says where and why, and one
HostFallbackWarning names the nodes at load."""
import warnings

import numpy as np
import pytest
from onnx import TensorProto, helper

import dnnx
from ort_check import make_model, rand, run_ort

I64 = TensorProto.INT64


def device_host_device():
    """Relu (CUDA) -> Cast int64 (CUDA) -> Max with a constant (integer Max: the host) -> Cast
    float (CUDA) -> Add x (CUDA): host data in the middle of device layers."""
    nodes = [helper.make_node("Relu", ["x"], ["r"]),
             helper.make_node("Cast", ["r"], ["ri"], to=I64),
             helper.make_node("Max", ["ri", "floor"], ["m"], name="int_max"),
             helper.make_node("Cast", ["m"], ["mf"], to=TensorProto.FLOAT),
             helper.make_node("Add", ["mf", "x"], ["y"])]
    return make_model(nodes, [("x", [2, 5])], [("y", [2, 5])], {"floor": np.array([2], np.int64)})


def host_layer_rows(m, **plan_args):
    return [r for r in m.plan(**plan_args) if r["algorithm"].startswith("on the host")]


def test_a_host_layer_between_device_layers():
    model = device_host_device()
    with pytest.warns(dnnx.HostFallbackWarning, match="int_max"):
        m = dnnx.load(model, device="cuda")
    rows = host_layer_rows(m)
    assert [r["name"] for r in rows] == ["int_max"], m.plan()
    assert "no kernel" in rows[0]["algorithm"] or "int" in rows[0]["algorithm"], rows
    for step in range(4):  # eager, capture, replays: every replay reads this run's data
        x = (rand(2, 5, seed=step) - 0.5) * 10
        np.testing.assert_array_equal(m.run(x), run_ort(model, {"x": x})["y"])
    assert [g["state"] for g in m.graphs()] == ["captured"]
    assert m.graphs()[0]["replays"] >= 2  # the recording run replays too


def test_host_layers_with_device_inputs_and_outputs():
    model = device_host_device()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dnnx.HostFallbackWarning)
        m = dnnx.load(model, device="cuda")
    x = (rand(2, 5, seed=9) - 0.5) * 10
    want = run_ort(model, {"x": x})["y"]
    for _ in range(3):
        out = m.run(m.to_device(x), output="device")
        np.testing.assert_array_equal(out.numpy(), want)


def test_a_model_without_host_layers_warns_nothing():
    model = make_model([helper.make_node("Relu", ["x"], ["y"])], [("x", [2, 5])], [("y", [2, 5])])
    with warnings.catch_warnings():
        warnings.simplefilter("error", dnnx.HostFallbackWarning)
        dnnx.load(model, device="cuda")


def test_a_host_layer_in_an_fp16_model_runs_in_float32():
    model = device_host_device()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dnnx.HostFallbackWarning)
        m = dnnx.load(model, device="cuda", precision="fp16", measure_precision=False)
    x = (rand(2, 5, seed=3) - 0.5) * 10
    # fp16 storage: Relu/Add round to half (3 significant digits); the integer Max is exact.
    np.testing.assert_allclose(m.run(x), run_ort(model, {"x": x})["y"], rtol=2e-3, atol=1e-2)


def test_profile_replays_read_the_inputs_afresh():
    """Note [profiled inputs]: Model.profile replays the plan; each replay copies the inputs again.
    Here a host layer (a Gather on uint8 rows, which CUDA has no kernel for) reads the int64 ids
    first, and the device layers after it reuse the ids' arena block; without the copies a second
    replay handed the Gather what they wrote, it refused the indices, and its failure stuck to the
    plan's kernel (the load-time precision choice profiles: zoo2/q_dyn_bert.onnx at fp16)."""
    table = np.random.default_rng(5).integers(0, 256, (1000, 8)).astype(np.uint8)
    nodes = [helper.make_node("Gather", ["table", "ids"], ["g"], name="host_gather"),
             helper.make_node("Cast", ["g"], ["f"], to=TensorProto.FLOAT)]
    prev = "f"
    for i in range(6):  # values the size of the ids and more, made after the ids are dead
        nodes.append(helper.make_node("Neg" if i % 2 else "Relu", [prev], [f"v{i}"]))
        prev = f"v{i}"
    model = make_model(nodes, [("ids", [1, 256], TensorProto.INT64)], [(prev, None)], {"table": table})
    ids = np.random.default_rng(6).integers(0, 1000, (1, 256)).astype(np.int64)
    want = dnnx.load(model).run(ids)
    for precision in ("fp32", "fp16"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", dnnx.HostFallbackWarning)
            m = dnnx.load(model, device="cuda", precision=precision)
        assert any(r["name"] == "host_gather" and r["algorithm"].startswith("on the host") for r in m.plan())
        m.profile(ids, repeat=5)
        np.testing.assert_allclose(m.run(ids), want, rtol=1e-3 if precision == "fp16" else 0, atol=0)
