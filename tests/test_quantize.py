"""dnnx's own int8 (docs/precision.md, "int8"): dnnx.quantize writes a QDQ file calibrated by
dnnx's own runs, with a per-layer accuracy guard; onnxruntime runs the file to the same
predictions; dnnx.load(precision="int8") quantizes in memory. The trained MNIST models run on the
real MNIST test set and the zoo's models on a seeded batch, where ../shared is present."""
import gzip
import json
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import dnnx
from dnnx._quant_ranges import value_range
from dnnx._quant_report import METADATA_KEY
from ort_check import ort_int8_exact, qdq_reference_session
from dnnx.cli import main
from dnnx.examples import build

EXTERNAL = Path(__file__).resolve().parents[2] / "shared" / "external"
MODELS = EXTERNAL / "models"
CALIBRATION_ROWS = 500  # MNIST images the MNIST models are calibrated on (the first ones of the test set)


def need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"{path} is not here (the shared external models are optional)")
    return path


def mnist():
    """All 10,000 MNIST t10k images (float32 [10000, 1, 28, 28], 0..255) and their labels."""
    with gzip.open(need(EXTERNAL / "data" / "t10k-images-idx3-ubyte.gz"), "rb") as f:
        images = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 1, 28, 28).astype(np.float32)
    with gzip.open(need(EXTERNAL / "data" / "t10k-labels-idx1-ubyte.gz"), "rb") as f:
        labels = np.frombuffer(f.read(), np.uint8, offset=8)
    return images, labels


def in_batches(run, images, batch):
    return np.concatenate([run(images[i:i + batch]) for i in range(0, len(images), batch)])


def ort_session(path_or_proto):
    data = path_or_proto.SerializeToString() if isinstance(path_or_proto, onnx.ModelProto) else str(path_or_proto)
    return qdq_reference_session(data)


def ort_run(session, x):
    return session.run(None, {session.get_inputs()[0].name: x})[0]


def op_counts(proto) -> dict:
    counts = {}
    for node in proto.graph.node:
        counts[node.op_type] = counts.get(node.op_type, 0) + 1
    return counts


# --- the trained MNIST models on the real test set ---------------------------------------------

@pytest.mark.parametrize("file, scale, batch", [
    ("mnist-8/model.onnx", 1.0, 1),                 # raw 0..255, batch fixed at 1, opset 8 (upgraded to 13)
    ("lenet5_mnist_b10.onnx", 255.0, 10),           # batch fixed at 10
    ("lenet5_bn_mnist_b10.onnx", 255.0, 10),
    ("lenet5_mnist_dynbatch.onnx", 255.0, 1000),
])
def test_mnist_int8_accuracy_and_onnxruntime_agreement(tmp_path, file, scale, batch):
    images, labels = mnist()
    x = images / np.float32(scale)
    src = need(MODELS / file)
    out = tmp_path / "int8.onnx"
    report = dnnx.quantize(src, out, calibration=x[:CALIBRATION_ROWS], show_progress=False)
    assert report.int8_layers, str(report)
    written = onnx.load(str(out))
    counts = op_counts(written)
    assert counts.get("QuantizeLinear", 0) >= 1 and counts.get("DequantizeLinear", 0) >= 2 * len(report.int8_layers)

    fp32 = in_batches(dnnx.load(src).run, x, batch).argmax(1)
    int8 = in_batches(dnnx.load(out).run, x, batch).argmax(1)
    session = ort_session(out)
    onnxruntime = in_batches(lambda b: ort_run(session, b), x, batch).argmax(1)
    fp32_accuracy, int8_accuracy = np.mean(fp32 == labels), np.mean(int8 == labels)
    assert abs(int8_accuracy - fp32_accuracy) <= 0.005, (fp32_accuracy, int8_accuracy)
    assert np.mean(onnxruntime == int8) >= 0.99, np.mean(onnxruntime == int8)


