"""`dnnx finetune`: LeNet on the digits from the shell, checkpoints, --resume (the same weights as a
run never stopped, also after Ctrl-C in the middle of an epoch) and the one-line user errors."""
from __future__ import annotations

import os
import re
import signal

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from dnnx.cli import main
from dnnx.examples.lenet import build_lenet
from ort_check import run_ort

pytest.importorskip("sklearn")

TRAIN = ["--data", "digits", "--batch-size", "64", "--lr", "0.05", "--momentum", "0.9"]


@pytest.fixture(scope="module")
def lenet(tmp_path_factory):
    path = tmp_path_factory.mktemp("models") / "lenet.onnx"
    onnx.save(build_lenet(seed=0), path)
    return path


def cli(capsys, *argv):
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def initializers(path) -> dict:
    return {t.name: numpy_helper.to_array(t) for t in onnx.load(path).graph.initializer}


def test_digits_epochs_checkpoints_and_output(capsys, lenet, tmp_path):
    out = tmp_path / "tuned.onnx"
    status, stdout, err = cli(capsys, "finetune", lenet, *TRAIN, "--epochs", "2", "--out", out,
                              "--checkpoint-dir", tmp_path / "ck")
    assert status == 0, err
    epochs = [line for line in stdout.splitlines() if line.startswith("epoch ")]
    assert len(epochs) == 2
    for line in epochs:
        assert re.search(r"train loss \d+\.\d+  val loss \d+\.\d+  val accuracy \d\.\d+  \d+ samples/s", line), line
    accuracy = float(re.search(r"val accuracy (\d\.\d+)", epochs[-1]).group(1))
    assert accuracy >= 0.90
    assert (tmp_path / "ck" / "checkpoint.npz").is_file()
    # The tuned file: the original graph, the last two layers' weights changed, loadable by onnxruntime.
    tuned, original = onnx.load(out), build_lenet(seed=0)
    assert tuned.graph.node == original.graph.node
    before, after = initializers(lenet), initializers(out)
    assert [n for n in before if not np.array_equal(before[n], after[n])] == ["fc1.w", "fc1.b", "fc2.w", "fc2.b"]
    x = np.random.default_rng(0).random((4, 1, 28, 28), dtype=np.float32)
    assert run_ort(tuned, {"x": x})["probs"].shape == (4, 10)


def test_resume_after_an_epoch_and_after_ctrl_c_matches_an_uninterrupted_run(capsys, lenet, tmp_path, monkeypatch):
    common = [*TRAIN, "--epochs", "2", "--seed", "3"]
    assert cli(capsys, "finetune", lenet, *common, "--out", tmp_path / "straight.onnx")[0] == 0

    # Stopped by "Ctrl-C" in the middle of the second epoch: the step in flight finishes, the
    # checkpoint and the model are saved, status 130.
    import dnnx.finetune

    real_step = dnnx.finetune.Tuner.step
    calls = {"n": 0}

    def step_then_interrupt(self, x, y):
        loss = real_step(self, x, y)
        calls["n"] += 1
        if calls["n"] == 30:  # 23 steps per epoch: step 7 of epoch 2
            os.kill(os.getpid(), signal.SIGINT)
        return loss

    monkeypatch.setattr(dnnx.finetune.Tuner, "step", step_then_interrupt)
    ck = tmp_path / "ck"
    status, _, err = cli(capsys, "finetune", lenet, *common, "--out", tmp_path / "resumed.onnx", "--checkpoint-dir", ck)
    assert status == 130 and "interrupted after 30 steps" in err, err
    monkeypatch.setattr(dnnx.finetune.Tuner, "step", real_step)

    status, stdout, err = cli(capsys, "finetune", lenet, *common, "--out", tmp_path / "resumed.onnx",
                              "--checkpoint-dir", ck, "--resume")
    assert status == 0, err
    assert "resumed from" in stdout and "epoch 2, step 7" in stdout
    straight, resumed = initializers(tmp_path / "straight.onnx"), initializers(tmp_path / "resumed.onnx")
    for name in straight:
        np.testing.assert_array_equal(resumed[name], straight[name], err_msg=name)


def test_npz_data_with_keys_and_validation(capsys, tmp_path, lenet):
    rng = np.random.default_rng(1)
    np.savez(tmp_path / "train.npz", images=rng.random((40, 1, 28, 28), dtype=np.float32), labels=rng.integers(0, 10, 40))
    np.savez(tmp_path / "val.npz", images=rng.random((10, 1, 28, 28), dtype=np.float32), labels=rng.integers(0, 10, 10))
    status, stdout, err = cli(capsys, "finetune", lenet, "--data", tmp_path / "train.npz", "--val", tmp_path / "val.npz",
                              "--x-key", "images", "--y-key", "labels", "--trainable", "fc2.w,fc2.b", "--epochs", "1",
                              "--batch-size", "16", "--out", tmp_path / "t.onnx")
    assert status == 0, err
    assert "training fc2.w, fc2.b on 40 samples, 3 steps per epoch" in stdout
    assert "val accuracy" in stdout


@pytest.mark.parametrize("extra, match", [
    (["--resume"], "--resume needs --checkpoint-dir"),
    (["--trainable", "last:7"], "only 4 parameterised"),
    (["--device", "cuda"], "cuda|CUDA"),
    (["--lr", "nan"], "--lr"),
])
def test_user_errors(capsys, lenet, tmp_path, extra, match):
    status, _, err = cli(capsys, "finetune", lenet, "--data", "digits", "--epochs", "1", "--out", tmp_path / "t.onnx", *extra)
    assert status == 2 and err.startswith("dnnx finetune: error: ") and err.count("\n") == 1, err
    assert re.search(match, err), err


def test_resume_refuses_other_settings_and_missing_checkpoints(capsys, lenet, tmp_path):
    ck = tmp_path / "ck"
    args = ["finetune", lenet, "--data", "digits", "--epochs", "1", "--out", tmp_path / "t.onnx", "--checkpoint-dir", ck]
    status, _, err = cli(capsys, *args, "--resume")
    assert status == 2 and "no checkpoint" in err
    assert cli(capsys, *args)[0] == 0
    status, _, err = cli(capsys, *args, "--resume", "--batch-size", "32")
    assert status == 2 and "batch_size 64 (now 32)" in err, err


def test_bad_data_files(capsys, lenet, tmp_path):
    np.savez(tmp_path / "d.npz", x=np.zeros((4, 1, 28, 28), np.float32), y=np.zeros(4, np.float32))
    status, _, err = cli(capsys, "finetune", lenet, "--data", tmp_path / "d.npz", "--out", tmp_path / "t.onnx")
    assert status == 2 and "integer class labels" in err
    status, _, err = cli(capsys, "finetune", lenet, "--data", tmp_path / "d.npz", "--y-key", "labels",
                         "--out", tmp_path / "t.onnx")
    assert status == 2 and "no array 'labels'" in err


def test_help_lists_the_options(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["finetune", "--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    for option in ("--data", "--val", "--x-key", "--trainable", "--epochs", "--batch-size", "--lr", "--momentum",
                   "--device", "--out", "--seed", "--checkpoint-dir", "--resume"):
        assert option in out
