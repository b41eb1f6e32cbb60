"""The model suites that ship inside the onnx package (issue #15), run through dnnx:

- the 9 light models (onnx/backend/test/data/light: light_<name>.onnx, light_<name>_output_0.pb).
  Their weights are ConstantOfShape fills and they come with an output but no input: onnx's
  runner (onnx/backend/test/runner, ``run`` for a light url) feeds ``arange(n).reshape(shape) / n``
  as float32 (symbolic dims as 1) to every graph input that is not an initializer, and compares
  at the tolerances of onnx/backend/test/case/model (rtol 1e-3, densenet121 2e-3; atol 1e-7).
  This does the same;
- the pytorch-converted tests (onnx/backend/test/data/pytorch-converted/<case>/model.onnx with
  test_data_set_*), at each case's own tolerances (rtol 1e-3, atol 1e-7 unless its data.json
  says otherwise), as onnx's runner compares them.

Every case runs; the cases below are excluded or expected to fail, each with its reason.
The two suites take about 20 s on 2 cores (vgg19 alone 7 s: its 140M weights are filled at load)."""
import glob
import os

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import numpy_helper
from onnx.backend.test.loader import load_model_tests

import dnnx

DATA = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data")

# onnx/backend/test/case/model/__init__.py: collect_testcases
LIGHT = {"bvlc_alexnet": 1e-3, "densenet121": 2e-3, "inception_v1": 1e-3, "inception_v2": 1e-3, "resnet50": 1e-3,
         "shufflenet": 1e-3, "squeezenet": 1e-3, "vgg19": 1e-3, "zfnet512": 1e-3}
LIGHT_ATOL = 1e-7

LIGHT_XFAIL = {
    "squeezenet": "its expected output needs every channel bit-identical: the final Softmax reads logits near 9.5e9, "
                  "where one float32 ulp is 1024, so a GEMM that rounds some rows one ulp differently (OpenBLAS's "
                  "Haswell sgemm here) turns the uniform 0.001 into 0.01 and 0; the logits themselves match "
                  "onnxruntime (test_light_squeezenet_logits_match_onnxruntime). Not strict: on the GPU machine's "
                  "Xeon (another OpenBLAS kernel set) the rows round alike and the stored output matches",
}

# pytorch-converted cases skipped, each with its reason (none now: ReflectionPad2d and
# ReplicationPad2d run since Pad's reflect and edge modes, issue #15).
PYTORCH_EXCLUDED: dict = {}


def _light_feeds(model) -> dict:
    """onnx's runner's input for a light model: arange(n).reshape(shape) / n, float32."""
    inits = {t.name for t in model.graph.initializer}
    feeds = {}
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        shape = tuple(d.dim_value if d.HasField("dim_value") else 1 for d in vi.type.tensor_type.shape.dim)
        n = int(np.prod(shape))
        feeds[vi.name] = (np.arange(n).reshape(shape) / n).astype(np.float32)
    return feeds


def _light_params():
    params = []
    for name in LIGHT:
        marks = [pytest.mark.xfail(reason=LIGHT_XFAIL[name], strict=False)] if name in LIGHT_XFAIL else []
        params.append(pytest.param(name, marks=marks, id=name))
    return params


def test_light_models_are_all_listed():
    found = sorted(os.path.basename(p)[len("light_"):-len(".onnx")] for p in glob.glob(f"{DATA}/light/light_*.onnx"))
    assert found == sorted(LIGHT)


@pytest.mark.parametrize("name", _light_params())
def test_light_model(name):
    path = f"{DATA}/light/light_{name}.onnx"
    model = onnx.load(path)
    got = dnnx.load(path).run_dict(_light_feeds(model))
    want = numpy_helper.to_array(onnx.load_tensor(f"{DATA}/light/light_{name}_output_0.pb"))
    out = got[model.graph.output[0].name]
    assert out.shape == want.shape
    np.testing.assert_allclose(out, want, rtol=LIGHT[name], atol=LIGHT_ATOL)


