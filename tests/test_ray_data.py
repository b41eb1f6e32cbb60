"""dnnx on a local Ray cluster (ray.init(num_cpus=2), one per module): Ray Data's map_batches with
dnnx.ray on the real MNIST test set (mnist-8, batch fixed at 1; the PyTorch LeNet-5 with a dynamic
batch) equals a direct run and keeps the labels alongside; a model that cannot load on a worker is
one clear error; `dnnx run --ray` over a folder with a corrupt file and a worker killed mid-way.
Actors ask for half a CPU: whole ones would starve Ray Data's own tasks on a 2-CPU cluster."""
import gzip
import time
from pathlib import Path

import numpy as np
import onnx
import pytest

pytest.importorskip("ray")
pytest.importorskip("ray.data")

import dnnx  # noqa: E402
import dnnx.ray  # noqa: E402
from dnnx.cli import main  # noqa: E402
from dnnx.cli._many import KILL_ONCE  # noqa: E402
from dnnx.examples import build  # noqa: E402
from ort_check import rand  # noqa: E402
from ray_cluster import start_ray  # noqa: E402

EXTERNAL = Path(__file__).resolve().parents[2] / "shared" / "external"
ACTOR = {"num_cpus": 0.5}


def need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"{path} is not here (the shared external models and data are optional)")
    return path


def mnist():
    """(images float32 [10000, 1, 28, 28] with pixel values 0..255, labels int64 [10000])."""
    with gzip.open(need(EXTERNAL / "data" / "t10k-images-idx3-ubyte.gz"), "rb") as f:
        count, rows, cols = (int(v) for v in np.frombuffer(f.read(16), dtype=">u4")[1:])
        images = np.frombuffer(f.read(), dtype=np.uint8).reshape(count, 1, rows, cols).astype(np.float32)
    with gzip.open(need(EXTERNAL / "data" / "t10k-labels-idx1-ubyte.gz"), "rb") as f:
        labels = np.frombuffer(f.read()[8:], dtype=np.uint8).astype(np.int64)
    return images, labels


@pytest.fixture(scope="module")
def ray():
    module, restore = start_ray()
    module.data.DataContext.get_current().enable_progress_bars = False
    yield module
    restore()


def dataset(ray, images, labels):
    """A Ray dataset with a tensor column "image", and "label" and "id" beside it."""
    import pyarrow as pa
    from ray.data.extensions import ArrowTensorArray

    table = pa.table({"image": ArrowTensorArray.from_numpy(images), "label": labels, "id": np.arange(len(labels))})
    return ray.data.from_arrow(table).repartition(4)  # blocks for both actors


def collect(ds, column):
    """{column, label} in id order (Ray Data does not keep the order by default)."""
    batches = list(ds.iter_batches(batch_format="numpy", batch_size=None))
    ids = np.concatenate([b["id"] for b in batches])
    order = np.argsort(ids)
    assert (ids[order] == np.arange(len(ids))).all()  # every row once
    return np.concatenate([b[column] for b in batches])[order], np.concatenate([b["label"] for b in batches])[order]


def test_map_batches_with_mnist8_equals_a_direct_run(ray):
    images, labels = mnist()
    path = need(EXTERNAL / "models" / "mnist-8" / "model.onnx")
    ds = dataset(ray, images, labels).map_batches(
        dnnx.ray.Predictor, fn_constructor_kwargs={"model": str(path), "input_columns": "image",
                                                   "output_columns": "logits", "threads": 1},
        batch_format="numpy", batch_size=500, compute=ray.data.ActorPoolStrategy(size=2), **ACTOR)
    logits, got_labels = collect(ds, "logits")
    model = dnnx.load(path)  # batch fixed at 1: the actors run one row at a time, as this loop does
    want = np.concatenate([model.run(images[i:i + 1]) for i in range(len(images))])
    np.testing.assert_array_equal(logits, want)
    np.testing.assert_array_equal(got_labels, labels)
    assert (logits.argmax(axis=1) == labels).mean() == pytest.approx(0.9891, abs=5e-4)  # PROVENANCE.md's 98.91 %


def test_predict_with_the_pytorch_lenet_equals_a_direct_run(ray):
    images, labels = mnist()
    images /= np.float32(255.0)
    model = dnnx.load(need(EXTERNAL / "models" / "lenet5_mnist_dynbatch.onnx"))  # a Model travels as it is
    output = model.outputs[0].name
    ds = dnnx.ray.predict(dataset(ray, images, labels), model, input_columns="image", batch_size=1000, workers=2,
                          num_cpus=0.5, chunk_size=256)
    got, got_labels = collect(ds, output)
    want = model.run(images)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)  # chunks of 256 rows: other GEMM shapes
    assert (got.argmax(axis=1) == want.argmax(axis=1)).all()
    np.testing.assert_array_equal(got_labels, labels)
    assert (got.argmax(axis=1) == labels).mean() == pytest.approx(0.9813, abs=5e-4)  # PROVENANCE.md's 98.13 %


def test_a_model_that_cannot_load_on_a_worker_is_one_clear_error_not_a_hang(ray):
    ds = ray.data.from_numpy(rand(8, 1, 28, 28))
    start = time.monotonic()
    with pytest.raises(Exception) as caught:
        dnnx.ray.predict(ds, b"not an onnx model", workers=1, num_cpus=0.5).materialize()
    assert time.monotonic() - start < 120
    assert "could not be loaded on worker" in str(caught.value) and "InvalidModelError" in str(caught.value)
    with pytest.raises(ValueError, match="this cluster has none"):  # a GPU ask no actor could ever get
        dnnx.ray.predict(ds, b"", device="cuda")


def test_dnnx_run_on_ray_survives_a_killed_worker_and_skips_a_corrupt_file(ray, tmp_path, capsys, monkeypatch):
    lenet = tmp_path / "lenet.onnx"
    onnx.save(build("lenet", seed=0), lenet)
    folder, out_dir = tmp_path / "in", tmp_path / "out"
    folder.mkdir()
    arrays = {f"x{i:02d}": rand(1 + i % 3, 1, 28, 28, seed=i) for i in range(12)}
    for name, x in arrays.items():
        np.save(folder / f"{name}.npy", x)
    (folder / "corrupt.npz").write_bytes(b"PK\x03\x04 not a zip")
    marker = tmp_path / "killed"
    monkeypatch.setenv(KILL_ONCE, str(marker))  # the first task to get here kills its worker (SIGKILL)
    status = main(["run", str(lenet), "--input", str(folder), "--output", str(out_dir), "--ray", "local",
                   "--workers", "2"])
    out, err = capsys.readouterr()
    assert marker.exists()  # a worker was killed, and its task retried by Ray
    assert status == 2 and "12 of 13 file(s) written" in out and "1 skipped" in out
    skipped = [line for line in err.splitlines() if line.startswith("dnnx run: skipped")]
    assert len(skipped) == 1 and "corrupt.npz: ValueError:" in skipped[0], err
    assert sorted(p.name for p in out_dir.iterdir()) == sorted(f"{n}.npz" for n in arrays)  # no temporaries
    model = dnnx.load(lenet)
    for name, x in arrays.items():
        with np.load(out_dir / f"{name}.npz") as got:
            np.testing.assert_array_equal(got["probs"], model.run(x))
