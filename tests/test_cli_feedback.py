"""What the command line tells a user while and before it works: --help shows every default and
where a command runs; `dnnx bench` prints its settings before the first timed call and shows a
progress bar over the calls; bars (dnnx._progress) show only on a terminal, or when forced."""
import argparse
import io
import re

import onnx
import pytest

import dnnx._progress as progress
from dnnx.cli import COMMANDS, build_parser, main
from dnnx.cli import timing
from dnnx.examples import build


@pytest.fixture(scope="module")
def lenet(tmp_path_factory):
    path = tmp_path_factory.mktemp("models") / "lenet.onnx"
    onnx.save(build("lenet", seed=0), path)
    return path


def subparsers() -> dict:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


# --- --help --------------------------------------------------------------------------------------

def test_every_option_with_a_default_shows_it_in_help():
    for name, sub in subparsers().items():
        formatter = sub._get_formatter()
        for action in sub._actions:
            if not action.option_strings or action.default in (None, False, argparse.SUPPRESS):
                continue
            text = formatter._get_help_string(action)
            assert "(default" in text, f"dnnx {name} {action.option_strings[0]}: no default in {text!r}"


@pytest.mark.parametrize("command, shown", [
    ("bench", ["--iters K", "timed calls (default: 100)", "--warmup W", "(default: 10)"]),
    ("profile", ["--repeat K", "(default: 20)", "--device DEVICE", "(default: cpu)"]),
    ("finetune", ["--epochs EPOCHS", "(default: 5)", "--lr LR", "(default: 0.01)", "(default: last:2)"]),
])
def test_help_prints_defaults(capsys, command, shown):
    with pytest.raises(SystemExit) as exit_:
        main([command, "--help"])
    assert exit_.value.code == 0
    out = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    for text in shown:
        assert text in out, (text, out)
    assert "(default: None)" not in out and "(default: False)" not in out


def test_help_says_where_a_command_runs():
    descriptions = {name: sub.description for name, sub in subparsers().items()}
    for name in ("bench", "plan", "profile", "finetune"):
        assert "CPU" in descriptions[name], (name, descriptions[name])
    for name in ("profile", "finetune"):
        assert "GPU" in descriptions[name] and "--device cuda" in descriptions[name], descriptions[name]
    assert {c.NAME for c in COMMANDS} == set(descriptions)


# --- dnnx bench ----------------------------------------------------------------------------------

def test_bench_prints_its_header_before_timing(capsys, lenet, monkeypatch):
    seen = {}
    real = timing.time_interleaved

    def spy(runners, warmup, iters, progress=False):
        seen["stdout_before_timing"] = capsys.readouterr().out
        seen["progress"] = progress
        return real(runners, warmup, iters, progress=progress)

    monkeypatch.setattr(timing, "time_interleaved", spy)
    assert main(["bench", str(lenet), "--batch", "2", "--threads", "1", "--warmup", "1", "--iters", "2"]) == 0
    rest = capsys.readouterr().out
    header = "batch 2 (2 samples per call), 1 thread(s), 1 warm-up + 2 timed calls each"
    assert header in seen["stdout_before_timing"] and seen["progress"] is True
    assert header not in rest and re.search(r"^dnnx\s+[\d.]+", rest, re.M)  # printed once, results after


def test_bench_progress_bar_only_when_asked_or_on_a_terminal(capsys, lenet, monkeypatch):
    argv = ["bench", str(lenet), "--batch", "1", "--threads", "1", "--warmup", "1", "--iters", "3"]
    monkeypatch.delenv(progress.ENV, raising=False)
    assert main(argv) == 0
    assert capsys.readouterr().err == ""  # pytest's stderr is no terminal: quiet
    monkeypatch.setenv(progress.ENV, "1")
    assert main(argv) == 0
    err = capsys.readouterr().err
    # Drawn at the start and cleared at the end (tqdm redraws at most every 0.2 s in between).
    assert "warm-up:   0%" in err and "0/4" in err and "round" in err and err.endswith("\r"), err


# --- dnnx._progress ------------------------------------------------------------------------------

class Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.parametrize("env, tty, shown", [
    (None, False, False), (None, True, True), ("1", False, True), ("0", True, False), ("", True, True),
])
def test_progress_enabled(monkeypatch, env, tty, shown):
    if env is None:
        monkeypatch.delenv(progress.ENV, raising=False)
    else:
        monkeypatch.setenv(progress.ENV, env)
    monkeypatch.setattr("sys.stderr", Terminal() if tty else io.StringIO())
    assert progress.enabled() is shown


def test_progress_bar_draws_on_a_terminal_and_clears_itself(monkeypatch):
    monkeypatch.delenv(progress.ENV, raising=False)
    screen = Terminal()
    monkeypatch.setattr("sys.stderr", screen)
    with progress.bar(total=5, desc="epoch 1/2", unit="step") as b:
        for _ in range(5):
            b.set_postfix_str("loss 0.5")
            b.update()
    frames = screen.getvalue().split("\r")
    drawn = [f for f in frames if f.strip()]
    assert drawn[0].startswith("epoch 1/2:   0%|") and "0/5" in drawn[0], drawn
    assert any("loss 0.5" in f and "step/s" in f for f in drawn), drawn
    assert frames[-1] == "" and frames[-2].strip() == ""  # leave=False: the last frame blanks the line


def test_quiet_bar_takes_the_same_calls(monkeypatch):
    monkeypatch.setenv(progress.ENV, "0")
    with progress.bar(total=3, desc="x") as b:
        b.update()
        b.update(2)
        b.set_postfix_str("y")
        b.set_description_str("z")
    assert b.n == 3


def test_engines_take_turns_in_blocks(monkeypatch):
    """timing.time_interleaved: after the warm-up rounds, BLOCK timed calls per engine per turn,
    each block after settle() and one untimed call (so that onnxruntime's spinning threads never
    time into dnnx's calls), and `iters` timings per engine."""
    settled = []
    monkeypatch.setattr(timing, "settle", lambda: settled.append(1))
    order = []
    runners = {"a": lambda: order.append("a"), "b": lambda: order.append("b")}
    seconds = timing.time_interleaved(runners, warmup=1, iters=timing.BLOCK + 2)
    assert [len(v) for v in seconds.values()] == [timing.BLOCK + 2] * 2
    block = timing.BLOCK + 1
    assert order == ["a", "b"] + ["a"] * block + ["b"] * block + ["a"] * 3 + ["b"] * 3
    assert len(settled) == 4  # before each block


def test_settle_waits_for_a_busy_thread():
    """timing.settle returns once the process's other threads are idle (Note [settled turns]):
    not before a thread spinning for 50 ms has stopped."""
    import threading
    import time

    def spin(until):
        while time.perf_counter() < until:
            pass

    until = time.perf_counter() + 0.05
    worker = threading.Thread(target=spin, args=(until,))
    worker.start()
    timing.settle()
    assert time.perf_counter() >= until
    worker.join()
    assert timing.settle() < 0.05  # idle now: one window
