"""Issue #34's misleading messages, each now naming the argument, node or file and what is
expected: an op dnnx lacks (onnx's reference evaluator no longer leaks through), a domain other
than ai.onnx, `dnnx run`'s output path (checked before the model runs), a text file named .npy,
a wrong shape from a file, `dnnx info`'s parameter count (weights made by ConstantOfShape), and
InferenceSession's provider warning and model metadata."""
import os
import re
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

import dnnx
import dnnx.cli.run as cli_run
from dnnx.cli import main
from dnnx.examples import build
from ort_check import make_model, rand

ZOO2 = Path(__file__).resolve().parents[2] / "shared" / "external" / "zoo2"
LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"


def user_error(capsys, *argv) -> str:
    """The one line a user error prints (exit status 2)."""
    status = main([str(a) for a in argv])
    _, err = capsys.readouterr()
    assert status == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    return err


# --- an op dnnx lacks: UnsupportedModelError naming the op, the node, its domain and opset ---------

def qdq_model(opset: int, quantize_x: bool = False):
    """y = x @ DequantizeLinear(w_q, scale, zero_point), the shape of a QDQ export's weights
    (onnxruntime's quantize_static); with quantize_x, x goes through QuantizeLinear and
    DequantizeLinear first (run-time values, as a QDQ export's activations do)."""
    inits = {"w_q": np.array([[1, -2, 3], [4, 5, -6]], np.int8), "scale": np.array(0.5, np.float32),
             "zero_point": np.array(0, np.int8)}
    nodes = [helper.make_node("DequantizeLinear", ["w_q", "scale", "zero_point"], ["w"], name="dq_w"),
             helper.make_node("MatMul", ["xq" if quantize_x else "x", "w"], ["y"], name="mm")]
    if quantize_x:
        nodes[:0] = [helper.make_node("QuantizeLinear", ["x", "scale", "zero_point"], ["x_q"], name="q_x"),
                     helper.make_node("DequantizeLinear", ["x_q", "scale", "zero_point"], ["xq"], name="dq_x")]
    return make_model(nodes, [("x", ["N", 2])], [("y", ["N", 3])], inits, opset=opset)


needs_no_dequantize = pytest.mark.skipif(bool({"QuantizeLinear", "DequantizeLinear"} & set(dnnx.supported_ops())),
                                         reason="dnnx runs (De)QuantizeLinear now: nothing left to refuse")


@needs_no_dequantize
def test_an_op_the_reference_evaluator_cannot_fold_is_unsupported_naming_it():
    # onnx's reference evaluator has DequantizeLinear from opset 19 on: at 17 it cannot fold it
    with pytest.raises(dnnx.UnsupportedModelError) as info:
        dnnx.load(qdq_model(17))
    message = str(info.value)
    assert re.search(r"node 'dq_w' \(DequantizeLinear\): op DequantizeLinear \(domain ai.onnx, opset 17\) "
                     r"is not supported by dnnx; a quantized model's op: load the float model it was quantized "
                     r"from \(supported ops: .*Conv", message), message
    assert "reference evaluator could not fold it" in message
    assert not message.startswith("constant folding failed")
    assert isinstance(info.value.__cause__, Exception)  # the evaluator's own error, chained
    assert "No implementation" in str(info.value.__cause__)


@needs_no_dequantize
def test_an_op_dnnx_lacks_on_run_time_values_is_unsupported_naming_it():
    with pytest.raises(dnnx.UnsupportedModelError,
                       match=r"node 'q_x' \(QuantizeLinear\): op QuantizeLinear \(domain ai.onnx, opset 19\) "
                             r"is not supported by dnnx; a quantized model's op"):
        dnnx.load(qdq_model(19, quantize_x=True))


@needs_no_dequantize
def test_folding_still_works_where_the_reference_evaluator_can():
    model = qdq_model(19)  # the evaluator has DequantizeLinear-19: the weight folds at load
    m = dnnx.load(model)
    x = rand(4, 2)
    # (onnxruntime's QDQ rewrites would quantize x too: the reference is the dequantized weight's product)
    w = np.array([[1, -2, 3], [4, 5, -6]], np.float32) * 0.5
    np.testing.assert_allclose(m.run(x), x @ w, rtol=1e-6, atol=1e-6)
    assert [row["op"] for row in m.plan()] == ["MatMul"]


