"""Whole models end to end: the example models dnnx builds (against onnxruntime) and, where the
shared folder is present, real published models (against their own test data or stored
onnxruntime outputs). Models that need ops outside dnnx's set must fail at load, naming the op."""
import gzip
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

import dnnx
from dnnx.examples import BUILDERS, build
from dnnx.examples.lstm_classifier import FEATURES, STEPS
from ort_check import assert_matches_ort, rand

EXTERNAL = Path(__file__).resolve().parents[2] / "shared" / "external"
MODELS = EXTERNAL / "models"
REFERENCE = MODELS / "ort_reference"


def example_input(name, batch, seed=0):
    """The examples' input "x": LeNet's is [N, 1, 28, 28], the LSTM classifier's time-major [T, N, F]."""
    if name == "lstm":
        return rand(STEPS, batch, FEATURES, seed=seed)
    return rand(batch, 1, 28, 28, seed=seed)


# --- the example models -----------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(BUILDERS))
@pytest.mark.parametrize("batch", [1, 5])
def test_example_matches_onnxruntime(name, batch):
    model = build(name, seed=0)
    got = assert_matches_ort(model, {"x": example_input(name, batch)})
    probs = got["probs"]
    assert probs.shape == (batch, 10)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-5)


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_example_uses_only_supported_ops_and_a_symbolic_batch(name):
    model = build(name)
    onnx.checker.check_model(model, full_check=True)
    assert {n.op_type for n in model.graph.node} <= set(dnnx.supported_ops())
    dims = [d.dim_param for d in model.graph.input[0].type.tensor_type.shape.dim]
    assert "N" in dims
    assert model.opset_import[0].version == 17


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_example_weights_follow_the_seed(name):
    assert build(name, seed=3).SerializeToString() == build(name, seed=3).SerializeToString()
    a = {t.name: numpy_helper.to_array(t) for t in build(name, seed=3).graph.initializer}
    b = {t.name: numpy_helper.to_array(t) for t in build(name, seed=4).graph.initializer}
    floats = [k for k in a if a[k].dtype == np.float32]
    assert floats and all(not np.array_equal(a[k], b[k]) for k in floats)


def test_lenet_weights_are_he_initialised():
    weights = {t.name: numpy_helper.to_array(t) for t in build("lenet", seed=0).graph.initializer}
    w = weights["fc1.w"]  # [500, 800]: enough samples for the std to be within a few percent
    assert abs(w.std() - np.sqrt(2.0 / 800)) < 0.03 * np.sqrt(2.0 / 800)


def test_unknown_example_name():
    with pytest.raises(ValueError, match="unknown example model 'resnet'"):
        build("resnet")


# --- real models from the shared folder -------------------------------------------------------

def need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"{path} is not here (the shared external models are optional)")
    return path


def mnist_images(count: int) -> np.ndarray:
    """The first ``count`` MNIST t10k images as float32 [count, 1, 28, 28], pixel values 0..255."""
    with gzip.open(need(EXTERNAL / "data" / "t10k-images-idx3-ubyte.gz"), "rb") as f:
        header = np.frombuffer(f.read(16), dtype=">u4")
        assert header[0] == 2051, "not an idx3 image file"
        rows, cols = int(header[2]), int(header[3])
        pixels = np.frombuffer(f.read(count * rows * cols), dtype=np.uint8)
    return pixels.reshape(count, 1, rows, cols).astype(np.float32)


def mnist_reference(stem: str):
    """(images preprocessed as the model expects, onnxruntime's logits, its argmax) for 100 images."""
    ref = np.load(need(REFERENCE / f"{stem}.npz"))
    images = mnist_images(100)
    if str(ref["preprocessing"]) == "div255_0_1":
        images = images / 255.0
    else:
        assert str(ref["preprocessing"]) == "raw_0_255"
    return images.astype(np.float32), ref["logits_first100"], ref["pred_all_10000"][:100]


def run_in_batches(model, images, batch):
    return np.concatenate([model.run(images[i:i + batch]) for i in range(0, len(images), batch)])


@pytest.mark.parametrize("case", ["test_data_set_0", "test_data_set_1", "test_data_set_2"])
def test_mnist8_zoo_test_data(case):
    folder = need(MODELS / "mnist-8" / case)
    x = numpy_helper.to_array(onnx.load_tensor(str(folder / "input_0.pb")))
    want = numpy_helper.to_array(onnx.load_tensor(str(folder / "output_0.pb")))
    got = dnnx.load(MODELS / "mnist-8" / "model.onnx").run(x)
    # Logits are in the thousands (raw 0..255 pixels): the tolerance is relative.
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-2)
    assert got.argmax() == want.argmax()


@pytest.mark.parametrize("stem, file, batch", [
    ("mnist-8", "mnist-8/model.onnx", 1),              # batch fixed at 1
    ("lenet5_mnist_b10", "lenet5_mnist_b10.onnx", 10),  # batch fixed at 10
    ("lenet5_mnist_dynbatch", "lenet5_mnist_dynbatch.onnx", 100),
])
def test_mnist_models_match_stored_onnxruntime_logits(stem, file, batch):
    images, logits, preds = mnist_reference(stem)
    got = run_in_batches(dnnx.load(need(MODELS / file)), images, batch)
    np.testing.assert_allclose(got, logits, rtol=1e-4, atol=1e-3)
    np.testing.assert_array_equal(got.argmax(axis=1), preds)


def test_dynbatch_lenet_with_batch_size_override_matches_onnxruntime():
    model = onnx.load(str(need(MODELS / "lenet5_mnist_dynbatch.onnx")))
    x = mnist_images(7) / np.float32(255.0)
    assert_matches_ort(model, {"input": x}, rtol=1e-4, atol=1e-4, batch_size=7)


def test_cifar10_winml_matches_stored_onnxruntime_output():
    ref = np.load(need(REFERENCE / "cifar10_imageclassifier_winml.npz"))
    got = dnnx.load(need(MODELS / "cifar10_imageclassifier_winml.onnx")).run(ref["input"])
    np.testing.assert_allclose(got, ref["output"], rtol=1e-4, atol=1e-4)
