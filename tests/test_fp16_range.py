"""precision="fp16" keeps in float32 the layers whose values leave fp16's range (Note [fp16 range],
engine/runtime/passes/half_range.cc), checked without a GPU: the range check and the half_storage
pass run on their own (dnnx._pass_hooks.half_storage_rewrite with fp16_range=True) for a stand-in
backend with float16 kernels for every op involved. The GPU runs (the light models finite and
within fp16's tolerance, NonFiniteWarning) are in tests/cuda/test_cuda_fp16_range.py."""
import os

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

import dnnx
from dnnx._calibration import every_value_as_output, measure
from dnnx._importer import import_model
from dnnx._native import load_extension
from dnnx.examples import build
from ort_check import make_model, rand
from test_onnx_model_suites import _light_feeds as light_feeds

pass_hooks = load_extension("_pass_hooks")

LIGHT = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")
HALF_OPS = ["Conv", "Relu", "MaxPool", "AveragePool", "Gemm", "Reshape", "Softmax", "Sum", "Add", "BatchNormalization",
            "LRN", "Flatten", "MatMul", "GlobalAveragePool", "Concat"]
FP16_MAX = 65504.0


def rewrite(model, calibration=None):
    return pass_hooks.half_storage_rewrite(import_model(model).ir, HALF_OPS, True, calibration or {})


def folded_light(name):
    """light_<name>.onnx with its ConstantOfShape weight fills made initializers (the engine folds
    them at load, before the passes; the pass hook sees the graph as given)."""
    model = onnx.load(os.path.join(LIGHT, f"light_{name}.onnx"))
    consts = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    keep = []
    for node in model.graph.node:
        if node.op_type == "ConstantOfShape" and node.input[0] in consts:
            value = numpy_helper.to_array(node.attribute[0].t).ravel()[0]
            fill = np.full(tuple(int(d) for d in consts[node.input[0]]), value, dtype=value.dtype)
            model.graph.initializer.append(numpy_helper.from_array(fill, node.output[0]))
            consts[node.output[0]] = fill
        else:
            keep.append(node)
    del model.graph.node[:]
    model.graph.node.extend(keep)
    return model



def true_peaks(model, feeds):
    """{value: max |value|} of every float value, from a float32 CPU run."""
    visible, values = every_value_as_output(model)
    got = dnnx.load(visible, optimize=False).run_dict(feeds)
    return {name: float(np.abs(got[name].astype(np.float64)).max()) for _, name in values}


@pytest.mark.parametrize("name", ["resnet50", "zfnet512"])
def test_light_models_keep_every_layer_past_fp16s_range_in_fp32(name):
    model = folded_light(name)
    peaks = true_peaks(model, light_feeds(model))
    assert max(peaks.values()) > 1e8  # the point: far past 65504 in float32
    out = rewrite(model)
    kept = {n["name"]: n["fp32_reason"] for n in out["nodes"] if n["fp32_reason"]}
    produced = {o: n for n in model.graph.node for o in n.output}
    # Every layer that writes a value fp16 cannot hold stays float32 (from the weights alone) ...
    over = {produced[v].name for v, p in peaks.items() if p > FP16_MAX}
    assert over and over <= set(kept), sorted(over - set(kept))
    for reason in kept.values():
        assert reason.startswith("kept in fp32: ") and "exceed fp16's range (65504)" in reason, reason
    # ... and every layer that reads one: no value past 65504 is ever stored as float16.
    for node in out["nodes"]:
        if node["op"] == "Cast" and out["types"].get(node["outputs"][0]) == "float16":
            assert peaks.get(node["inputs"][0], 0.0) <= FP16_MAX, node
    for node in model.graph.node:
        for v in node.output:
            if peaks.get(v, 0.0) > FP16_MAX:
                assert out["types"][v] == "float32", (node.name, v)
    # The first layers, whose values stay small, still run in half.
    assert out["in_half"] > 0


def test_light_resnet_reason_names_the_estimated_range():
    out = rewrite(folded_light("resnet50"))
    reasons = [n["fp32_reason"] for n in out["nodes"] if n["fp32_reason"]]
    assert any("activations up to" in r and "(estimated from the weights)" in r for r in reasons), reasons


def _resnet50():
    import importlib.util
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench", "resnet50.py")
    spec = importlib.util.spec_from_file_location("bench_resnet50", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.build_resnet50(seed=0)


@pytest.mark.parametrize("make", [lambda: build("lenet"), lambda: build("lstm"), _resnet50],
                         ids=["lenet", "lstm", "resnet50"])
def test_models_with_ordinary_weights_stay_in_half(make):
    """Randomly initialised (He) and small trained-like weights keep activations O(1): the
    estimate must not push them to float32 (tests/cuda/test_cuda_fp16.py asserts every ResNet-50
    layer runs in half)."""
    out = rewrite(make())
    assert not [n for n in out["nodes"] if n["fp32_reason"]]


def _scaled_mlp(scale):
    nodes = [helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], name="fc1", transB=1),
             helper.make_node("Relu", ["h"], ["r"], name="relu"),
             helper.make_node("Gemm", ["r", "w2", "b2"], ["y"], name="fc2", transB=1)]
    inits = {"w1": rand(64, 32, seed=1) * scale, "b1": rand(64, seed=2), "w2": rand(10, 64, seed=3) / 8,
             "b2": rand(10, seed=4)}
    return make_model(nodes, [("x", [4, 32])], [("y", None)], inits)


