"""The dnnx command line, run in-process through dnnx.cli.main (and once as `python -m dnnx.cli`):
every command, its --help, and the one-line errors (exit status 2) for user mistakes."""
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import dnnx
from dnnx.cli import main
from dnnx.cli._files import atomic_write
from dnnx.cli.timing import random_inputs
from dnnx.examples import build
from dnnx.threads import get_num_threads, set_num_threads
from ort_check import make_model, rand

COMMANDS = ["info", "run", "plan", "bench", "models"]
LENET_PARAMETERS = 20 * 25 + 20 + 50 * 20 * 25 + 50 + 500 * 800 + 500 + 10 * 500 + 10


@pytest.fixture(scope="module")
def lenet(tmp_path_factory):
    path = tmp_path_factory.mktemp("models") / "lenet.onnx"
    onnx.save(build("lenet", seed=0), path)
    return path


@pytest.fixture(scope="module")
def lstm(tmp_path_factory):
    path = tmp_path_factory.mktemp("models") / "lstm.onnx"
    onnx.save(build("lstm", seed=0), path)
    return path


def cli(capsys, *argv):
    """(exit status, stdout, stderr) of one in-process command."""
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def assert_user_error(capsys, *argv, match):
    status, out, err = cli(capsys, *argv)
    assert status == 2
    assert err.count("\n") == 1 and err.startswith(f"dnnx {argv[0]}: error: "), err
    assert "Traceback" not in err
    assert re.search(match, err), err


# --- help and the entry point -------------------------------------------------------------------

@pytest.mark.parametrize("argv", [[]] + [[c] for c in COMMANDS])
def test_help(capsys, argv):
    with pytest.raises(SystemExit) as exit_:
        main(argv + ["--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: dnnx {' '.join(argv)}".rstrip())
    if not argv:
        assert all(c in out for c in COMMANDS)


def test_no_command_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_:
        main([])
    assert exit_.value.code == 2
    assert "usage: dnnx" in capsys.readouterr().err


def run_module(*argv):
    # The child must import this same dnnx (a developer build or an installed one).
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(Path(dnnx.__file__).resolve().parents[1]), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", "dnnx.cli", *map(str, argv)], capture_output=True, text=True,
                          env=env, cwd=Path(__file__).resolve().parents[1], timeout=120)


def test_python_m_dnnx_cli(tmp_path):
    done = run_module("--help")
    assert done.returncode == 0 and "usage: dnnx" in done.stdout
    done = run_module("info", tmp_path / "missing.onnx")
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "not found" in done.stderr
    assert "Traceback" not in done.stderr


# --- models -------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["lenet", "lstm"])
def test_models_writes_the_example(capsys, tmp_path, name):
    out = tmp_path / f"{name}.onnx"
    status, text, _ = cli(capsys, "models", name, "--out", out, "--seed", 7)
    assert status == 0 and str(out) in text
    assert out.read_bytes() == build(name, seed=7).SerializeToString()
    onnx.checker.check_model(onnx.load(str(out)), full_check=True)
    assert [p.name for p in tmp_path.iterdir()] == [out.name]  # no temporary file left behind


def test_models_errors(capsys, tmp_path):
    with pytest.raises(SystemExit) as exit_:
        main(["models", "resnet", "--out", str(tmp_path / "r.onnx")])
    assert exit_.value.code == 2
    capsys.readouterr()
    assert_user_error(capsys, "models", "lenet", "--out", tmp_path / "no" / "such" / "m.onnx",
                      match="output folder not found")


# --- info ---------------------------------------------------------------------------------------

def test_info_lenet(capsys, lenet):
    status, out, _ = cli(capsys, "info", lenet)
    assert status == 0
    assert "x  float32  [N, 1, 28, 28]" in out
    assert "probs  float32  [N, 10]" in out
    assert f"parameters: {LENET_PARAMETERS:,}" in out
    assert "opset: 17" in out
    assert re.search(r"Conv\s+2", out) and re.search(r"Softmax\s+1", out)
    assert "outside" not in out
    assert "dnnx: loads and runs it" in out


def test_info_names_unsupported_ops(capsys, tmp_path):
    # Multinomial: a random op dnnx does not run
    model = make_model([helper.make_node("Multinomial", ["x"], ["y"], name="draw", sample_size=2)], [("x", [2, 3])],
                       [("y", [2, 2], TensorProto.INT32)])
    path = tmp_path / "multinomial.onnx"
    onnx.save(model, path)
    status, out, _ = cli(capsys, "info", path)
    assert status == 0  # info reports; it does not judge
    assert "ops outside dnnx's op set: Multinomial" in out
    assert re.search(r"dnnx: cannot load it: .*\(Multinomial\)", out)