def test_load_int8_quantizes_in_memory_as_quantize_writes(tmp_path):
    images, labels = mnist()
    x = images[:2000] / np.float32(255.0)
    src = need(MODELS / "lenet5_mnist_dynbatch.onnx")
    model = dnnx.load(src, precision="int8", calibration=x[:CALIBRATION_ROWS])
    assert model.precision == "int8" and model.int8_report.int8_layers
    dnnx.quantize(src, tmp_path / "q.onnx", calibration=x[:CALIBRATION_ROWS], show_progress=False)
    from_file = dnnx.load(tmp_path / "q.onnx")
    np.testing.assert_array_equal(model.run(x), from_file.run(x))  # the same quantization, the same kernels


# --- the zoo's image models on a seeded batch --------------------------------------------------

def zoo_model(name, side):
    """The zoo's `name` with its weights materialized, its input [N, 3, side, side] (the models pool
    globally: a smaller image keeps the test to a few seconds)."""
    folder = need(EXTERNAL / "zoo")
    sys.path.insert(0, str(folder))
    try:
        from zoo_models import materialized
    finally:
        sys.path.remove(str(folder))
    model = materialized(str(need(folder / f"{name}.onnx")))
    for dim in model.graph.input[0].type.tensor_type.shape.dim[2:]:
        dim.dim_value = side
    return model


@pytest.mark.parametrize("name", ["resnet18", "mobilenet_v2"])
def test_zoo_int8_top1_agrees_with_fp32(tmp_path, name):
    model = zoo_model(name, 112)
    rng = np.random.default_rng(0)
    calibration = rng.standard_normal((4, 3, 112, 112)).astype(np.float32)
    batch = rng.standard_normal((16, 3, 112, 112)).astype(np.float32)
    report = dnnx.quantize(model, tmp_path / "q.onnx", calibration=calibration, show_progress=False)
    convs = [row for row in report.layers if row.op == "Conv"]
    assert sum(row.precision == "int8" for row in convs) >= 0.6 * len(convs), str(report)
    fp32 = dnnx.load(model).run(batch)
    int8 = dnnx.load(tmp_path / "q.onnx").run(batch)
    assert np.mean(fp32.argmax(1) == int8.argmax(1)) >= 0.8
    relative = np.sqrt(np.mean((int8 - fp32) ** 2) / np.mean(fp32 ** 2))
    assert relative < 0.05, relative
    session = ort_session(tmp_path / "q.onnx")
    agree = np.mean(ort_run(session, batch).argmax(1) == int8.argmax(1))
    # onnxruntime's int8 kernels compute what dnnx does where they are exact; elsewhere its session
    # runs the QDQ graph in float (qdq_reference_session), whose near-ties may fall the other way
    assert agree == 1.0 if ort_int8_exact() else agree >= 15 / 16, agree


# --- calibration methods ------------------------------------------------------------------------

def test_ranges_of_each_method():
    rng = np.random.default_rng(0)
    values = np.concatenate([rng.standard_normal(200_000).astype(np.float32), [40.0, -30.0]])
    assert value_range(values, "minmax") == (-30.0, 40.0)
    low, high = value_range(values, "percentile")
    assert -6.0 < low < -3.0 and 3.0 < high < 6.0  # the two outliers no longer set the range
    low, high = value_range(values, "entropy")
    assert -30.0 < low < 0.0 < high < 40.0
    relu = np.maximum(values, 0)  # half the values exactly 0: Note [entropy calibration]
    low, high = value_range(relu, "entropy")
    assert low == 0.0 and 2.0 < high < 40.0
    assert value_range(np.zeros(10, np.float32), "minmax") == (0.0, 0.0)


