"""The fuse_gelu pass (engine/runtime/passes/fuse_gelu.cc): GELU spelled out in elementwise nodes
becomes one Gelu layer, in the erf form (ViT's and BERT's exporters) and the tanh form (GPT-2's),
either operand order, the 0.5 first or last; chains that differ (another constant, an inner value
read twice or a graph output) stay as they are. Each case against onnxruntime."""
import math

import numpy as np
import pytest
from onnx import helper

import dnnx
from bench_modules import bench_module
from ort_check import assert_matches_ort, make_model, rand

SQRT2 = np.float32(math.sqrt(2.0))


def erf_chain(div=True, half_first=False, swap=False, sqrt2=SQRT2, extra_output=False):
    c = {"c_s": np.array(sqrt2 if div else 1 / sqrt2, np.float32), "c_1": np.array(1.0, np.float32),
         "c_h": np.array(0.5, np.float32)}
    nodes = [helper.make_node("Div" if div else "Mul", ["x", "c_s"] if (div or not swap) else ["c_s", "x"], ["d"]),
             helper.make_node("Erf", ["d"], ["e"]),
             helper.make_node("Add", ["c_1", "e"] if swap else ["e", "c_1"], ["a"])]
    if half_first:
        nodes += [helper.make_node("Mul", ["x", "c_h"], ["h"]),
                  helper.make_node("Mul", ["a", "h"] if swap else ["h", "a"], ["y"])]
    else:
        nodes += [helper.make_node("Mul", ["a", "x"] if swap else ["x", "a"], ["m"]),
                  helper.make_node("Mul", ["c_h", "m"] if swap else ["m", "c_h"], ["y"])]
    outs = [("y", None)] + ([("e", None)] if extra_output else [])
    return make_model(nodes, [("x", [3, 37])], outs, initializers=c)


def tanh_chain(half_first=True, swap=False, cubic=0.044715):
    c = {"c3": np.array(3.0, np.float32), "c_k": np.array(cubic, np.float32),
         "c_s": np.array(math.sqrt(2 / math.pi), np.float32), "c_1": np.array(1.0, np.float32),
         "c_h": np.array(0.5, np.float32)}
    nodes = [helper.make_node("Pow", ["x", "c3"], ["p"]),
             helper.make_node("Mul", ["c_k", "p"] if swap else ["p", "c_k"], ["k"]),
             helper.make_node("Add", ["k", "x"] if swap else ["x", "k"], ["u"]),
             helper.make_node("Mul", ["u", "c_s"], ["v"]),
             helper.make_node("Tanh", ["v"], ["t"]),
             helper.make_node("Add", ["t", "c_1"], ["a"])]
    if half_first:
        nodes += [helper.make_node("Mul", ["x", "c_h"], ["h"]), helper.make_node("Mul", ["h", "a"], ["y"])]
    else:
        nodes += [helper.make_node("Mul", ["x", "a"], ["m"]), helper.make_node("Mul", ["m", "c_h"], ["y"])]
    return make_model(nodes, [("x", [2, 4, 19])], [("y", None)], initializers=c)


def layers(model):
    return [(row["op"], row.get("algorithm")) for row in dnnx.load(model).plan()]


def feeds_for(model):
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    return {"x": rand(*shape) * 3}


@pytest.mark.parametrize("div", [True, False])
@pytest.mark.parametrize("half_first", [True, False])
@pytest.mark.parametrize("swap", [True, False])
def test_erf_form_becomes_one_gelu(div, half_first, swap):
    model = erf_chain(div=div, half_first=half_first, swap=swap)
    assert [op for op, _ in layers(model)] == ["Gelu"]
    assert_matches_ort(model, feeds_for(model), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("half_first", [True, False])
@pytest.mark.parametrize("swap", [True, False])
def test_tanh_form_becomes_one_gelu(half_first, swap):
    model = tanh_chain(half_first=half_first, swap=swap)
    assert [op for op, _ in layers(model)] == ["Gelu"]
    assert_matches_ort(model, feeds_for(model), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("model", [erf_chain(sqrt2=np.float32(1.5)), erf_chain(extra_output=True),
                                   tanh_chain(cubic=0.05)], ids=["other-constant", "inner-output", "other-cubic"])
def test_other_chains_stay(model):
    ops = [op for op, _ in layers(model)]
    assert "Gelu" not in ops and len(ops) >= 5
    assert_matches_ort(model, feeds_for(model), rtol=1e-5, atol=1e-6)


def test_switched_off():
    model = erf_chain()
    ops = [row["op"] for row in dnnx.load(model, passes={"fuse_gelu": False}).plan()]
    assert ops == ["Div", "Erf", "Add", "Mul", "Mul"]


def test_x_read_elsewhere_and_two_chains():
    # x also feeds a Relu; two GELUs in a row (the second reads the first's output)
    c = {"c_s": np.array(SQRT2), "c_1": np.array(1.0, np.float32), "c_h": np.array(0.5, np.float32)}
    nodes = []
    for i, (src, dst) in enumerate([("x", "g1"), ("g1", "g2")]):
        nodes += [helper.make_node("Div", [src, "c_s"], [f"d{i}"]), helper.make_node("Erf", [f"d{i}"], [f"e{i}"]),
                  helper.make_node("Add", [f"e{i}", "c_1"], [f"a{i}"]),
                  helper.make_node("Mul", [src, f"a{i}"], [f"m{i}"]), helper.make_node("Mul", [f"m{i}", "c_h"], [dst])]
    nodes.append(helper.make_node("Relu", ["x"], ["r"]))
    model = make_model(nodes, [("x", [5, 33])], [("g2", None), ("r", None)], initializers=c)
    assert [op for op, _ in layers(model)] == ["Gelu", "Gelu", "Relu"]
    assert_matches_ort(model, {"x": rand(5, 33) * 3}, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name, count", [("zoo2/vit_tiny_patch16_224_ts.onnx", 12), ("zoo2/gpt2.onnx", 2)])
def test_real_models_fuse_every_gelu(name, count):
    ext = bench_module("_external_models")
    if not (ext.EXTERNAL / name).exists():
        pytest.skip("../shared/external absent")
    ops = [row["op"] for row in dnnx.load(ext.read_model(name), batch_size=1).plan()]
    assert ops.count("Gelu") == count and "Erf" not in ops and "Tanh" not in ops and "Pow" not in ops
