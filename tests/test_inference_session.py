"""dnnx.InferenceSession (issue #16): the same code, written against onnxruntime's session API, run on
`onnxruntime` and on `dnnx` (the `rt` fixture is either module), with outputs compared at float32
tolerances (FP32_RTOL/FP32_ATOL: summation order only). dnnx-only behaviour (its input rule, the
CUDA options' mapping, the fallback) is tested below the parity tests; the GPU parts are in
tests/cuda/test_cuda_inference_session.py. Also: dnnx.__version__, `dnnx.threads` without its
own import, and the typing files."""
import ast
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper

import dnnx
from dnnx.examples import build
from dnnx.session import _cuda_load_options
from ort_check import FP32_ATOL, FP32_RTOL, make_model, rand

ROOT = Path(__file__).resolve().parent.parent
CPU = ["CPUExecutionProvider"]


@pytest.fixture(params=["onnxruntime", "dnnx"])
def rt(request):
    return onnxruntime if request.param == "onnxruntime" else dnnx


@pytest.fixture(scope="module")
def lenet_bytes():
    return build("lenet", seed=0).SerializeToString()


def two_in_two_out():
    """y = Relu(x @ w + z) [N, 4] and its argmax per row k [N] (int64), from x [N, 3], z [N, 4]."""
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Add", ["m", "z"], ["s"]),
             helper.make_node("Relu", ["s"], ["y"]), helper.make_node("ArgMax", ["s"], ["k"], axis=1, keepdims=0)]
    model = make_model(nodes, [("x", ["N", 3]), ("z", ["N", 4])], [("y", ["N", 4]), ("k", ["N"], TensorProto.INT64)],
                       {"w": rand(3, 4, seed=5)})
    model.producer_name, model.doc_string = "dnnx-tests", "two in, two out"
    return model.SerializeToString()


def ort_outputs(model_bytes, feeds, names=None):
    sess = onnxruntime.InferenceSession(model_bytes, providers=CPU)
    return sess.run(names, feeds)


def assert_outputs_match(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert isinstance(g, np.ndarray) and g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=FP32_RTOL, atol=FP32_ATOL)


# --- the same code on both ------------------------------------------------------------------------

def test_lenet_runs_the_same(rt, lenet_bytes):
    sess = rt.InferenceSession(lenet_bytes, providers=CPU)
    inputs, outputs = sess.get_inputs(), sess.get_outputs()
    assert [(i.name, i.shape, i.type) for i in inputs] == [("x", ["N", 1, 28, 28], "tensor(float)")]
    assert [(o.name, o.shape, o.type) for o in outputs] == [("probs", ["N", 10], "tensor(float)")]
    assert sess.get_providers() == CPU
    x = rand(5, 1, 28, 28)
    got = sess.run(None, {inputs[0].name: x})
    assert_outputs_match(got, ort_outputs(lenet_bytes, {"x": x}))


def test_a_path_and_session_options(rt, lenet_bytes, tmp_path):
    path = tmp_path / "lenet.onnx"
    path.write_bytes(lenet_bytes)
    options = rt.SessionOptions()
    options.intra_op_num_threads = 1
    options.graph_optimization_level = rt.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.log_severity_level = 3
    options.enable_mem_pattern = False
    before = dnnx.threads.get_num_threads()
    try:
        sess = rt.InferenceSession(str(path), options, CPU)  # onnxruntime's positional order
        x = rand(2, 1, 28, 28, seed=1)
        assert_outputs_match(sess.run(["probs"], {"x": x}), ort_outputs(lenet_bytes, {"x": x}))
        if rt is dnnx:
            assert dnnx.threads.get_num_threads() == 1
            assert not any(sess.model.passes.values())  # ORT_DISABLE_ALL: every rewrite off
    finally:
        dnnx.threads.set_num_threads(before)