def test_info_errors(capsys, tmp_path):
    assert_user_error(capsys, "info", tmp_path / "missing.onnx", match="not found")
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(b"this is not a protobuf \xff\xfe")
    assert_user_error(capsys, "info", garbage, match="not an ONNX model")


# --- run ----------------------------------------------------------------------------------------

def test_run_npy_and_output_file(capsys, tmp_path, lenet):
    x = rand(3, 1, 28, 28)
    np.save(tmp_path / "x.npy", x)  # float32, the input's dtype (tests/test_inputs_rule.py: no conversion)
    status, out, _ = cli(capsys, "run", lenet, "--input", tmp_path / "x.npy", "--output", tmp_path / "y.npz")
    assert status == 0
    want = dnnx.load(lenet).run(x)
    assert "probs  float32  [3, 10]" in out
    assert f"argmax per row: {want.argmax(axis=1).tolist()}" in out
    with np.load(tmp_path / "y.npz") as saved:
        assert saved.files == ["probs"]
        np.testing.assert_array_equal(saved["probs"], want)


def test_run_npz_by_name_and_by_position(capsys, tmp_path, lstm):
    x = rand(16, 2, 8)
    np.savez(tmp_path / "named.npz", x=x)
    np.savez(tmp_path / "positional.npz", x)
    want = dnnx.load(lstm).run(x)
    for feeds in ("named.npz", "positional.npz"):
        status, out, _ = cli(capsys, "run", lstm, "--input", tmp_path / feeds, "--output", tmp_path / "y.npz")
        assert status == 0 and "probs  float32  [2, 10]" in out
        with np.load(tmp_path / "y.npz") as saved:
            np.testing.assert_array_equal(saved["probs"], want)


def test_run_with_batch(capsys, tmp_path, lenet):
    np.save(tmp_path / "x.npy", rand(4, 1, 28, 28))
    status, out, _ = cli(capsys, "run", lenet, "--input", tmp_path / "x.npy", "--batch", 4)
    assert status == 0 and "probs  float32  [4, 10]" in out


def test_run_random_inputs(capsys, lenet):
    status, out, _ = cli(capsys, "run", lenet, "--random", "--batch", 5)
    feeds, _ = random_inputs(dnnx.load(lenet).inputs, 5)
    want = dnnx.load(lenet).run(feeds["x"])
    assert status == 0 and "probs  float32  [5, 10]" in out
    assert f"argmax per row: {want.argmax(axis=1).tolist()}" in out


def test_run_errors(capsys, tmp_path, lenet):
    np.save(tmp_path / "x.npy", rand(1, 1, 28, 28))
    np.save(tmp_path / "wrong.npy", rand(1, 3, 28, 28))
    np.savez(tmp_path / "keys.npz", image=rand(1, 1, 28, 28))
    (tmp_path / "bad.npy").write_bytes(b"garbage")
    (tmp_path / "x.txt").write_text("1 2 3")
    assert_user_error(capsys, "run", tmp_path / "missing.onnx", "--input", tmp_path / "x.npy", match="not found")
    assert_user_error(capsys, "run", lenet, "--input", tmp_path / "missing.npy", match="input file not found")
    assert_user_error(capsys, "run", lenet, "--input", tmp_path / "bad.npy", match=r"is not an \.npy array file")
    assert_user_error(capsys, "run", lenet, "--input", tmp_path / "x.txt", match=r"expected an \.npy or \.npz")
    assert_user_error(capsys, "run", lenet, "--input", tmp_path / "keys.npz", match=r"keys \['image'\]")
    assert_user_error(capsys, "run", lenet, "--input", tmp_path / "wrong.npy", match="input 'x'")


# --- plan ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("command", ["run", "plan", "profile", "finetune"])
def test_precision_option_lists_the_engine_names_and_the_cpu_refuses_half(capsys, lenet, command):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    assert "--precision {fp32,tf32,fp16,bf16}" in capsys.readouterr().out
    extra = {"run": ["--random"], "plan": [], "profile": [], "finetune": ["--data", "digits", "--out", "t.onnx"]}
    assert_user_error(capsys, command, lenet, "--precision", "bf16", *extra[command],
                      match="precision='bf16' applies to device='cuda'; the CPU backend runs fp32")


@pytest.mark.parametrize("command", ["run", "plan", "profile", "finetune"])
def test_algo_search_and_workspace_options_reach_the_load(capsys, lenet, command):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    help_text = capsys.readouterr().out
    assert "--algo-search {auto,heuristic,exhaustive,background}" in help_text and "--workspace-limit BYTES" in help_text
    extra = {"run": ["--random"], "plan": [], "profile": [], "finetune": ["--data", "digits", "--out", "t.onnx"]}
    # checked by the engine's one parser, whichever device: a bad value is a one-line error
    assert_user_error(capsys, command, lenet, "--workspace-limit", "lots", *extra[command], match="workspace_limit")