@pytest.mark.parametrize("method", ["minmax", "percentile", "entropy"])
def test_each_calibration_method_writes_a_model_onnxruntime_runs_alike(tmp_path, method):
    model = build("lenet")
    rng = np.random.default_rng(1)
    calibration = rng.random((64, 1, 28, 28), dtype=np.float32)
    x = rng.random((32, 1, 28, 28), dtype=np.float32)
    out = tmp_path / f"{method}.onnx"
    report = dnnx.quantize(model, out, calibration=calibration, calibration_method=method, int8_tolerance=0.05,
                           show_progress=False)
    written = onnx.load(str(out))
    settings = json.loads({p.key: p.value for p in written.metadata_props}["dnnx.int8.settings"])
    assert settings["calibration_method"] == method and report.int8_layers
    dnnx_out = dnnx.load(out).run(x)
    ort_out = ort_run(ort_session(out), x)
    # Both engines run the same integer grid: they differ at most by a value rounded across one step.
    np.testing.assert_allclose(dnnx_out, ort_out, atol=0.02 * np.abs(ort_out).max())
    assert np.mean(dnnx_out.argmax(1) == ort_out.argmax(1)) >= 0.95


def test_per_tensor_weights(tmp_path):
    model = build("lenet")
    calibration = np.random.default_rng(2).random((16, 1, 28, 28), dtype=np.float32)
    report = dnnx.quantize(model, tmp_path / "q.onnx", calibration=calibration, per_channel=False,
                           int8_tolerance=1.0, show_progress=False)
    written = onnx.load(str(tmp_path / "q.onnx"))
    scales = {t.name: numpy_helper.to_array(t) for t in written.graph.initializer if t.name.endswith("_scale")}
    assert report.int8_layers and all(s.ndim == 0 for s in scales.values())


# --- the accuracy guard -------------------------------------------------------------------------

