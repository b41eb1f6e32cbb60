"""`dnnx finetune`: LeNet on the digits from the shell, checkpoints, --resume (the same weights as a
run never stopped, also after Ctrl-C in the middle of an epoch; a longer run; a finished one),
--overwrite, --plot, the progress bar and the one-line user errors."""
from __future__ import annotations

import os
import re
import signal
import sys

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from dnnx.cli import main
from dnnx.examples.lenet import build_lenet
from ort_check import run_ort

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


# --- --resume with more epochs, finished runs, --overwrite ----------------------------------------

def test_resume_may_extend_the_run(capsys, lenet, tmp_path):
    # Constant learning rate: 1 epoch, then resumed to 2, gives the weights of a straight 2-epoch run.
    straight = tmp_path / "straight.onnx"
    assert cli(capsys, "finetune", lenet, *TRAIN, "--epochs", "2", "--out", straight)[0] == 0
    ck, out = tmp_path / "ck", tmp_path / "extended.onnx"
    assert cli(capsys, "finetune", lenet, *TRAIN, "--epochs", "1", "--out", out, "--checkpoint-dir", ck)[0] == 0
    status, stdout, err = cli(capsys, "finetune", lenet, *TRAIN, "--epochs", "2", "--out", out,
                              "--checkpoint-dir", ck, "--resume")
    assert status == 0, err
    assert "resumed from" in stdout and "epoch 2/2" in stdout and "epoch 1/2" not in stdout
    expected, got = initializers(straight), initializers(out)
    for name in expected:
        np.testing.assert_array_equal(got[name], expected[name], err_msg=name)


def test_resume_recomputes_the_schedule_over_the_new_total(capsys, lenet, tmp_path, monkeypatch):
    ck, out = tmp_path / "ck", tmp_path / "t.onnx"
    common = [*TRAIN, "--schedule", "cosine", "--out", out, "--checkpoint-dir", ck]
    assert cli(capsys, "finetune", lenet, *common, "--epochs", "1")[0] == 0
    import dnnx.finetune

    real_step, lrs = dnnx.finetune.Tuner.step, []

    def recording_step(self, x, y):
        lrs.append(self.current_lr())
        return real_step(self, x, y)

    monkeypatch.setattr(dnnx.finetune.Tuner, "step", recording_step)
    status, stdout, err = cli(capsys, "finetune", lenet, *common, "--epochs", "2", "--resume")
    assert status == 0, err
    assert "the cosine learning-rate schedule is recomputed over 46 steps" in stdout, stdout
    # Step 23 of 46 on a cosine from 0.05: half of it (the 1-epoch run had decayed to 0 by step 23).
    assert len(lrs) == 23 and lrs[0] == pytest.approx(0.05 * 0.5)


def test_resume_of_a_finished_run_trains_nothing_and_says_so(capsys, lenet, tmp_path):
    ck, first, again = tmp_path / "ck", tmp_path / "first.onnx", tmp_path / "again.onnx"
    assert cli(capsys, "finetune", lenet, *TRAIN, "--epochs", "1", "--out", first, "--checkpoint-dir", ck)[0] == 0
    status, stdout, err = cli(capsys, "finetune", lenet, *TRAIN, "--epochs", "1", "--out", again,
                              "--checkpoint-dir", ck, "--resume")
    assert status == 0, err
    assert "nothing was trained" in stdout and "--epochs" in stdout and "epoch 1/1" not in stdout, stdout
    a, b = initializers(first), initializers(again)
    for name in a:
        np.testing.assert_array_equal(b[name], a[name], err_msg=name)


def test_resume_with_fewer_epochs_than_done_is_an_error(capsys, lenet, tmp_path):
    ck, out = tmp_path / "ck", tmp_path / "t.onnx"
    assert cli(capsys, "finetune", lenet, *TRAIN, "--epochs", "2", "--out", out, "--checkpoint-dir", ck)[0] == 0
    status, _, err = cli(capsys, "finetune", lenet, *TRAIN, "--epochs", "1", "--out", out, "--checkpoint-dir", ck,
                         "--resume")
    assert status == 2 and err.count("\n") == 1, err
    assert "--epochs 1" in err and "finished run of 2 epoch(s)" in err and "--epochs 2 or more" in err, err