def test_large_weights_keep_their_layer_and_its_readers_in_fp32():
    out = rewrite(_scaled_mlp(2e4))
    kept = {n["name"]: n["fp32_reason"] for n in out["nodes"] if n["fp32_reason"]}
    assert set(kept) == {"fc1", "relu", "fc2"}, kept
    assert "activations up to" in kept["fc1"] and "inputs up to" in kept["relu"]
    assert all(t != "float16" for t in out["types"].values())
    assert rewrite(_scaled_mlp(1.0))["in_half"] == 3  # the same model at ordinary scale: all half


def test_a_weight_past_fp16s_range_keeps_its_reader_in_fp32():
    node = helper.make_node("Add", ["x", "k"], ["y"], name="add")
    model = make_model([node], [("x", [3])], [("y", None)], {"k": np.array([1.0, 7e4, 2.0], np.float32)})
    (add,) = [n for n in rewrite(model)["nodes"] if n["op"] == "Add"]
    assert add["fp32_reason"].startswith("kept in fp32: "), add  # its output, estimated from the weight, too


def test_calibration_replaces_the_estimate():
    """Inputs far outside the assumed [0, 1] (up to ~2.5e4): only a calibration batch shows
    that fc1's output passes 65504; measured values name it and say where the number came from."""
    model = _scaled_mlp(1.0)
    assert not [n for n in rewrite(model)["nodes"] if n["fp32_reason"]]
    x = rand(4, 32, seed=9) * 10000
    stats = measure(model, x)
    assert set(stats) >= {"x", "h", "r", "y"}
    h = dnnx.load(every_value_as_output(model)[0], optimize=False).run_dict({"x": x})["h"]
    np.testing.assert_allclose(stats["h"][2], np.abs(h).max(), rtol=1e-6)
    kept = {n["name"]: n["fp32_reason"] for n in rewrite(model, stats)["nodes"] if n["fp32_reason"]}
    assert "fc1" in kept and "(calibration)" in kept["fc1"], kept
    # and the other way: a calibration batch of small values keeps everything in half
    assert rewrite(model, measure(model, x / 10000))["in_half"] == 3


def test_calibration_is_refused_outside_fp16():
    with pytest.raises(ValueError, match="calibration applies to precision='fp16' only"):
        dnnx.load(_scaled_mlp(1.0), calibration=rand(4, 32))


def test_calibration_input_count_is_checked():
    with pytest.raises(ValueError, match="calibration: expected 1 input"):
        measure(_scaled_mlp(1.0), [rand(4, 32), rand(4, 32)])


def test_nonfinite_warning_is_exported():
    assert issubclass(dnnx.NonFiniteWarning, UserWarning) and "NonFiniteWarning" in dnnx.__all__


def _overflowing():
    """x -> Mul(1e30) -> a -> Mul(1e30) -> b -> Relu -> y: `b` is inf in float32 for |x| >= 1."""
    nodes = [helper.make_node("Mul", ["x", "k"], ["a"], name="scale1"),
             helper.make_node("Mul", ["a", "k"], ["b"], name="scale2"),
             helper.make_node("Relu", ["b"], ["y"], name="relu")]
    return make_model(nodes, [("x", [2, 3])], [("y", None)], {"k": np.array(1e30, np.float32)})


def test_first_nonfinite_layer_is_found_by_one_run_with_every_value_visible():
    from dnnx._calibration import first_nonfinite_layer
    x = np.ones((2, 3), np.float32)
    assert first_nonfinite_layer(_overflowing(), {"device": "cpu"}, [x]) == "scale2 (output 'b')"
    assert first_nonfinite_layer(_overflowing(), {"device": "cpu"}, [x * 0]) is None


def test_nonfinite_warning_names_the_output_and_the_layer():
    """The check Model.run makes at precision="fp16", on a CPU model standing in for a CUDA one
    (the CPU runs fp32 only; the GPU run is tests/cuda/test_cuda_fp16_range.py)."""
    m = dnnx.load(_overflowing())
    m.precision, m._nonfinite_load = "fp16", {"device": "cpu"}
    with pytest.warns(dnnx.NonFiniteWarning, match=r"output\(s\) 'y' hold inf or NaN.*scale2 \(output 'b'\)"):
        m.run(np.ones((2, 3), np.float32))
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error", dnnx.NonFiniteWarning)
        m.run(np.zeros((2, 3), np.float32))
