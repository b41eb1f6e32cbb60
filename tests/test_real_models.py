"""The published models in the shared folder that need this engine's newer ops, against the
onnxruntime outputs stored next to them (all 10,000 MNIST test predictions where there are):
LeNet-5 with BatchNormalization, SqueezeNet (GlobalAveragePool, NHWC Transpose), PyTorch's LSTM
export (Shape/Gather/ConstantOfShape/Slice, folded at import) and mnist-8 (batch 1 baked into a
Reshape) at other batch sizes. Skipped where the shared folder is absent."""
import gzip
from pathlib import Path

import numpy as np
import pytest

import dnnx

SHARED = Path(__file__).resolve().parents[2] / "shared"
MODELS = SHARED / "external" / "models"
REFERENCE = MODELS / "ort_reference"
DATA = SHARED / "external" / "data"

def need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"{path} is not here (the shared external models are optional)")
    return path


def mnist_images() -> np.ndarray:
    """All 10,000 t10k images, float32 [10000, 1, 28, 28] in [0, 1] (x / 255, as these models expect)."""
    with gzip.open(need(DATA / "t10k-images-idx3-ubyte.gz"), "rb") as f:
        header = np.frombuffer(f.read(16), dtype=">u4")
        count, rows, cols = int(header[1]), int(header[2]), int(header[3])
        pixels = np.frombuffer(f.read(count * rows * cols), dtype=np.uint8)
    return (pixels.reshape(count, 1, rows, cols) / np.float32(255.0)).astype(np.float32)


def run_batches(model, images, batch, prepare=lambda b: b, pad_to=None):
    """Runs images in batches; a short last batch is zero-padded to `pad_to` and cut back."""
    outs = []
    for i in range(0, len(images), batch):
        chunk = images[i:i + batch]
        n = len(chunk)
        if pad_to and n < pad_to:
            chunk = np.concatenate([chunk, np.zeros((pad_to - n,) + chunk.shape[1:], chunk.dtype)])
        outs.append(model.run(prepare(chunk))[:n])
    return np.concatenate(outs)


def check_mnist(got, stem):
    ref = np.load(need(REFERENCE / f"{stem}.npz"))
    assert str(ref["preprocessing"]) == "div255_0_1"
    np.testing.assert_allclose(got[:100], ref["logits_first100"], rtol=1e-4, atol=1e-4)
    # fp32 summation order may flip a near-tie; none does today, allow at most 2 of 10,000.
    assert (got.argmax(axis=1) != ref["pred_all_10000"]).sum() <= 2


def test_lenet5_batchnorm_all_10000():
    model = dnnx.load(need(MODELS / "lenet5_bn_mnist_b10.onnx"))
    assert "BatchNormalization" in {row["op"] for row in model.plan()}
    check_mnist(run_batches(model, mnist_images(), 10), "lenet5_bn_mnist_b10")


def rows_as_steps(batch):
    """[B, 1, 28, 28] images -> [28 steps, B, 28 pixels] (image rows as time steps)."""
    return np.ascontiguousarray(batch[:, 0].transpose(1, 0, 2))


@pytest.mark.parametrize("file", ["lstm_mnist_rows_b128.onnx", "derived/lstm_mnist_rows_b128.folded.onnx"])
def test_pytorch_lstm_export_all_10000(file):
    model = dnnx.load(need(MODELS / file))
    # PyTorch's shape arithmetic all folded, at import (the .folded file) or per plan
    ops = [row["op"] for row in model.plan() if not row["algorithm"].startswith("folded at plan time")]
    assert ops == ["LSTM", "Squeeze", "Gather", "Gemm", "LogSoftmax"], ops
    check_mnist(run_batches(model, mnist_images(), 128, rows_as_steps, pad_to=128), "lstm_mnist_rows_b128")


def test_squeezenet_nhwc_matches_stored_output():
    ref = np.load(need(REFERENCE / "squeezenet_cifar10_nhwc.npz"))
    model = dnnx.load(need(MODELS / "squeezenet_cifar10_nhwc.onnx"))
    np.testing.assert_allclose(model.run(ref["input"]), ref["output"], rtol=1e-4, atol=1e-5)
    # the model's own layout Transposes; on a CPU with the channels-last convs (Note [channels-last
    # conv on the cpu]) its pools run as "<op>@NHWC" and its Transpose to NCHW is a view (Identity)
    ops = {row["op"].split("@")[0] for row in model.plan()}
    assert {"GlobalAveragePool", "Concat"} <= ops and ops & {"Transpose", "Identity"}


def test_mnist8_plan_has_its_bias_adds_folded():
    # CNTK's export keeps each conv's bias as a broadcast Add (Plus30, Plus112): fold_conv_add puts
    # them back in the convs, whose Relus then fuse
    plan = dnnx.load(need(MODELS / "mnist-8" / "model.onnx")).plan()
    assert [r["op"] for r in plan if r["op"] in ("Add", "Relu", "Conv", "Conv+Relu")] == ["Conv+Relu", "Conv+Relu"], plan


@pytest.mark.parametrize("batch", [8, 25])
def test_mnist8_batch_1_export_runs_at_other_batch_sizes(batch):
    ref = np.load(need(REFERENCE / "mnist-8.npz"))
    images = mnist_images()[:100] * np.float32(255.0)  # mnist-8 takes raw 0..255 pixels
    model = dnnx.load(need(MODELS / "mnist-8" / "model.onnx"), batch_size=batch)
    got = run_batches(model, images, batch, pad_to=batch)
    np.testing.assert_allclose(got, ref["logits_first100"], rtol=1e-4, atol=1e-2)
    np.testing.assert_array_equal(got.argmax(axis=1), ref["pred_all_10000"][:100])