def two_layer_model(bad: bool) -> onnx.ModelProto:
    """x [N, 64] -> Gemm "good" (64 -> 32) -> Relu -> Gemm "bad" (32 -> 16): with ``bad``, each
    output channel of the second weight holds one weight 1000x the others (on an input that is
    always 0, so fp32's output does not feel it), so that channel's int8 scale rounds every other
    weight of it to 0: the int8 layer's output is lost."""
    rng = np.random.default_rng(3)
    w1 = rng.standard_normal((32, 64)).astype(np.float32) / 8
    w2 = rng.standard_normal((16, 32)).astype(np.float32) / 6
    if bad:
        w1[0] = 0.0        # feature 0 of "r" is always 0 ...
        w2[:, 0] = 1000.0  # ... and its weight sets every channel's int8 scale
    nodes = [helper.make_node("Gemm", ["x", "w1"], ["h"], name="good", transB=1),
             helper.make_node("Relu", ["h"], ["r"], name="relu"),
             helper.make_node("Gemm", ["r", "w2"], ["y"], name="bad", transB=1)]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 64])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 16])],
                              [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_guard_leaves_a_bad_layer_in_float(tmp_path):
    x = np.random.default_rng(4).standard_normal((128, 64)).astype(np.float32)
    out = tmp_path / "q.onnx"
    report = dnnx.quantize(two_layer_model(bad=True), out, calibration=x, show_progress=False)
    rows = report.decisions()
    assert rows["good"].precision == "int8" and rows["good"].error <= 0.01
    assert rows["bad"].precision == "fp32" and rows["bad"].error > 0.01 and "int8_tolerance" in rows["bad"].why
    written = onnx.load(str(out))
    nodes = {n.name: n for n in written.graph.node}
    assert nodes["good"].input[0].endswith("_DequantizeLinear_Output")
    assert list(nodes["bad"].input) == ["r", "w2"]  # float, as it was
    recorded = json.loads({p.key: p.value for p in written.metadata_props}[METADATA_KEY])
    assert [(r["name"], r["precision"]) for r in recorded] == [("good", "int8"), ("bad", "fp32")]
    text = str(report)
    assert "bad" in text and "kept in fp32" in text and "1 of 2 layer(s) int8" in text
    np.testing.assert_allclose(dnnx.load(out).run(x), ort_run(ort_session(out), x), rtol=1e-4, atol=1e-3)
    # the same layer passes where the tolerance allows its error, and a sound one passes at 1 %
    loose = dnnx.quantize(two_layer_model(bad=True), out, calibration=x, int8_tolerance=10.0, show_progress=False)
    assert loose.decisions()["bad"].precision == "int8"
    sound = dnnx.quantize(two_layer_model(bad=False), out, calibration=x, show_progress=False)
    assert [r.precision for r in sound.layers] == ["int8", "int8"]


def test_plan_shows_each_layers_precision_and_error():
    x = np.random.default_rng(5).standard_normal((64, 64)).astype(np.float32)
    model = dnnx.load(two_layer_model(bad=True), precision="int8", calibration=x)
    plan = model.plan()
    rows = {r["name"]: r for r in plan}
    assert rows["good"]["precision"].startswith("int8") and "error" in rows["good"]["precision"]
    assert rows["bad"]["precision"].startswith("fp32 (kept in fp32: error")
    assert "bad: fp32 (kept in fp32" in str(plan)


# --- arguments, files and the CLI ---------------------------------------------------------------

@pytest.mark.parametrize("kwargs, named", [
    ({"calibration": None}, "calibration"),
    ({"calibration_method": "kl"}, "calibration_method"),
    ({"per_channel": "yes"}, "per_channel"),
    ({"int8_tolerance": -0.1}, "int8_tolerance"),
    ({"int8_tolerance": float("nan")}, "int8_tolerance"),
    ({"int8_tolerance": "1%"}, "int8_tolerance"),
    ({"calibration": [np.zeros((4, 64), np.float32)] * 2}, "calibration"),
    ({"calibration": np.zeros((0, 64), np.float32)}, "calibration"),
])
def test_bad_arguments_name_the_argument(tmp_path, kwargs, named):
    args = dict(calibration=np.zeros((4, 64), np.float32), show_progress=False)
    args.update(kwargs)
    with pytest.raises(ValueError, match=named):
        dnnx.quantize(two_layer_model(bad=False), tmp_path / "q.onnx", **args)
    assert not list(tmp_path.iterdir())  # nothing written, no temporary file left


def test_bad_load_arguments_name_the_argument(tmp_path):
    model = two_layer_model(bad=False)
    with pytest.raises(ValueError, match="calibration"):
        dnnx.load(model, precision="int8")
    with pytest.raises(ValueError, match="int8_tolerance"):
        dnnx.load(model, int8_tolerance=0.02)
    if not dnnx.cuda_available():  # int8 runs on CUDA too: an absent GPU says so before calibrating
        with pytest.raises(dnnx.DeviceError, match="not available"):
            dnnx.load(model, device="cuda", precision="int8", calibration=np.zeros((4, 64), np.float32))
    with pytest.raises(ValueError, match="out_path"):
        dnnx.quantize(model, tmp_path / "missing" / "q.onnx", calibration=np.zeros((4, 64), np.float32))
    fixed = build("lenet")
    fixed.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 10  # a batch fixed at 10
    with pytest.raises(ValueError, match="calibration: .*multiple of 10"):
        dnnx.quantize(fixed, tmp_path / "q.onnx", calibration=np.zeros((15, 1, 28, 28), np.float32))


def test_cli_quantize_writes_the_file_and_prints_the_guard(tmp_path, capsys):
    onnx.save(build("lenet"), str(tmp_path / "lenet.onnx"))
    np.save(tmp_path / "cal.npy", np.random.default_rng(6).random((32, 1, 28, 28), dtype=np.float32))
    out = tmp_path / "lenet.int8.onnx"
    argv = ["quantize", str(tmp_path / "lenet.onnx"), "--out", str(out), "--calibration", str(tmp_path / "cal.npy")]
    assert main(argv + ["--method", "percentile", "--tolerance", "0.05"]) == 0
    printed = capsys.readouterr().out
    assert "precision" in printed and "percentile calibration" in printed and f"wrote {out}" in printed
    assert op_counts(onnx.load(str(out))).get("QuantizeLinear", 0) >= 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cal.npy", "lenet.int8.onnx", "lenet.onnx"]
    assert main(argv[:3] + [str(tmp_path / "nowhere" / "q.onnx")] + argv[4:]) == 2
    assert "--out: folder not found" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(argv + ["--tolerance", "-1"])