def test_a_folder_with_a_checkpoint_needs_overwrite(capsys, lenet, tmp_path):
    ck, out = tmp_path / "ck", tmp_path / "t.onnx"
    args = ["finetune", lenet, *TRAIN, "--epochs", "1", "--out", out, "--checkpoint-dir", ck]
    assert cli(capsys, *args)[0] == 0
    before = (ck / "checkpoint.npz").read_bytes()
    # A finished run, the same settings or others: never written over silently.
    for extra in ([], ["--lr", "0.01"]):
        status, stdout, err = cli(capsys, *args, *extra)
        assert status == 2 and err.startswith("dnnx finetune: error: ") and err.count("\n") == 1, err
        assert "already holds a checkpoint (a finished run of 1 epoch(s))" in err and "--overwrite" in err, err
        assert "training" not in stdout
        assert (ck / "checkpoint.npz").read_bytes() == before
    status, _, err = cli(capsys, *args, "--lr", "0.01", "--overwrite")
    assert status == 0, err
    assert (ck / "checkpoint.npz").read_bytes() != before
    status, _, err = cli(capsys, *args, "--resume", "--overwrite")
    assert status == 2 and "pass one of them" in err


# --- --plot and the digits without scikit-learn ---------------------------------------------------

def test_plot_draws_the_curves_of_all_epochs_also_after_resume(capsys, lenet, tmp_path):
    pytest.importorskip("matplotlib")
    ck, out, png = tmp_path / "ck", tmp_path / "t.onnx", tmp_path / "curves.png"
    common = [*TRAIN, "--out", out, "--checkpoint-dir", ck, "--plot", png]
    assert cli(capsys, "finetune", lenet, *common, "--epochs", "1")[0] == 0
    status, stdout, err = cli(capsys, "finetune", lenet, *common, "--epochs", "2", "--resume")
    assert status == 0, err
    assert f"wrote {png}" in stdout
    assert re.search(r"epoch 2/2  train loss \d\.\d+  train accuracy \d\.\d+  val loss", stdout), stdout
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    from dnnx.cli import _checkpoint

    history = _checkpoint.peek(ck).history
    assert [h["epoch"] for h in history] == [1, 2]
    assert all(0 <= h["train_accuracy"] <= 1 and 0 <= h["val_accuracy"] <= 1 and h["train_loss"] > 0 for h in history)


def test_plot_without_matplotlib_fails_at_once_in_one_line(capsys, lenet, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    status, stdout, err = cli(capsys, "finetune", lenet, *TRAIN, "--epochs", "1", "--out", tmp_path / "t.onnx",
                              "--plot", tmp_path / "c.png")
    assert status == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert "--plot needs matplotlib" in err and "pip install matplotlib" in err, err
    assert "training" not in stdout and not (tmp_path / "t.onnx").exists()


def test_digits_need_no_scikit_learn(capsys, lenet, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn", None)
    monkeypatch.setitem(sys.modules, "sklearn.datasets", None)
    status, stdout, err = cli(capsys, "finetune", lenet, *TRAIN, "--epochs", "1", "--out", tmp_path / "t.onnx")
    assert status == 0, err
    assert "on 1438 samples" in stdout


def test_finetune_progress_bar_on_stderr_when_forced(capsys, lenet, tmp_path, monkeypatch):
    monkeypatch.setenv("DNNX_PROGRESS", "1")
    status, stdout, err = cli(capsys, "finetune", lenet, *TRAIN, "--epochs", "1", "--out", tmp_path / "t.onnx")
    assert status == 0
    assert "epoch 1/1:   0%" in err and "0/23" in err and "step" in err, err  # drawn at once, then every 0.2 s
    assert "100%" not in stdout and re.search(r"^epoch 1/1  train loss", stdout, re.M)