@pytest.mark.parametrize("domain, runs", [
    ("com.microsoft", r"of domain 'com.microsoft' dnnx runs .*QLinearAdd"),  # some of its ops, not this one
    ("org.example", r"dnnx runs no op of domain 'org.example'"),
])
def test_a_foreign_op_names_the_node_the_op_and_its_domain(domain, runs):
    node = helper.make_node("FancyAdd", ["x"], ["y"], name="fadd", domain=domain)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", 1, [2])],
                              [helper.make_tensor_value_info("y", 1, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(domain, 1)])
    with pytest.raises(dnnx.UnsupportedModelError,
                       match=rf"node 'fadd' \({domain}::FancyAdd\): op FancyAdd \(domain {domain}, opset 1\) is not "
                             rf"supported by dnnx; {runs}"):
        dnnx.load(model)


def test_a_model_local_function_names_the_function():
    body = [helper.make_node("Relu", ["a"], ["b"])]
    function = helper.make_function("local.fns", "MyRelu", ["a"], ["b"], body,
                                    opset_imports=[helper.make_opsetid("", 17)])
    node = helper.make_node("MyRelu", ["x"], ["y"], name="call", domain="local.fns")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", 1, [2])],
                              [helper.make_tensor_value_info("y", 1, [2])])
    model = helper.make_model(graph, functions=[function],
                              opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("local.fns", 1)])
    with pytest.raises(dnnx.UnsupportedModelError,
                       match=r"node 'call' \(local.fns::MyRelu\): calls the model-local function local.fns::MyRelu"):
        dnnx.load(model)


@pytest.mark.skipif(not ZOO2.is_dir(), reason="needs ../shared/external/zoo2")
@pytest.mark.parametrize("name, match", [
    ("q_qdq_regnety_002.onnx", r"\(DequantizeLinear\): op DequantizeLinear \(domain ai.onnx, opset 17\) is not "
                               r"supported by dnnx"),
    # QOperator: a QuantizeLinear at the input, then QLinearConv and com.microsoft's QLinear ops
    ("q_qop_efficientnet_b0.onnx", r"op QuantizeLinear \(domain ai.onnx, opset 17\) is not supported by dnnx"
                                   r"|op \w+ \(domain com.microsoft, opset 1\) is not supported by dnnx"),
    ("q_dyn_bert.onnx", r"op \w+ \(domain ai.onnx, opset 17\) is not supported by dnnx"
                        r"|op \w+ \(domain com.microsoft, opset 1\) is not supported by dnnx"),
])
def test_quantized_zoo_models_name_what_dnnx_lacks(name, match):
    path = ZOO2 / name
    model_ops = {n.op_type if n.domain in ("", "ai.onnx") else f"{n.domain}::{n.op_type}"
                 for n in onnx.load(path, load_external_data=False).graph.node}
    if model_ops <= set(dnnx.supported_ops()) | {"Constant"}:
        pytest.skip(f"dnnx runs every op of {name} now")
    with pytest.raises(dnnx.UnsupportedModelError, match=match) as info:
        dnnx.load(path)
    assert "constant folding failed" not in str(info.value)


# --- dnnx run: the output path first, files named ----------------------------------------------

@pytest.fixture(scope="module")
def lenet(tmp_path_factory):
    path = tmp_path_factory.mktemp("models") / "lenet.onnx"
    onnx.save(build("lenet", seed=0), path)
    return path


@pytest.fixture
def no_load(monkeypatch):
    """Makes loading the model a test failure: the command must stop before."""
    def refuse(*args, **kwargs):
        raise AssertionError("the model was loaded before the output path was checked")
    monkeypatch.setattr(cli_run, "load", refuse)


def test_run_checks_the_output_folder_before_loading(capsys, tmp_path, lenet, no_load):
    missing = tmp_path / "missing" / "y.npz"
    err = user_error(capsys, "run", lenet, "--random", "--output", missing)
    assert f"--output {missing}: folder {missing.parent} not found" in err


