"""Chunked runs (issue #16): Model.run(x, chunk_size=k) and `dnnx run --chunk k` stream a batch k rows
at a time (dnnx/_chunks.py) and give the unchunked outputs up to float32 summation order (a GEMM's
blocking depends on its row count: RTOL/ATOL as tests/ort_check.py's FP32 bounds). Plans: one per
chunk size."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import dnnx
from dnnx.cli import main
from dnnx.examples import build
from ort_check import FP32_ATOL, FP32_RTOL, make_model, rand

RTOL, ATOL = FP32_RTOL, FP32_ATOL


@pytest.fixture(scope="module")
def lenet():
    return dnnx.load(build("lenet", seed=0))


@pytest.mark.parametrize("chunk", [1, 3, 10, 64])
def test_chunks_give_the_unchunked_outputs(lenet, chunk):
    x = rand(10, 1, 28, 28, seed=3)
    np.testing.assert_allclose(lenet.run(x, chunk_size=chunk), lenet.run(x), rtol=RTOL, atol=ATOL)


def test_one_plan_per_chunk_size():
    model = dnnx.load(build("lenet", seed=0))
    before = model.planner_stats()["plans_built"]
    y = model.run(rand(10, 1, 28, 28), chunk_size=4)  # chunks of 4, 4 and 2 rows
    assert y.shape == (10, 10)
    stats = model.planner_stats()
    assert stats["plans_built"] - before == 2  # [4, ...] and [2, ...]: never the full batch's [10, ...]
    assert stats["plans_reused"] >= 1


def test_several_inputs_and_outputs_and_a_whole_input():
    """x [N, 3] and z [N, 4] are chunked, w [3, 4] (fixed leading dim) goes whole to every chunk;
    y [N, 4] float and k [N] int64 are gathered."""
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Add", ["m", "z"], ["y"]),
             helper.make_node("ArgMax", ["y"], ["k"], axis=1, keepdims=0)]
    model = dnnx.load(make_model(nodes, [("x", ["N", 3]), ("w", [3, 4]), ("z", ["N", 4])],
                                 [("y", ["N", 4]), ("k", ["N"], TensorProto.INT64)]))
    feeds = {"x": rand(7, 3, seed=1), "w": rand(3, 4, seed=2), "z": rand(7, 4, seed=3)}
    whole = model.run_dict(feeds)
    chunked = model.run_dict(feeds, chunk_size=3)
    assert list(chunked) == ["y", "k"] and chunked["k"].dtype == np.int64
    np.testing.assert_allclose(chunked["y"], whole["y"], rtol=RTOL, atol=ATOL)
    np.testing.assert_array_equal(chunked["k"], whole["k"])
    with pytest.raises(ValueError, match=r"inputs 'x' and 'z' disagree on dim 'N': 7 vs 6"):
        model.run(dict(feeds, z=rand(6, 4)), chunk_size=3)


def test_an_output_that_is_not_batch_major_is_refused():
    nodes = [helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0)]  # the sum of all rows: a scalar
    model = dnnx.load(make_model(nodes, [("x", ["N", 3])], [("s", [])], opset=11))
    with pytest.raises(ValueError, match=r"output 's' is not batch-major"):
        model.run(rand(5, 3), chunk_size=2)


def test_what_cannot_be_chunked(lenet):
    x = rand(4, 1, 28, 28)
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="chunk_size must be a positive int"):
            lenet.run(x, chunk_size=bad)
    with pytest.raises(ValueError, match="output='device'"):
        lenet.run(x, chunk_size=2, output="device")
    fixed = dnnx.load(build("lenet", seed=0), batch_size=4)
    with pytest.raises(ValueError, match="no input has a symbolic leading"):
        fixed.run(x, chunk_size=2)


def test_cli_chunk_matches_the_unchunked_run(capsys, tmp_path, monkeypatch):
    path = tmp_path / "lenet.onnx"
    onnx.save(build("lenet", seed=0), path)
    x = rand(9, 1, 28, 28, seed=5)
    np.save(tmp_path / "x.npy", x)
    monkeypatch.setenv("DNNX_PROGRESS", "1")  # the bar shows as on a terminal
    status = main(["run", str(path), "--input", str(tmp_path / "x.npy"), "--chunk", "4",
                   "--output", str(tmp_path / "y.npz")])
    out, err = capsys.readouterr()
    assert status == 0 and "probs  float32  [9, 10]" in out
    assert "run:" in err and "/9 " in err  # the bar over the rows (it clears itself when done)
    with np.load(tmp_path / "y.npz") as saved:
        np.testing.assert_allclose(saved["probs"], dnnx.load(path).run(x), rtol=RTOL, atol=ATOL)
    monkeypatch.setenv("DNNX_PROGRESS", "0")
    assert main(["run", str(path), "--input", str(tmp_path / "x.npy"), "--chunk", "4"]) == 0
    assert capsys.readouterr().err == ""


def test_cli_chunk_needs_a_positive_int(capsys, tmp_path):
    path = tmp_path / "lenet.onnx"
    onnx.save(build("lenet", seed=0), path)
    with pytest.raises(SystemExit) as exit_:
        main(["run", str(path), "--random", "--chunk", "0"])
    assert exit_.value.code == 2
    assert "expected a positive integer, got 0" in capsys.readouterr().err
