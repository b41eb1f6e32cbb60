"""`dnnx run MODEL --input DIR_OR_GLOB --output DIR [--workers N]` without Ray (dnnx/cli/_many.py):
every file's output equals a direct run, a bad file is reported and skipped, outputs are named
after their inputs and rewritten in place by a second run. The Ray variant: test_ray_data.py."""
import os
from pathlib import Path

import numpy as np
import onnx
import pytest

import dnnx
from dnnx.cli import main
from dnnx.examples import build
from ort_check import rand

BATCHES = (1, 3, 2, 5)  # rows per good file: each file is a run of its own batch size


@pytest.fixture(scope="module")
def lenet(tmp_path_factory):
    path = tmp_path_factory.mktemp("models") / "lenet.onnx"
    onnx.save(build("lenet", seed=0), path)
    return path


@pytest.fixture
def inputs(tmp_path):
    """A folder of .npy and .npz files, one corrupt and one of the wrong dtype, and a README."""
    folder = tmp_path / "in"
    folder.mkdir()
    arrays = {}
    for i, rows in enumerate(BATCHES):
        x = rand(rows, 1, 28, 28, seed=i)
        arrays[f"img{i}"] = x
        if i % 2:
            np.savez(folder / f"img{i}.npz", x=x)
        else:
            np.save(folder / f"img{i}.npy", x)
    (folder / "broken.npy").write_bytes(b"\x93NUMPY this is not an array")
    np.save(folder / "doubles.npy", rand(2, 1, 28, 28).astype(np.float64))
    (folder / "README.txt").write_text("not an input")
    return folder, arrays


def check_outputs(out_dir: Path, arrays: dict, lenet) -> None:
    model = dnnx.load(lenet)
    written = sorted(p.name for p in out_dir.iterdir())
    assert written == sorted(f"{name}.npz" for name in arrays)  # no temporaries, nothing for the bad files
    for name, x in arrays.items():
        with np.load(out_dir / f"{name}.npz") as got:
            assert list(got.files) == ["probs"]
            np.testing.assert_array_equal(got["probs"], model.run(x))  # same model, same batch: bitwise


@pytest.mark.parametrize("workers", [None, 2])
def test_a_folder_runs_every_file_and_skips_the_bad_ones(lenet, inputs, tmp_path, capsys, workers):
    folder, arrays = inputs
    out_dir = tmp_path / "out"
    extra = ["--workers", str(workers)] if workers else []
    status = main(["run", str(lenet), "--input", str(folder), "--output", str(out_dir)] + extra)
    out, err = capsys.readouterr()
    assert status == 2  # some files were skipped
    assert f"4 of 6 file(s) written to {out_dir}; 2 skipped" in out
    skipped = sorted(line for line in err.splitlines() if line.startswith("dnnx run: skipped"))
    assert len(skipped) == 2, err
    assert "broken.npy: ValueError: " in skipped[0] and "is not a readable .npy/.npz file" in skipped[0]
    assert "doubles.npy: ValueError: " in skipped[1] and "expected dtype float32, got float64" in skipped[1]
    check_outputs(out_dir, arrays, lenet)


def test_a_glob_and_a_second_run_rewrite_the_same_files(lenet, inputs, tmp_path, capsys):
    folder, arrays = inputs
    (folder / "broken.npy").unlink()
    (folder / "doubles.npy").unlink()
    out_dir = tmp_path / "out"
    argv = ["run", str(lenet), "--input", str(folder / "img*"), "--output", str(out_dir)]
    assert main(argv) == 0
    first = {p.name: p.stat().st_ino for p in out_dir.iterdir()}
    assert main(argv) == 0  # idempotent by name: each output replaced (a new file renamed over it)
    assert sorted(first) == sorted(p.name for p in out_dir.iterdir())
    assert all(first[p.name] != p.stat().st_ino for p in out_dir.iterdir())
    assert "4 of 4 file(s) written" in capsys.readouterr().out
    check_outputs(out_dir, arrays, lenet)


def test_parquet_columns_of_arrays(lenet, tmp_path, capsys):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    x = rand(6, 1, 28, 28, seed=9)
    folder, out_dir = tmp_path / "in", tmp_path / "out"
    folder.mkdir()
    flat = pa.array(list(x.reshape(6, -1)), type=pa.list_(pa.float32()))  # 784 values a row: [1, 28, 28] taken
    pq.write_table(pa.table({"x": flat, "label": np.arange(6)}), folder / "flat.parquet")
    nested = pa.array([row.tolist() for row in x[:4]], type=pa.list_(pa.list_(pa.list_(pa.float32()))))
    pq.write_table(pa.table({"pixels": nested}), folder / "nested.parquet")
    pq.write_table(pa.table({"x": pa.array([[1.0, 2.0]] * 2, type=pa.list_(pa.float64()))}), folder / "bad.parquet")
    assert main(["run", str(lenet), "--input", str(folder), "--output", str(out_dir)]) == 2
    model = dnnx.load(lenet)
    with np.load(out_dir / "flat.npz") as got:
        np.testing.assert_array_equal(got["probs"], model.run(x))
    with np.load(out_dir / "nested.npz") as got:
        np.testing.assert_array_equal(got["probs"], model.run(x[:4]))
    err = capsys.readouterr().err
    assert "bad.parquet: ValueError: " in err and "column 'x' for input 'x': expected dtype float32, got float64" in err


def test_user_errors_of_the_many_files_mode(lenet, inputs, tmp_path, capsys):
    folder, _ = inputs
    np.save(folder / "img0.npz.npy", rand(1, 1, 28, 28))  # stem "img0.npz": no clash
    np.save(tmp_path / "img1.npy", rand(1, 1, 28, 28))
    cases = [
        (["--input", str(folder)], "--input names many files: give --output DIR"),
        (["--input", str(tmp_path / "nothing*"), "--output", str(tmp_path / "o")], "no .npy, .npz, .parquet files"),
        (["--input", str(tmp_path / "**" / "img1.np*"), "--output", str(tmp_path / "o")],
         "would both be written to"),
        (["--input", str(folder), "--output", str(folder / "img0.npy")], "expected a folder for the outputs"),
        (["--input", str(folder / "img0.npy"), "--workers", "2"], "--workers and --ray run many files"),
    ]
    for argv, message in cases:
        assert main(["run", str(lenet)] + argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("dnnx run: error: ") and message in err, (argv, err)


def test_a_model_that_cannot_load_in_the_workers_is_one_error(tmp_path, inputs, capsys):
    folder, _ = inputs
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    out_dir = tmp_path / "out"
    assert main(["run", str(bad), "--input", str(folder), "--output", str(out_dir), "--workers", "2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "the model could not be loaded on worker" in err, err
    assert not any(out_dir.iterdir())
    assert os.path.isdir(out_dir)
