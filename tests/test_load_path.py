"""The load path (issue #14): named dims bound at load, weights read from the file once (and
checked against their dims), a load without onnx's package import, and the load's profile."""
import json
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import dnnx
from dnnx._wire import strip_weights
from ort_check import make_model, rand

BIG = 40  # a [BIG, BIG] float32 weight is 6400 bytes: its raw_data stays in the file at load


def matmul_model(rows="T", features=BIG):
    """y [rows, features] = Relu(x [rows, features] @ w) with w [features, features]."""
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Relu", ["m"], ["y"])]
    inits = {"w": rand(features, features, seed=1)}
    return make_model(nodes, [("x", [rows, features])], [("y", [rows, features])], inits)


# --- dims={"T": ...} ---------------------------------------------------------------------------

def test_dims_binds_a_named_dim_at_load():
    model = dnnx.load(matmul_model(), dims={"T": 128})
    assert model.inputs[0].shape == (128, BIG)
    assert model.outputs[0].shape == (128, BIG)
    x = rand(128, BIG)
    w = numpy_helper.to_array(matmul_model().graph.initializer[0])
    np.testing.assert_allclose(model.run(x), np.maximum(x @ w, 0), rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="x"):
        model.run(rand(5, BIG))


def test_dims_leaves_the_callers_proto_as_it_was():
    proto = matmul_model()
    dnnx.load(proto, dims={"T": 3})
    assert proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "T"


def test_unknown_dim_name_lists_the_models_dims():
    with pytest.raises(ValueError, match=r"no dim named 'S'.*'T'"):
        dnnx.load(matmul_model(), dims={"S": 4})


@pytest.mark.parametrize("value", [-2, 1.5, True])
def test_dims_value_must_be_a_non_negative_int(value):
    with pytest.raises(ValueError, match="'T' must be an int >= 0"):
        dnnx.load(matmul_model(), dims={"T": value})


def test_dims_and_batch_size_together():
    nodes = [helper.make_node("Relu", ["x"], ["y"])]
    model = make_model(nodes, [("x", ["N", "T", 2])], [("y", ["N", "T", 2])])
    loaded = dnnx.load(model, batch_size=4, dims={"T": 6})
    assert loaded.inputs[0].shape == (4, 6, 2)
    assert loaded.run(rand(4, 6, 2)).shape == (4, 6, 2)


# --- weights: read once from the file, checked against their dims --------------------------------

