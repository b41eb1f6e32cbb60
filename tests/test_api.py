"""The Python API: load sources, run signatures, batch_size, plan, memory, threads."""
import threading

import numpy as np
import onnx
import pytest
from onnx import helper

import dnnx
from ort_check import make_model, rand


def two_io_model():
    nodes = [helper.make_node("Gemm", ["a", "w"], ["g"], name="fc"),
             helper.make_node("Relu", ["g"], ["r"], name="act"),
             helper.make_node("Sigmoid", ["b"], ["s"], name="sig")]
    return make_model(nodes, [("a", ["N", 4]), ("b", [2, 3])], [("r", ["N", 5]), ("s", [2, 3])], {"w": rand(4, 5)})


def test_load_from_path_bytes_and_proto(tmp_path):
    model = two_io_model()
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    a, b = rand(3, 4), rand(2, 3, seed=1)
    results = [dnnx.load(src).run(a, b) for src in (str(path), path, model.SerializeToString(), model)]
    for r in results[1:]:
        for x, y in zip(results[0], r):
            np.testing.assert_array_equal(x, y)


def test_run_signatures():
    m = dnnx.load(two_io_model())
    a, b = rand(3, 4), rand(2, 3, seed=1)
    r, s = m.run(a, b)
    r2, s2 = m.run({"a": a, "b": b})
    d = m.run_dict(a, b)
    assert list(d) == ["r", "s"]
    np.testing.assert_array_equal(r, r2)
    np.testing.assert_array_equal(d["s"], s2)
    np.testing.assert_allclose(r, np.maximum(a @ rand(4, 5), 0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(s, 1 / (1 + np.exp(-b)), rtol=1e-6)


def test_single_output_returns_array():
    m = dnnx.load(make_model([helper.make_node("Tanh", ["x"], ["y"])], [("x", [2])], [("y", [2])]))
    y = m.run(np.array([0.5, -1.0], np.float32))
    assert isinstance(y, np.ndarray)
    np.testing.assert_allclose(y, np.tanh([0.5, -1.0]), rtol=1e-6)


def test_inputs_and_outputs_describe_the_graph():
    m = dnnx.load(two_io_model())
    assert [(s.name, s.shape, s.dtype) for s in m.inputs] == [("a", ("N", 4), "float32"), ("b", (2, 3), "float32")]
    assert [(s.name, s.shape) for s in m.outputs] == [("r", ("N", 5)), ("s", (2, 3))]


def test_symbolic_batch_accepts_any_size():
    m = dnnx.load(two_io_model())
    for n in (1, 2, 7):
        assert m.run(rand(n, 4), rand(2, 3))[0].shape == (n, 5)


def test_batch_size_override_fixes_first_dim():
    m = dnnx.load(two_io_model(), batch_size=8)
    assert m.inputs[0].shape == (8, 4)
    assert m.inputs[1].shape == (2, 3)  # first dim 2 is neither 1 nor symbolic: unchanged
    with pytest.raises(ValueError, match=r"expected \[8,4\]"):
        m.run(rand(3, 4), rand(2, 3))
    fixed_one = make_model([helper.make_node("Relu", ["x"], ["y"])], [("x", [1, 3])], [("y", [1, 3])])
    assert dnnx.load(fixed_one, batch_size=4).run(rand(4, 3)).shape == (4, 3)


def test_plan_rows_and_table():
    m = dnnx.load(two_io_model(), optimize=False)  # one row per node (the passes fuse fc+act)
    rows = m.plan(batch_size=6)
    assert [r["name"] for r in rows] == ["fc", "act", "sig"]
    assert rows[0]["op"] == "Gemm" and rows[0]["inputs"][0] == [6, 4] and rows[0]["outputs"] == [[6, 5]]
    assert rows[0]["algorithm"] == "sgemm"
    assert all(r["scratch"] == 0 for r in rows)  # only a device backend's fused pairs keep scratch
    text = str(rows)
    assert "fc" in text and "6x4" in text and "algorithm" in text


def test_memory_reuses_dead_activations():
    # A chain of 6 Relus: liveness lets the arena hold two buffers, not six.
    nodes = [helper.make_node("Relu", [f"t{i}"], [f"t{i + 1}"]) for i in range(6)]
    m = dnnx.load(make_model(nodes, [("t0", [256])], [("t6", [256])]))
    mem = m.memory()
    assert mem["naive_bytes"] == 6 * 256 * 4
    assert mem["arena_bytes"] == 2 * 256 * 4
    x = rand(256)
    np.testing.assert_array_equal(m.run(x), np.maximum(x, 0))


def test_views_cost_no_copy_and_keep_values():
    nodes = [helper.make_node("Relu", ["x"], ["r"]),
             helper.make_node("Reshape", ["r", "shape"], ["v"]),
             helper.make_node("Flatten", ["v"], ["f"], axis=1),
             helper.make_node("Sigmoid", ["f"], ["y"])]
    model = make_model(nodes, [("x", [2, 3, 4])], [("y", None)], {"shape": np.array([0, -1], np.int64)})
    m = dnnx.load(model)
    algos = {r["op"]: r["algorithm"] for r in m.plan()}
    assert algos["Reshape"] == algos["Flatten"] == "view (no copy)"
    x = rand(2, 3, 4)
    np.testing.assert_allclose(m.run(x), 1 / (1 + np.exp(-np.maximum(x, 0).reshape(2, 12))), rtol=1e-6)


def test_graph_output_that_is_a_constant_or_an_input():
    nodes = [helper.make_node("Constant", [], ["c"], value=onnx.numpy_helper.from_array(rand(2, 2), "c")),
             helper.make_node("Identity", ["x"], ["y"])]
    m = dnnx.load(make_model(nodes, [("x", [3])], [("c", [2, 2]), ("y", [3])]))
    c, y = m.run(np.arange(3, dtype=np.float32))
    np.testing.assert_array_equal(c, rand(2, 2))
    np.testing.assert_array_equal(y, [0, 1, 2])


def test_concurrent_runs_match_serial_runs():
    m = dnnx.load(two_io_model())
    inputs = [(rand(n, 4, seed=n), rand(2, 3, seed=100 + n)) for n in range(1, 9)]
    serial = [m.run(a, b) for a, b in inputs]
    results = [None] * len(inputs)

    def worker(i):
        for _ in range(50):
            results[i] = m.run(*inputs[i])

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(inputs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for want, got in zip(serial, results):
        for w, g in zip(want, got):
            np.testing.assert_array_equal(w, g)


def test_old_opset_is_upgraded():
    node = helper.make_node("Relu", ["x"], ["y"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", 1, [3])],
                              [helper.make_tensor_value_info("y", 1, [3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 6)])
    model.ir_version = 3
    m = dnnx.load(model)
    assert m.opset >= 7
    np.testing.assert_array_equal(m.run(np.array([-1, 0, 2], np.float32)), [0, 0, 2])