def test_plan_with_an_explicit_search_on_the_cpu(capsys, lenet):
    status, out, _ = cli(capsys, "plan", lenet, "--batch", 2, "--algo-search", "exhaustive", "--workspace-limit", "64MiB")
    assert status == 0 and "conv1" in out


def test_plan_with_precision_fp32_on_the_cpu(capsys, lenet):
    status, out, _ = cli(capsys, "plan", lenet, "--batch", 2, "--device", "cpu", "--precision", "fp32")
    assert status == 0 and "conv1" in out


def test_plan(capsys, lenet):
    status, out, _ = cli(capsys, "plan", lenet, "--batch", 4)
    assert status == 0
    layers = [line.split()[:2] for line in out.splitlines()[2:10]]
    assert [name for name, _ in layers] == ["conv1", "pool1", "conv2", "pool2", "flatten", "fc1", "fc2", "softmax"]
    assert layers[5] == ["fc1", "Gemm+Relu"]  # relu1 fused into fc1 by the fuse_gemm_relu pass
    assert "4x1x28x28" in out and "4x10" in out
    memory = dnnx.load(lenet, batch_size=4).memory()
    assert memory["arena_bytes"] <= memory["naive_bytes"]
    assert re.search(r"activations: arena .* naive .* workspace ", out)


# --- bench --------------------------------------------------------------------------------------

def test_bench_against_onnxruntime(capsys, lenet):
    status, out, _ = cli(capsys, "bench", lenet, "--batch", 2, "--compare", "onnxruntime", "--threads", 1,
                         "--warmup", 1, "--iters", 3)
    assert status == 0
    assert "batch 2 (2 samples per call), 1 thread(s)" in out
    assert re.search(r"^dnnx\s+[\d.]+\s+[\d.]+\s+[\d,]+$", out, re.M)
    assert re.search(r"^onnxruntime\s+[\d.]+\s+[\d.]+\s+[\d,]+$", out, re.M)
    assert re.search(r"dnnx / onnxruntime median time: [\d.]+x", out)
    assert re.search(r"^dnnx load: [\d.]+ ms \(device [\d.]+, read [\d.]+, .*engine: build [\d.]+ ms\)$", out, re.M)
    diff = float(re.search(r"max abs diff dnnx vs onnxruntime (\S+)", out).group(1))
    assert diff < 1e-4


def test_bench_dnnx_alone_with_a_symbolic_inner_batch(capsys, lstm):
    status, out, _ = cli(capsys, "bench", lstm, "--batch", 4, "--threads", 1, "--warmup", 0, "--iters", 2)
    assert status == 0
    assert "(4 samples per call)" in out  # the LSTM input is [16, N, 8]: N is the batch
    assert "onnxruntime" not in out


def test_bench_errors(capsys, tmp_path, lenet):
    with pytest.raises(SystemExit) as exit_:
        main(["bench", str(lenet)])  # --batch is required
    assert exit_.value.code == 2
    capsys.readouterr()
    assert_user_error(capsys, "bench", tmp_path / "missing.onnx", "--batch", 1, match="not found")


def test_random_inputs_fill_symbolic_dims_and_are_not_zero():
    specs = [dnnx.TensorSpec("x", (16, "N", 8), "float32"), dnnx.TensorSpec("ids", ("N",), "int64")]
    feeds, samples = random_inputs(specs, batch=3, seed=1)
    assert feeds["x"].shape == (16, 3, 8) and feeds["x"].dtype == np.float32 and feeds["x"].std() > 0.5
    assert feeds["ids"].shape == (3,) and feeds["ids"].dtype == np.int64
    assert samples == 3
    again, _ = random_inputs(specs, batch=3, seed=1)
    np.testing.assert_array_equal(again["x"], feeds["x"])
    _, fixed = random_inputs([dnnx.TensorSpec("x", (10, 1, 28, 28), "float32")], batch=64)
    assert fixed == 10  # a fixed batch is what runs, whatever --batch said


# --- helpers behind the commands ----------------------------------------------------------------

def test_atomic_write_keeps_the_old_file_on_failure(tmp_path):
    path = tmp_path / "out.bin"
    path.write_bytes(b"old")

    def fail(f):
        f.write(b"half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        atomic_write(path, fail)
    assert path.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.bin"]
    atomic_write(path, lambda f: f.write(b"new"))
    assert path.read_bytes() == b"new"


def test_set_num_threads():
    before = get_num_threads()
    try:
        set_num_threads(1)
        assert get_num_threads() == 1
    finally:
        set_num_threads(before)
    assert get_num_threads() == before
    with pytest.raises(ValueError, match="positive int"):
        set_num_threads(0)
