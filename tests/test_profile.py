"""Model.profile and `dnnx profile` on the CPU (the CUDA side is tests/cuda/test_cuda_profile.py):
one row per planned layer, (name, op, algorithm, median ms), printable as a table, drawable as a
bar chart (--plot) and writable as a Chrome trace (--trace)."""
import importlib.util
import sys

import numpy as np
import pytest

import dnnx
from dnnx.cli import main
from dnnx.examples import build
from dnnx.profile import ProfileRow
from ort_check import rand


def test_profile_rows_follow_the_plan():
    model = dnnx.load(build("lenet"))
    table = model.profile(rand(4, 1, 28, 28), repeat=3)
    plan = model.plan(batch_size=4)
    assert [(r.name, r.op, r.algorithm) for r in table] == [(p["name"], p["op"], p["algorithm"]) for p in plan]
    assert all(isinstance(r, ProfileRow) for r in table)
    for row in table:
        if row.op == "Flatten":
            assert row.median_ms == 0.0  # a view runs nothing
        else:
            assert row.median_ms > 0, row
    name, op, algorithm, ms = table[0]  # rows unpack as tuples
    assert (name, op) == ("conv1", "Conv") and ms == table[0].median_ms
    assert table.total_ms == pytest.approx(sum(r.median_ms for r in table))
    assert not table.graph and table.repeat == 3 and table.device == "cpu"
    text = str(table)
    assert "conv1" in text and "median ms" in text and "total" in text and "host wall-clock" in text


def test_profile_takes_inputs_like_run():
    model = dnnx.load(build("lenet"))
    x = rand(2, 1, 28, 28)
    by_name = model.profile({"x": x}, repeat=1)
    by_keyword = model.profile(x=x, repeat=1)
    assert [r.name for r in by_name] == [r.name for r in by_keyword]
    with pytest.raises(ValueError, match="input 'x'"):
        model.profile(rand(2, 3, 28, 28))
    with pytest.raises(ValueError, match="repeat"):
        model.profile(x, repeat=0)


def test_profile_leaves_runs_unchanged():
    model = dnnx.load(build("lenet"))
    x = rand(3, 1, 28, 28)
    before = model.run(x)
    model.profile(x, repeat=2)
    np.testing.assert_array_equal(model.run(x), before)


def test_cli_profile(capsys, tmp_path):
    path = str(tmp_path / "lenet.onnx")
    assert main(["models", "lenet", "--out", path]) == 0
    capsys.readouterr()
    assert main(["profile", path, "--batch", "2", "--repeat", "2"]) == 0
    out = capsys.readouterr().out
    for name in ("conv1", "pool1", "conv2", "fc2", "softmax", "total", "median of 2 runs on cpu"):
        assert name in out, out


def test_cli_profile_needs_an_available_device(capsys, tmp_path):
    if dnnx.cuda_available():
        pytest.skip("CUDA is available here")
    path = str(tmp_path / "lenet.onnx")
    assert main(["models", "lenet", "--out", path]) == 0
    capsys.readouterr()
    assert main(["profile", path, "--device", "cuda"]) == 2
    assert "dnnx profile: error:" in capsys.readouterr().err


def test_cli_profile_trace_and_plot(capsys, tmp_path):
    import json

    path = str(tmp_path / "lenet.onnx")
    assert main(["models", "lenet", "--out", path]) == 0
    capsys.readouterr()
    trace, png = tmp_path / "trace.json", tmp_path / "layers.png"
    have_matplotlib = importlib.util.find_spec("matplotlib") is not None
    extra = ["--plot", str(png)] if have_matplotlib else []
    assert main(["profile", path, "--batch", "2", "--repeat", "3", "--trace", str(trace), *extra]) == 0
    out = capsys.readouterr().out
    assert f"wrote {trace}" in out
    data = json.loads(trace.read_text())  # valid JSON, Chrome trace event format
    layers = [e for e in data["traceEvents"] if e["ph"] == "X"]
    plan = dnnx.load(path, batch_size=2).plan()
    assert [e["name"] for e in layers] == [p["name"] for p in plan]  # one event per layer, in plan order
    assert [e["cat"] for e in layers] == [p["op"] for p in plan]
    end = 0.0
    for e in layers:  # end to end on one track, microseconds
        assert e["ts"] == pytest.approx(end, abs=1e-2) and e["dur"] >= 0 and (e["pid"], e["tid"]) == (1, 1)
        assert e["dur"] == pytest.approx(1e3 * e["args"]["median_ms"], abs=1e-3)
        end = e["ts"] + e["dur"]
    assert {e["name"] for e in data["traceEvents"] if e["ph"] == "M"} == {"process_name", "thread_name"}
    if not have_matplotlib:
        pytest.skip("matplotlib is not installed: the --plot half is not checked")
    assert f"wrote {png}" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_profile_plot_errors_come_before_the_work(capsys, tmp_path, monkeypatch):
    path = str(tmp_path / "lenet.onnx")
    assert main(["models", "lenet", "--out", path]) == 0
    capsys.readouterr()
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert main(["profile", path, "--plot", str(tmp_path / "p.png")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "--plot needs matplotlib" in err, err
    monkeypatch.delitem(sys.modules, "matplotlib")
    assert main(["profile", path, "--trace", str(tmp_path / "no" / "t.json")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "output folder not found" in err, err
