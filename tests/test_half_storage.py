"""precision="fp16" pieces that need no GPU: the precision argument's checks, the float16 dtype in
the IR and its refusal in models as loaded, and the half_storage pass (runtime/passes/half_storage.cc,
Note [half storage]) run on its own with a stand-in backend that has float16 kernels for a chosen
set of ops (dnnx._pass_hooks.half_storage_rewrite, a test-only module)."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import dnnx
from dnnx._importer import import_model
from dnnx._native import load_extension
from dnnx.examples import build
from ort_check import make_model, rand

pass_hooks = load_extension("_pass_hooks")  # test-only module, beside _core

TO_FLOAT, TO_HALF = TensorProto.FLOAT, TensorProto.FLOAT16


def rewrite(model, half_ops):
    return pass_hooks.half_storage_rewrite(import_model(model).ir, list(half_ops))


def conv_relu_gemm():
    """x -> Conv(w, b) -> Relu -> Flatten -> Gemm(g, c) -> LeakyRelu -> y"""
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c1"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu"),
             helper.make_node("Flatten", ["r1"], ["f1"], name="flat"),
             helper.make_node("Gemm", ["f1", "g", "c"], ["g1"], name="gemm", transB=1),
             helper.make_node("LeakyRelu", ["g1"], ["y"], name="leaky")]
    inits = {"w": rand(4, 2, 3, 3, seed=1), "b": rand(4, seed=2), "g": rand(5, 4 * 6 * 6, seed=3),
             "c": rand(5, seed=4)}
    return make_model(nodes, [("x", [1, 2, 6, 6])], [("y", None)], inits)


def test_half_nodes_read_and_write_float16_with_casts_at_the_edges():
    out = rewrite(conv_relu_gemm(), ["Conv", "Relu", "Flatten", "Gemm"])
    nodes, types = out["nodes"], out["types"]
    assert out["in_half"] == 4
    assert [n["op"] for n in nodes] == ["Cast", "Conv", "Relu", "Flatten", "Gemm", "Cast", "LeakyRelu"]
    entry, conv, gemm, back, leaky = nodes[0], nodes[1], nodes[4], nodes[5], nodes[6]
    # The float32 graph input is converted once at entry; the conv reads the half copy.
    assert entry["inputs"] == ["x"] and entry["to"] == TO_HALF and conv["inputs"][0] == entry["outputs"][0]
    assert types["x"] == "float32"
    for value in ("c1", "r1", "f1", "g1"):
        assert types[value] == "float16", value
    # Initializers of half nodes are float16 copies; the float32 originals are gone.
    for name in conv["inputs"][1:] + gemm["inputs"][1:]:
        assert types[name] == "float16", name
    assert not {"w", "b", "g", "c"} & set(out["constants"])
    # LeakyRelu has no half kernel here: float32 in between Casts, and the output stays float32.
    assert back["inputs"] == ["g1"] and back["to"] == TO_FLOAT and leaky["inputs"] == back["outputs"]
    assert types["y"] == "float32" and out["outputs"] == ["y"]


def test_initializers_round_to_nearest_even():
    values = np.array([1.0, 1 + 2**-11, 1 + 3 * 2**-11, 65504.0, 70000.0, 1e-8, -2.5e-5, 6.1e-5], np.float32)
    node = helper.make_node("Add", ["x", "k"], ["y"], name="add")
    out = rewrite(make_model([node], [("x", [8])], [("y", None)], {"k": values}), ["Add"])
    (name,) = [n for n in out["constants"]]
    got = np.frombuffer(out["constants"][name], np.float16)
    with np.errstate(over="ignore"):  # 70000 -> inf is the point
        want = values.astype(np.float16)
    np.testing.assert_array_equal(got, want)  # numpy rounds to nearest even too
    assert got[1] == 1.0 and got[2] == np.float16(1 + 2**-9) and np.isinf(got[4])


def test_initializer_conversion_matches_numpy_over_the_whole_range():
    rng = np.random.default_rng(7)
    scales = np.float32(10.0) ** rng.uniform(-9, 5.5, 20000).astype(np.float32)
    values = (rng.standard_normal(20000).astype(np.float32) * scales).astype(np.float32)
    # exact ties between neighbouring halves, in the normal and the subnormal range
    ties = np.array([(1 + (2 * k + 1) * 2**-11) * 2.0**e for k in range(4) for e in (-14, 0, 7)] +
                    [(2 * k + 1) * 2.0**-25 for k in range(4)] + [np.nan, np.inf, -np.inf, -0.0], np.float32)
    values = np.concatenate([values, ties])
    node = helper.make_node("Mul", ["x", "k"], ["y"], name="mul")
    out = rewrite(make_model([node], [("x", [values.size])], [("y", None)], {"k": values}), ["Mul"])
    got = np.frombuffer(next(iter(out["constants"].values())), np.float16)
    with np.errstate(over="ignore"):
        want = values.astype(np.float16)
    np.testing.assert_array_equal(got.view(np.uint16)[~np.isnan(want)], want.view(np.uint16)[~np.isnan(want)])
    assert np.isnan(got[np.isnan(want)]).all()


def test_a_half_graph_output_is_converted_back_under_its_own_name():
    out = rewrite(conv_relu_gemm(), ["Conv", "Relu", "Flatten", "Gemm", "LeakyRelu"])
    last = out["nodes"][-1]
    assert last["op"] == "Cast" and last["to"] == TO_FLOAT and last["outputs"] == ["y"]
    assert out["types"]["y"] == "float32" and out["types"][last["inputs"][0]] == "float16"
    assert out["in_half"] == 5


def test_a_value_read_by_both_kinds_is_converted_once_per_direction():
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="relu"),
             helper.make_node("Sigmoid", ["a"], ["b"], name="sig"),
             helper.make_node("Tanh", ["a"], ["c"], name="tanh"),
             helper.make_node("Elu", ["a"], ["d"], name="elu"),
             helper.make_node("LeakyRelu", ["a"], ["e"], name="leaky")]
    model = make_model(nodes, [("x", [3, 4])], [("b", None), ("c", None), ("d", None), ("e", None)])
    out = rewrite(model, ["Relu", "Sigmoid", "Tanh"])
    casts = [n for n in out["nodes"] if n["op"] == "Cast"]
    to_float_of_a = [c for c in casts if c["inputs"] == ["a"]]
    assert len(to_float_of_a) == 1  # Elu and LeakyRelu share one conversion of `a`
    assert {n["name"]: n["inputs"][0] for n in out["nodes"] if n["op"] in ("Elu", "LeakyRelu")} == {
        "elu": to_float_of_a[0]["outputs"][0], "leaky": to_float_of_a[0]["outputs"][0]}
    for name in ("b", "c", "d", "e"):
        assert out["types"][name] == "float32", name


def test_integer_values_are_untouched():
    nodes = [helper.make_node("Gather", ["x", "idx"], ["g"], name="gather", axis=1),
             helper.make_node("Reshape", ["g", "shape"], ["y"], name="reshape")]
    model = make_model(nodes, [("x", [2, 5])], [("y", None)],
                       {"idx": np.array([4, 0], np.int64), "shape": np.array([4], np.int64)})
    out = rewrite(model, ["Gather", "Reshape"])
    gather = [n for n in out["nodes"] if n["op"] == "Gather"][0]
    assert gather["inputs"][1] == "idx" and out["types"]["idx"] == "int64"
    assert out["types"]["shape"] == "int64" and out["types"]["g"] == "float16"


def test_shape_and_size_read_a_half_value_as_it_is():
    # Torch's exports ask a tensor for its dims (ShuffleNetV2's shuffles, from each Concat): the
    # Shape reads only the dims, so a Cast to FLOAT in front of it would be work for nothing.
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Shape", ["r"], ["dims"], name="dims"),
             helper.make_node("Size", ["r"], ["count"], name="count"),
             helper.make_node("Reshape", ["r", "dims"], ["y"], name="reshape")]
    model = make_model(nodes, [("x", [2, 3, 4])], [("y", None), ("count", None, TensorProto.INT64)])
    for half in ("float16", "bfloat16"):
        out = pass_hooks.half_storage_rewrite(import_model(model).ir, ["Relu", "Reshape"], half=half)
        by_name = {n["name"]: n for n in out["nodes"]}
        assert by_name["dims"]["inputs"] == ["r"] and by_name["count"]["inputs"] == ["r"], half
        assert out["types"]["r"] == half
        casts = [n for n in out["nodes"] if n["op"] == "Cast"]
        assert [c["inputs"] for c in casts] == [["x"], [by_name["reshape"]["outputs"][0]]], casts  # entry, exit


def test_float_arithmetic_on_shapes_stays_float32_for_the_host_to_fold():
    # A detector's padding: pad H up to a multiple of 32, ceil(h / 32) * 32 - h, computed in float from
    # Shape (torchvision's GeneralizedRCNNTransform). The planner folds it on the host, which has no
    # half kernels: in half it would leave Pad's pads to the device, which Pad refuses (the sweep's
    # Faster R-CNN at fp16 and bf16, 2026-12-05).
    nodes = [helper.make_node("Shape", ["x"], ["shape"], name="shape"),
             helper.make_node("Gather", ["shape", "two"], ["h"], name="h"),
             helper.make_node("Cast", ["h"], ["hf"], name="to_float", to=TensorProto.FLOAT),
             helper.make_node("Div", ["hf", "k32"], ["q"], name="div"),
             helper.make_node("Ceil", ["q"], ["qc"], name="ceil"),
             helper.make_node("Mul", ["qc", "k32"], ["hp"], name="mul"),
             helper.make_node("Cast", ["hp"], ["hpi"], name="to_int", to=TensorProto.INT64),
             helper.make_node("Sub", ["hpi", "h"], ["extra"], name="extra"),
             helper.make_node("Concat", ["zeros6", "extra", "zero1"], ["pads"], name="pads", axis=0),
             helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Pad", ["r", "pads"], ["y"], name="pad")]
    consts = {"two": np.array([2], np.int64), "k32": np.array([32.0], np.float32),
              "zeros6": np.zeros(6, np.int64), "zero1": np.zeros(1, np.int64)}
    model = make_model(nodes, [("x", ["N", 3, "H", 8])], [("y", None)], consts, opset=17)
    for half in ("float16", "bfloat16"):
        out = pass_hooks.half_storage_rewrite(import_model(model).ir, ["Cast", "Div", "Ceil", "Mul", "Relu", "Pad"],
                                              half=half)
        by_name = {n["name"]: n for n in out["nodes"]}
        for name in ("to_float", "div", "ceil", "mul"):
            assert "computed on the host" in by_name[name]["fp32_reason"], (half, name)
        for value in ("hf", "q", "qc", "hp"):
            assert out["types"][value] == "float32", (half, value)
        assert out["types"]["r"] == half and by_name["relu"]["fp32_reason"] == ""  # the tensor math goes half


def test_a_node_with_subgraphs_reads_float32():
    # Its bodies are not rewritten (they add their own float32 constants): what it captures from the
    # outer scope must reach them as float32 (SSDlite's If at fp16: "A is float16 but B is float32").
    k = helper.make_tensor("k", TensorProto.FLOAT, [1], [1.5])
    then_g = helper.make_graph([helper.make_node("Add", ["r", "k"], ["t"])], "then", [],
                               [helper.make_tensor_value_info("t", TensorProto.FLOAT, None)], [k])
    else_g = helper.make_graph([helper.make_node("Sub", ["r", "k"], ["e"])], "else", [],
                               [helper.make_tensor_value_info("e", TensorProto.FLOAT, None)], [k])
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("If", ["cond"], ["y"], name="if", then_branch=then_g, else_branch=else_g)]
    model = make_model(nodes, [("x", [2, 3]), ("cond", [], TensorProto.BOOL)], [("y", None)], opset=17)
    out = pass_hooks.half_storage_rewrite(import_model(model).ir, ["Relu", "If", "Add", "Sub", "Cast"])
    node = [n for n in out["nodes"] if n["op"] == "If"][0]
    assert node["fp32_reason"] == "its subgraphs run in float32"
    assert out["types"]["r"] == "float16"
    captured = node["inputs"][1]  # after cond: r, through one Cast back to float32
    cast = [n for n in out["nodes"] if captured in n["outputs"]][0]
    assert cast["op"] == "Cast" and cast["inputs"] == ["r"] and cast["to"] == TO_FLOAT


def test_a_node_reading_a_value_typed_only_at_run_time_stays_float32():
    # After NonZero the shapes (and so the types value_types infers) are known at run time only: a
    # Mul of such a value and a float32 constant cannot tell whether to convert it (Faster R-CNN at
    # fp16 on CUDA: "node '/rpn/GreaterOrEqual_2': A is float16 but B is float32").
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Greater", ["r", "zero"], ["mask"], name="greater"),
             helper.make_node("NonZero", ["mask"], ["nz"], name="nonzero"),
             helper.make_node("Transpose", ["nz"], ["idx"], name="transpose", perm=[1, 0]),
             helper.make_node("GatherND", ["r", "idx"], ["picked"], name="gather"),
             helper.make_node("Mul", ["picked", "scale"], ["y"], name="mul")]
    model = make_model(nodes, [("x", [2, 3])], [("y", None)],
                       {"zero": np.zeros(1, np.float32), "scale": np.full(1, 2.0, np.float32)}, opset=17)
    out = pass_hooks.half_storage_rewrite(import_model(model).ir, ["Relu", "Greater", "GatherND", "Mul", "Transpose"])
    mul = [n for n in out["nodes"] if n["name"] == "mul"][0]
    assert "known at run time only" in mul["fp32_reason"]
    assert out["types"]["r"] == "float16"
    gather = [n for n in out["nodes"] if n["name"] == "gather"][0]  # it reads r: as float32, through a Cast
    assert gather["inputs"][0] != "r" and out["types"][gather["inputs"][0]] == "float32"


@pytest.mark.parametrize("half", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", ["zoo2/det_ssdlite320_mobilenet_v3_large.onnx",
                                  "zoo2/det_fasterrcnn_mobilenet_v3_large_320_fpn.onnx"])
def test_detectors_rewrite_with_no_half_value_meeting_a_float32_one(name, half):
    # Every op with a half kernel (more than CUDA has): no node may read a half value beside a float32
    # one or one whose type shows at run time only (the sweep's detectors at fp16 and bf16, 2026-12-05).
    ext = pytest.importorskip("bench_modules").bench_module("_external_models")
    if not (ext.EXTERNAL / name).exists():
        pytest.skip("../shared/external is absent")
    model = ext.read_model(name)
    out = pass_hooks.half_storage_rewrite(import_model(model).ir, sorted({n.op_type for n in model.graph.node}),
                                          half=half)
    types = out["types"]
    assert out["in_half"] > 100
    for node in out["nodes"]:
        kinds = {types.get(i, "unknown") for i in node["inputs"] if i}
        if node["op"] != "Cast" and half in kinds:
            assert not kinds & {"float32", "unknown"}, (node["name"], node["op"], node["inputs"])


def test_nothing_changes_without_half_kernels():
    model = conv_relu_gemm()
    out = rewrite(model, [])
    assert out["in_half"] == 0
    assert [n["op"] for n in out["nodes"]] == [n.op_type for n in model.graph.node]
    assert all(t != "float16" for t in out["types"].values())


def test_lenet_rewrite_keeps_its_outputs_float32():
    model = build("lenet")
    out = rewrite(model, ["Conv", "Relu", "MaxPool", "Gemm", "Reshape", "Flatten", "Softmax", "Add", "MatMul"])
    assert out["nodes"][0]["op"] == "Cast" and out["nodes"][0]["to"] == TO_HALF
    for name in out["outputs"]:
        assert out["types"][name] == "float32"


def test_float16_cast_in_a_model_is_a_float16_cast_on_the_cpu():
    """A model's own Cast to FLOAT16 is a float16 Cast on the CPU (on a device the importer makes
    it a float32 Cast and converts at the edge: python/dnnx/_edges.py)."""
    node = helper.make_node("Cast", ["x"], ["y"], name="to_half", to=TensorProto.FLOAT16)
    model = make_model([node], [("x", [3])], [("y", [3], TensorProto.FLOAT16)])
    m = dnnx.load(model)
    assert m.outputs[0].dtype == "float16"
    assert m.plan().notes == []
    x = np.array([1.0, -2.5, 65504.0], np.float32)
    np.testing.assert_array_equal(m.run(x), x.astype(np.float16))


@pytest.mark.parametrize("precision", ["fp16", "bf16", "tf32"])
def test_cpu_refuses_reduced_precisions(precision):
    with pytest.raises(ValueError, match="CPU backend runs fp32"):
        dnnx.load(build("lenet"), precision=precision)


def test_unknown_precision_is_refused_before_the_device():
    with pytest.raises(ValueError, match="precision must be one of fp32, tf32, fp16, bf16"):
        dnnx.load(build("lenet"), device="cuda", precision="half")


def test_lstm_example_rewrite_types_every_output_float16_inside():
    out = rewrite(build("lstm"), ["LSTM", "Squeeze", "Gemm", "Softmax"])
    ops = [n["op"] for n in out["nodes"]]
    assert ops == ["Cast", "LSTM", "Squeeze", "Gemm", "Softmax", "Cast"], ops
    lstm = out["nodes"][1]
    for name in lstm["outputs"]:
        if name:
            assert out["types"][name] == "float16", name
    for name in lstm["inputs"][1:4]:  # W, R, B: float16 copies made at load
        if name:
            assert out["types"][name] == "float16" and name in out["constants"], name
    assert all(out["types"][name] == "float32" for name in out["outputs"])