def test_run_checks_the_output_suffix_and_kind_before_loading(capsys, tmp_path, lenet, no_load):
    err = user_error(capsys, "run", lenet, "--random", "--output", tmp_path / "y.txt")
    assert f"--output {tmp_path / 'y.txt'}: expected a file name ending in .npz" in err
    (tmp_path / "dir.npz").mkdir()
    err = user_error(capsys, "run", lenet, "--random", "--output", tmp_path / "dir.npz")
    assert f"--output {tmp_path / 'dir.npz'}: is a folder" in err


def test_run_checks_the_output_folder_is_writable(capsys, tmp_path, lenet, no_load, monkeypatch):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    if os.geteuid() == 0:  # root may write into any folder: the check is then asked to say no
        real = os.access
        monkeypatch.setattr(os, "access", lambda p, mode: False if Path(p) == folder else real(p, mode))
    try:
        err = user_error(capsys, "run", lenet, "--random", "--output", folder / "y.npz")
    finally:
        folder.chmod(0o755)
    assert f"folder {folder} is not writable" in err


def test_run_a_text_file_named_npy_is_not_an_npy_file(capsys, tmp_path, lenet):
    text = tmp_path / "x.npy"
    text.write_text("0.1 0.2 0.3\n")
    err = user_error(capsys, "run", lenet, "--input", text)
    assert f"{text} is not an .npy array file" in err
    assert "allow_pickle" not in err
    (tmp_path / "x.npz").write_text("a,b\n1,2\n")
    err = user_error(capsys, "run", lenet, "--input", tmp_path / "x.npz")
    assert f"{tmp_path / 'x.npz'} is not an .npz archive" in err


def test_run_a_wrong_shape_names_the_file(capsys, tmp_path, lenet):
    path = tmp_path / "wrong.npy"
    np.save(path, rand(2, 3, 28, 28))
    err = user_error(capsys, "run", lenet, "--input", path)
    assert re.search(rf"{re.escape(str(path))}: input 'x': expected \[N,1,28,28\] float32, got \[2,3,28,28\]",
                     err), err
    err = user_error(capsys, "run", lenet, "--input", path, "--chunk", 1)
    assert f"{path}: input 'x'" in err


def test_run_still_writes_a_good_output(capsys, tmp_path, lenet):
    assert main(["run", str(lenet), "--random", "--batch", "2", "--output", str(tmp_path / "y.npz")]) == 0
    with np.load(tmp_path / "y.npz") as saved:
        assert saved["probs"].shape == (2, 10)


# --- dnnx info: every weight counted ----------------------------------------------------------

def info_lines(capsys, path) -> list:
    assert main(["info", str(path)]) == 0
    return capsys.readouterr().out.splitlines()


def test_info_counts_weights_made_by_constant_of_shape(capsys):
    path = LIGHT / "light_resnet50.onnx"
    model = onnx.load(path)
    # what onnxruntime holds for every ConstantOfShape of a shape initializer, and each float initializer
    shapes = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    want = sum(int(np.prod(shapes[n.input[0]])) for n in model.graph.node if n.op_type == "ConstantOfShape")
    want += sum(int(np.prod(t.dims)) for t in model.graph.initializer if t.data_type == TensorProto.FLOAT)
    assert want > 25_000_000  # ResNet-50's 25.5 M weights (and BatchNorm's statistics), not 1,793
    lines = info_lines(capsys, path)
    assert f"parameters: {want:,} ({want * 4 / 2 ** 20:.1f} MiB)" in lines, lines
    assert f"ops ({len(model.graph.node)} nodes):" in lines


def test_info_counts_constant_nodes_and_subgraph_nodes(capsys, tmp_path):
    then = helper.make_graph([helper.make_node("Constant", [], ["t"], value=numpy_helper.from_array(rand(2)))],
                             "then", [], [helper.make_tensor_value_info("t", 1, [2])])
    other = helper.make_graph([helper.make_node("Constant", [], ["e"], value_floats=[1.0, 2.0])],
                              "else", [], [helper.make_tensor_value_info("e", 1, [2])])
    nodes = [helper.make_node("Constant", [], ["w"], value=numpy_helper.from_array(rand(4, 5))),
             helper.make_node("Constant", [], ["shape"], value_ints=[3, 7]),
             helper.make_node("ConstantOfShape", ["shape"], ["zeros"]),  # float32 zeros by default
             helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)]
    model = make_model(nodes, [("c", [], TensorProto.BOOL)], [("y", None)])
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    lines = info_lines(capsys, path)
    count = 4 * 5 + 3 * 7 + 2 + 2
    assert f"parameters: {count:,} ({count * 4} B)" in lines, lines
    assert "ops (6 nodes, 2 of them in subgraphs):" in lines, lines
    assert "  Constant                 4" in lines