def test_multi_input_multi_output(rt):
    model = two_in_two_out()
    sess = rt.InferenceSession(model, providers=[("CPUExecutionProvider", {})])
    assert [(i.name, i.shape, i.type) for i in sess.get_inputs()] == [("x", ["N", 3], "tensor(float)"),
                                                                       ("z", ["N", 4], "tensor(float)")]
    assert [(o.name, o.shape, o.type) for o in sess.get_outputs()] == [("y", ["N", 4], "tensor(float)"),
                                                                        ("k", ["N"], "tensor(int64)")]
    feeds = {"z": rand(6, 4, seed=2), "x": rand(6, 3, seed=3)}  # a dict in another order than the graph's
    assert_outputs_match(sess.run(None, feeds), ort_outputs(model, feeds))
    assert_outputs_match(sess.run(["k", "y"], feeds), ort_outputs(model, feeds, ["k", "y"]))  # chosen order
    lists = {"x": [[1, 2, 3]], "z": [[0.5, -1.0, 2.0, 0.0]]}  # lists become arrays of the input's dtype
    assert_outputs_match(sess.run(None, lists), ort_outputs(model, lists))


def test_model_metadata(rt):
    meta = rt.InferenceSession(two_in_two_out(), providers=CPU).get_modelmeta()
    assert (meta.producer_name, meta.graph_name, meta.description) == ("dnnx-tests", "test", "two in, two out")
    assert meta.custom_metadata_map == {}


def test_missing_input_is_a_value_error(rt):
    sess = rt.InferenceSession(two_in_two_out(), providers=CPU)
    with pytest.raises(ValueError, match=r"\['z'\].*missing"):
        sess.run(None, {"x": rand(2, 3)})


def test_io_binding_on_the_cpu(rt, lenet_bytes):
    sess = rt.InferenceSession(lenet_bytes, providers=CPU)
    x, x2 = rand(3, 1, 28, 28, seed=4), rand(3, 1, 28, 28, seed=6)
    binding = sess.io_binding()
    binding.bind_cpu_input("x", x)
    binding.bind_output("probs")
    sess.run_with_iobinding(binding)
    want = ort_outputs(lenet_bytes, {"x": x})
    assert_outputs_match(binding.copy_outputs_to_cpu(), want)
    assert_outputs_match([v.numpy() for v in binding.get_outputs()], want)
    # onnxruntime's raw form: device type, id, element type, shape and a pointer to host memory
    binding.bind_input("x", "cpu", 0, np.float32, list(x2.shape), x2.ctypes.data)
    sess.run_with_iobinding(binding)
    assert_outputs_match(binding.copy_outputs_to_cpu(), ort_outputs(lenet_bytes, {"x": x2}))


def test_session_options_refuse_unknown_names(rt):
    with pytest.raises(AttributeError):
        rt.SessionOptions().intra_op_threads = 2  # a typo of intra_op_num_threads