def truncated_weight_model(count: int):
    """y = x + w, whose weight 'w' [count + 1] stores only count floats of raw_data."""
    w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[count + 1], raw_data=bytes(4 * count))
    nodes = [helper.make_node("Add", ["x", "w"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [count + 1])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [count + 1])], [w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("count", [3, 4000])  # small: parsed with the model; large: read from the file
@pytest.mark.parametrize("source", ["path", "bytes", "proto"])
def test_truncated_raw_data_names_the_tensor(tmp_path, count, source):
    model = truncated_weight_model(count)
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    src = {"path": path, "bytes": model.SerializeToString(), "proto": model}[source]
    with pytest.raises(dnnx.InvalidModelError, match=rf"initializer 'w': raw_data holds {4 * count} bytes.*need"):
        dnnx.load(src)


def test_model_proto_holds_the_weights_it_was_read_with(tmp_path):
    proto = matmul_model()
    path = tmp_path / "m.onnx"
    onnx.save(proto, path)
    loaded = dnnx.load(path)
    assert loaded.proto == onnx.load(path)  # the weights left in the file are back in it


def test_a_proto_source_is_kept_not_copied():
    proto = matmul_model()
    assert dnnx.load(proto).proto is proto


def test_strip_weights_leaves_small_tensors_and_gives_up_on_garbage():
    proto = matmul_model()
    proto.graph.initializer.append(numpy_helper.from_array(np.array([1, 2], np.int64), "small"))
    data = proto.SerializeToString()
    stripped, spans = strip_weights(memoryview(data), 4096)
    assert list(spans) == ["w"]
    offset, length = spans["w"]
    assert data[offset:offset + length] == proto.graph.initializer[0].raw_data
    parsed = onnx.ModelProto()
    parsed.ParseFromString(stripped)
    assert not parsed.graph.initializer[0].HasField("raw_data")
    assert parsed.graph.initializer[1] == proto.graph.initializer[1]
    parsed.graph.initializer[0].raw_data = proto.graph.initializer[0].raw_data
    assert parsed == proto
    assert strip_weights(memoryview(b"\x3a\xff\xff\xff"), 4096) is None  # a length past the end


# --- Constant nodes: converted from their attribute ----------------------------------------------

@pytest.mark.parametrize("attr, value, want", [
    ("value_ints", [2, 6], np.int64), ("value_int", 3, np.int64),
    ("value_floats", [0.5, 2.0], np.float32), ("value_float", 1.5, np.float32)])
def test_constant_attributes_become_constants(attr, value, want):
    nodes = [helper.make_node("Constant", [], ["c"], **{attr: value}), helper.make_node("Identity", ["c"], ["y"])]
    elem = TensorProto.INT64 if want == np.int64 else TensorProto.FLOAT
    loaded = dnnx.load(make_model(nodes, [], [("y", None, elem)]))
    constant = loaded._ir["constants"]["c"]
    assert constant.dtype == want and constant.tolist() == value
    assert [n[0] for n in loaded._ir["nodes"]] == ["Identity"]


def test_sparse_constant_is_refused_by_name():
    sparse = helper.make_sparse_tensor(helper.make_tensor("v", TensorProto.FLOAT, [1], [2.0]),
                                       helper.make_tensor("i", TensorProto.INT64, [1], [1]), [3])
    nodes = [helper.make_node("Constant", [], ["c"], sparse_value=sparse, name="k"),
             helper.make_node("Identity", ["c"], ["y"])]
    with pytest.raises(dnnx.UnsupportedModelError, match=r"node 'k' \(Constant\): sparse"):
        dnnx.load(make_model(nodes, [], [("y", [3])]))


# --- shape inference: at most once, over the weight-free view -----------------------------------

def count_inferences(monkeypatch) -> list:
    import dnnx._view as view

    sizes, infer = [], view.infer_shapes
    monkeypatch.setattr(view, "infer_shapes", lambda data: sizes.append(len(data)) or infer(data))
    return sizes


def baked_batch_model():
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Reshape", ["r", "target"], ["flat"]),
             helper.make_node("MatMul", ["flat", "w"], ["y"])]
    inits = {"target": np.array([1, BIG], np.int64), "w": rand(BIG, BIG, seed=2)}
    return make_model(nodes, [("x", [1, 4, 10])], [("y", [1, BIG])], inits)


def test_a_load_with_declared_outputs_infers_no_shapes(monkeypatch):
    sizes = count_inferences(monkeypatch)
    dnnx.load(baked_batch_model())
    assert sizes == []


def test_batch_size_through_a_baked_reshape_infers_once_without_the_weights(monkeypatch):
    sizes = count_inferences(monkeypatch)
    model = baked_batch_model()
    x = rand(3, 4, 10)
    got = dnnx.load(model, batch_size=3).run(x)
    w = numpy_helper.to_array(model.graph.initializer[1])
    np.testing.assert_allclose(got, np.maximum(x, 0).reshape(3, BIG) @ w, rtol=1e-5, atol=1e-5)
    assert len(sizes) == 1 and sizes[0] < BIG * BIG * 4  # the view: w's 6400 bytes are not in it


# --- no onnx package import, and the load's profile ----------------------------------------------

LOAD_IN_A_NEW_PROCESS = """
import json, sys
import dnnx
model = dnnx.load(sys.argv[1])
heavy = sorted(m for m in ("onnx", "ml_dtypes", "onnx.helper", "onnx.reference") if m in sys.modules)
import onnx  # afterwards the package imports as usual, and the classes are its own
print(json.dumps({"heavy": heavy, "proto_is_onnx": isinstance(model.proto, onnx.ModelProto),
                  "checker": onnx.checker.check_model(model.proto) is None}))
"""


def test_a_load_imports_no_onnx_package(tmp_path):
    path = tmp_path / "m.onnx"
    onnx.save(matmul_model(), path)
    out = subprocess.run([sys.executable, "-c", LOAD_IN_A_NEW_PROCESS, str(path)], capture_output=True, text=True,
                         check=True)
    assert json.loads(out.stdout) == {"heavy": [], "proto_is_onnx": True, "checker": True}


def test_load_profile_names_the_phases():
    profile = dnnx.load(matmul_model(), dims={"T": 2}).load_profile()
    assert list(profile) == ["device", "read", "check", "shapes", "convert", "engine: graph", "engine: backend",
                             "engine: build"]
    assert all(isinstance(s, float) and s >= 0 for s in profile.values())
