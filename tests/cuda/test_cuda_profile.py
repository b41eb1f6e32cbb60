"""Model.profile and `dnnx profile` on CUDA: per-layer GPU times from CUDA events, measured in a
replayed graph (or eagerly with cuda_graph=False), one row per planned layer."""
import pytest

import dnnx
from dnnx.cli import main
from dnnx.examples import build
from ort_check import rand


@pytest.mark.parametrize("cuda_graph", [True, False])
def test_profile_rows(cuda_graph):
    model = dnnx.load(build("lenet"), device="cuda", cuda_graph=cuda_graph)
    x = rand(64, 1, 28, 28)
    table = model.profile(x, repeat=10)
    plan = model.plan(batch_size=64)
    assert [(r.name, r.op, r.algorithm) for r in table] == [(p["name"], p["op"], p["algorithm"]) for p in plan]
    assert table.graph is cuda_graph and table.device == "cuda"
    for row in table:
        if row.op == "Flatten":
            assert row.median_ms == 0.0
        else:
            assert 0 < row.median_ms < 50, row
    assert "CUDA events" in str(table)
    # profiling neither disturbs nor replaces the model's own graphs
    first = model.run(x)
    for _ in range(3):
        assert (model.run(x) == first).all()


def test_cli_profile_on_cuda(capsys, tmp_path):
    path = str(tmp_path / "lenet.onnx")
    assert main(["models", "lenet", "--out", path]) == 0
    capsys.readouterr()
    assert main(["profile", path, "--device", "cuda", "--batch", "16", "--repeat", "5"]) == 0
    out = capsys.readouterr().out
    # fc2 -> softmax is one layer on CUDA (Gemm+Softmax, named after the Gemm)
    for text in ("conv1", "conv2", "fc1", "fc2", "Gemm+Softmax", "total", "CUDA events in a replayed graph", "on cuda"):
        assert text in out, out