@pytest.mark.skipif(dnnx.cuda_available(), reason="the fallback needs a machine without CUDA")
def test_cuda_falls_back_to_the_cpu_with_a_warning(rt, lenet_bytes):
    with pytest.warns(UserWarning, match="CUDAExecutionProvider"):
        sess = rt.InferenceSession(lenet_bytes, providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
    assert sess.get_providers() == CPU
    x = rand(2, 1, 28, 28)
    assert_outputs_match(sess.run(None, {"x": x}), ort_outputs(lenet_bytes, {"x": x}))


# --- dnnx only ------------------------------------------------------------------------------------

def test_default_providers_and_available_providers(lenet_bytes):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no provider was asked for: no warning
        sess = dnnx.InferenceSession(lenet_bytes)
    assert sess.get_providers()[0] == dnnx.get_available_providers()[0]
    assert dnnx.get_available_providers()[-1] == "CPUExecutionProvider"


def test_dnnx_errors_name_what_is_wrong(lenet_bytes):
    sess = dnnx.InferenceSession(lenet_bytes, providers=CPU)
    with pytest.raises(ValueError, match=r"input 'x': expected dtype float32, got float64"):
        sess.run(None, {"x": rand(2, 1, 28, 28).astype(np.float64)})
    with pytest.raises(ValueError, match=r"unknown output name\(s\) \['nope'\].*\['probs'\]"):
        sess.run(["nope"], {"x": rand(2, 1, 28, 28)})
    with pytest.raises(ValueError, match=r"invalid input name\(s\) \['q'\]"):
        sess.run(None, {"x": rand(2, 1, 28, 28), "q": rand(1)})
    # an empty batch is no error: onnxruntime's (0, 10) output (Note [empty tensors])
    assert sess.run(None, {"x": rand(0, 1, 28, 28)})[0].shape == (0, 10)
    binding = sess.io_binding()
    with pytest.raises(ValueError, match="run_with_iobinding"):
        binding.copy_outputs_to_cpu()
    with pytest.raises(ValueError, match="buffer_ptr"):
        binding.bind_output("probs", "cpu", 0, np.float32, [1, 10], 1234)
    with pytest.raises(ValueError, match="'cuda' on a session running on CPUExecutionProvider"):
        binding.bind_output("probs", "cuda")


def test_unknown_providers_are_skipped_with_a_warning(lenet_bytes):
    with pytest.warns(UserWarning, match="TensorrtExecutionProvider"):
        sess = dnnx.InferenceSession(lenet_bytes, providers=["TensorrtExecutionProvider", "CPUExecutionProvider"])
    assert sess.get_providers() == CPU
    with pytest.raises(ValueError, match="one dict per provider"):
        dnnx.InferenceSession(lenet_bytes, providers=CPU, provider_options=[{}, {}])


def test_free_dimension_override_binds_the_dim(lenet_bytes):
    options = dnnx.SessionOptions()
    options.add_free_dimension_override_by_name("N", 4)
    sess = dnnx.InferenceSession(lenet_bytes, options, CPU)
    assert sess.get_inputs()[0].shape == [4, 1, 28, 28]
    with pytest.raises(ValueError, match="input 'x'"):
        sess.run(None, {"x": rand(3, 1, 28, 28)})


def test_cuda_provider_options_map_to_load_options():
    # unset: the background search (Note [background search]: onnxruntime's load time, then the
    # exhaustive plan's speed)
    assert _cuda_load_options({}) == {"device": "cuda:0", "algo_search": "background"}
    got = _cuda_load_options({"device_id": "1", "cudnn_conv_algo_search": "EXHAUSTIVE", "use_tf32": 0,
                              "enable_cuda_graph": "1", "cudnn_deterministic": True, "gpu_mem_limit": 1 << 30})
    assert got == {"device": "cuda:1", "algo_search": "exhaustive", "precision": "fp32", "cuda_graph": True,
                   "deterministic": True}
    assert _cuda_load_options({"cudnn_conv_algo_search": "DEFAULT", "use_tf32": "1"}) == {
        "device": "cuda:0", "algo_search": "heuristic", "precision": "tf32"}
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['device'\]"):
        _cuda_load_options({"device": 0})
    with pytest.raises(ValueError, match="cudnn_conv_algo_search.*FAST"):
        _cuda_load_options({"cudnn_conv_algo_search": "FAST"})


def test_onnxruntimes_session_options_object_is_read(lenet_bytes):
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = dnnx.InferenceSession(lenet_bytes, options, CPU)
    assert not any(sess.model.passes.values())


# --- version, threads, typing ---------------------------------------------------------------------

def test_version_matches_pyproject():
    text = (ROOT / "pyproject.toml").read_text()
    declared = re.search(r'^version\s*=\s*"([^"]+)"', text, re.M).group(1)
    assert dnnx.__version__ == declared


def test_cli_version(capsys):
    from dnnx.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out == f"dnnx {dnnx.__version__}\n"


def test_threads_without_its_own_import():
    code = "import dnnx; dnnx.threads.set_num_threads(1); print(dnnx.threads.get_num_threads())"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "1"


def test_typing_files_cover_the_core_names_used():
    package = ROOT / "python" / "dnnx"
    assert (package / "py.typed").is_file()
    stub = ast.parse((package / "_core.pyi").read_text())
    declared = {node.name for node in stub.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    used = set()
    for source in package.rglob("*.py"):
        used.update(re.findall(r"\bcore\.([A-Za-z_]\w*)", source.read_text()))
    assert used - declared == set()
    core_names = set(dir(dnnx._core))
    assert declared - core_names == set(), "the stub declares names the compiled core lacks"