def test_light_squeezenet_logits_match_onnxruntime():
    """What squeezenet's stored output cannot check (LIGHT_XFAIL): the Softmax's input, against
    onnxruntime at float32 rounding (rtol 1e-5 over values near 9.5e9)."""
    model = onnx.load(f"{DATA}/light/light_squeezenet.onnx")
    softmax = [n for n in model.graph.node if n.op_type == "Softmax"]
    assert len(softmax) == 1
    logits = softmax[0].input[0]
    feeds = _light_feeds(model)
    # declared with its shape (dnnx's load checks outputs with shapes), found from onnxruntime's run
    typed = onnx.ModelProto()
    typed.CopyFrom(model)
    typed.graph.output.append(onnx.helper.make_tensor_value_info(logits, onnx.TensorProto.FLOAT, None))
    want = ort.InferenceSession(typed.SerializeToString(), providers=["CPUExecutionProvider"]).run([logits], feeds)[0]
    del typed.graph.output[-1]
    typed.graph.output.append(onnx.helper.make_tensor_value_info(logits, onnx.TensorProto.FLOAT, want.shape))
    got = dnnx.load(typed).run_dict(feeds)[logits]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=0)


def _tensors(folder: str, kind: str) -> list:
    """input_0.pb, input_1.pb, ... (or output_*) in index order, as numpy arrays."""
    paths = glob.glob(os.path.join(folder, f"{kind}_*.pb"))
    paths.sort(key=lambda p: int(os.path.basename(p)[len(kind) + 1:-len(".pb")]))
    return [numpy_helper.to_array(onnx.load_tensor(p)) for p in paths]


def _pytorch_cases():
    params = []
    for case in sorted(load_model_tests(kind="pytorch-converted"), key=lambda c: c.name):
        marks = [pytest.mark.skip(reason=PYTORCH_EXCLUDED[case.name])] if case.name in PYTORCH_EXCLUDED else []
        params.append(pytest.param(case, marks=marks, id=case.name))
    return params


@pytest.mark.parametrize("case", _pytorch_cases())
def test_pytorch_converted(case):
    m = dnnx.load(os.path.join(case.model_dir, "model.onnx"))
    data_sets = sorted(glob.glob(os.path.join(case.model_dir, "test_data_set_*")))
    assert data_sets, f"{case.name}: no test data"
    for data in data_sets:
        inputs, expected = _tensors(data, "input"), _tensors(data, "output")
        outputs = list(m.run_dict(*inputs).values())
        assert len(outputs) == len(expected)
        for got, want in zip(outputs, expected):
            assert got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=case.rtol, atol=case.atol)


def test_pytorch_exclusions_name_existing_cases():
    names = {case.name for case in load_model_tests(kind="pytorch-converted")}
    assert set(PYTORCH_EXCLUDED) <= names and all(PYTORCH_EXCLUDED.values())


def test_legacy_prelu_upgrade_leaves_the_callers_model_alone():
    """Opset 6 PRelu with a per-channel slope [3] (test_PReLU_2d_multiparam): the importer reshapes
    the slope in a copy before onnx's version converter, not in the ModelProto it was given."""
    case = next(c for c in load_model_tests(kind="pytorch-converted") if c.name == "test_PReLU_2d_multiparam")
    model = onnx.load(os.path.join(case.model_dir, "model.onnx"))
    before = model.SerializeToString()
    x = _tensors(os.path.join(case.model_dir, "test_data_set_0"), "input")[0]
    slope = numpy_helper.to_array(model.graph.initializer[0])
    got = dnnx.load(model).run(x)
    np.testing.assert_allclose(got, np.where(x > 0, x, x * slope.reshape(1, -1, 1, 1)), rtol=1e-6, atol=0)
    assert model.SerializeToString() == before