def test_info_counts_quantized_weights(capsys, tmp_path):
    model = qdq_model(17)
    bias = numpy_helper.from_array(np.array([7, -7, 1], np.int32), "bias_q")  # QDQ's int32 bias
    model.graph.initializer.append(bias)
    model.graph.node.append(helper.make_node("DequantizeLinear", ["bias_q", "scale"], ["bias"], name="dq_b"))
    model.graph.node.append(helper.make_node("Reshape", ["bias", "target"], ["bias2"], name="shape_it"))
    model.graph.initializer.append(numpy_helper.from_array(np.array([1, 3], np.int64), "target"))  # a shape
    path = tmp_path / "q.onnx"
    onnx.save(model, path)
    lines = info_lines(capsys, path)
    # w_q int8 [2, 3], zero_point int8, scale float32, bias_q int32 [3]; the int64 shape is not a weight
    count, nbytes = 6 + 1 + 1 + 3, 6 + 1 + 4 + 3 * 4
    assert f"parameters: {count:,} ({nbytes} B)" in lines, lines


@pytest.mark.skipif(not ZOO2.is_dir(), reason="needs ../shared/external/zoo2")
def test_info_counts_the_int8_weights_of_a_quantized_zoo_model(capsys):
    lines = info_lines(capsys, ZOO2 / "q_qdq_regnety_002.onnx")
    count = int(next(line for line in lines if line.startswith("parameters: ")).split()[1].replace(",", ""))
    assert 2_268_177 + 28_301 <= count < 2_268_177 + 28_301 + 30_840  # int8 weights, float scales, int32 biases


# --- InferenceSession: the providers that are there, a readable ModelMetadata ----------------------

def test_unknown_provider_warning_lists_only_the_available_ones(monkeypatch):
    import dnnx.session as session

    model = build("lenet", seed=0).SerializeToString()
    monkeypatch.setattr(session, "cuda_available", lambda: False)  # a CPU-only build or machine
    with pytest.warns(UserWarning) as caught:
        dnnx.InferenceSession(model, providers=["TensorrtExecutionProvider", "CPUExecutionProvider"])
    messages = [str(w.message) for w in caught]
    assert ("Specified provider 'TensorrtExecutionProvider' is not in available provider names. Available "
            "providers: 'CPUExecutionProvider'") in messages, messages
    assert not any("CUDAExecutionProvider" in m for m in messages)
    monkeypatch.setattr(session, "cuda_available", lambda: True)
    with pytest.warns(UserWarning, match="Available providers: 'CUDAExecutionProvider, CPUExecutionProvider'"):
        session._choose_provider([("TensorrtExecutionProvider", {}), ("CPUExecutionProvider", {})])


def test_model_metadata_has_onnxruntimes_fields_and_a_readable_repr():
    model = build("lenet", seed=0)
    model.doc_string, model.domain, model.model_version = "a LeNet", "org.example", 3
    model.graph.doc_string = "the graph"
    onnx.helper.set_model_props(model, {"author": "tests"})
    data = model.SerializeToString()
    ours = dnnx.InferenceSession(data, providers=["CPUExecutionProvider"]).get_modelmeta()
    theirs = onnxruntime.InferenceSession(data, providers=["CPUExecutionProvider"]).get_modelmeta()
    fields = ("producer_name", "graph_name", "domain", "description", "graph_description", "version",
              "custom_metadata_map")
    assert {f: getattr(ours, f) for f in fields} == {f: getattr(theirs, f) for f in fields}
    text = repr(ours)
    assert " at 0x" not in text
    assert text == ("ModelMetadata(producer_name='dnnx.examples', graph_name='lenet', domain='org.example', "
                    "description='a LeNet', graph_description='the graph', version=3, "
                    "custom_metadata_map={'author': 'tests'})"), text
