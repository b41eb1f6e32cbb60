"""The README's examples are what a real run prints (issue #34): the plan table and the memory()
dict of its Python API section, under dnnx.threads.set_num_threads(1) (the README's LeNet is
`dnnx models lenet`'s, seed 0), the Model repr, and `dnnx info lenet.onnx`'s report. Each block
is parsed out of README.md, so an edit to either side that makes them differ fails here."""
import ast
import re
from pathlib import Path

import onnx
import pytest

import dnnx
from dnnx.cli import main
from dnnx.examples import build
from dnnx.threads import get_num_threads, set_num_threads

README = Path(__file__).resolve().parent.parent / "README.md"


def block_after(marker: str) -> str:
    """The first fenced block that opens after the line holding ``marker`` (which may sit inside
    a block of its own), without its fences."""
    lines = README.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if marker in line)
    fences = [i for i, line in enumerate(lines) if line.startswith("```")]
    inside = sum(1 for i in fences if i < at) % 2 == 1
    after = [i for i in fences if i > at][1 if inside else 0:]
    assert len(after) >= 2, f"no fenced block after {marker!r} in README.md"
    return "\n".join(lines[after[0] + 1:after[1]])


def comment_after(marker: str) -> str:
    """The ``# ...`` comment on the line after ``marker`` (the README's way to show a value)."""
    lines = README.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if marker in line)
    comment = lines[at + 1].strip()
    assert comment.startswith("# "), comment
    return comment[2:]


@pytest.fixture(scope="module")
def lenet(tmp_path_factory):
    path = tmp_path_factory.mktemp("models") / "lenet.onnx"
    onnx.save(build("lenet", seed=0), path)  # what `dnnx models lenet --out lenet.onnx` writes
    return path


@pytest.fixture
def one_thread():
    before = get_num_threads()
    set_num_threads(1)
    yield
    set_num_threads(before)


def test_the_plan_example_is_what_plan_prints(lenet, one_thread):
    shown = block_after("print(m.plan(batch_size=4))")
    printed = [line.rstrip() for line in str(dnnx.load(lenet).plan(batch_size=4)).splitlines()]
    shown = [line.rstrip() for line in shown.splitlines()]
    for machine_dependent in ("not channels-last", "not packed gemm"):  # a CPU without AVX-512: no such path
        if not any(machine_dependent in line for line in printed):
            shown = [line for line in shown if machine_dependent not in line]
    if not any("(avx512)" in line for line in printed):  # no AVX-512 here (or no packed path at all)
        # The README shows an AVX-512 CPU's plan (its packed GEMM and 2x2 pool kernels); another CPU
        # plans other kernels for the same layers: the layers, ops and shapes must still agree.
        columns = lambda lines: [re.split(r"  +", line)[:4] for line in lines[2:] if not line.startswith("  ")]  # noqa: E731
        assert columns(printed) == columns(shown)
        return
    assert printed == shown


def test_the_memory_example_is_what_memory_returns(lenet, one_thread):
    shown = ast.literal_eval(comment_after("m.memory(batch_size=4)"))
    m = dnnx.load(lenet)
    got = m.memory(batch_size=4)
    if any("no AVX-512" in why for row in m.plan(batch_size=4) for _, why in row["rejected"]):
        # the workspace is the kernels' (the README's is an AVX-512 CPU's packed GEMM); the arena is the plan's
        got, shown = dict(got, workspace_bytes=None), dict(shown, workspace_bytes=None)
    assert got == shown


def test_the_model_repr_example(lenet):
    assert repr(dnnx.load(lenet)) == comment_after("print(m)")


def test_the_info_example_is_what_info_prints(lenet, capsys):
    shown = block_after("`dnnx info lenet.onnx`, as seen here:").splitlines()
    assert main(["info", str(lenet)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == f"model: {lenet}" and shown[0].startswith("model: ")  # the path is the caller's
    assert printed[1:] == shown[1:]
