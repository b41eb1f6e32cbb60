"""tests/cuda runs only where dnnx can use a GPU: every test here is marked `cuda` and skipped,
with dnnx.cuda_status()'s reason, on a machine without one (CI). The helpers shared with the CPU
tests (tests/ort_check.py) are imported from the folder above."""
import os
import sys
import tempfile

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import dnnx  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

# Exhaustive plans write the persistent plan cache; these tests keep theirs in a folder of their
# own, never in the user's ~/.cache (test_cuda_plan_cache.py points single models elsewhere).
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="dnnx-test-cache-")


@pytest.fixture
def fixed_layout(monkeypatch):
    """For tests of the channels_last pass's own forms: no plan is timed against its ONNX-layout
    twin at load (Note [measured layout], python/dnnx/_layout_choice.py), so that the plan is the
    pass's and no measurement on a toy model decides it."""
    from dnnx import _layout_choice

    monkeypatch.setattr(_layout_choice, "MIN_CONVERSIONS", float("inf"))


def pytest_collection_modifyitems(config, items):
    if PROGRESS and os.environ.get("DNNX_TEST_RESUME") and os.path.exists(PROGRESS):
        items[:] = _not_started(items)
    mine = [item for item in items if str(item.fspath).startswith(HERE + os.sep)]
    if not mine:
        return
    skip = None if dnnx.cuda_available() else pytest.mark.skip(reason=f"no CUDA: {dnnx.cuda_status()}")
    for item in mine:
        item.add_marker(pytest.mark.cuda)
        if skip:
            item.add_marker(skip)


# --- a crash-proof record for the GPU machine (scripts/gpu-check.sh) ------------------------------
# DNNX_TEST_PROGRESS=<file>: each test's start, outcome and (for failures) its report are appended
# as they happen, so that a segfault leaves the failures before it and the test it died in.
# DNNX_TEST_RESUME=1 with it: the tests that file shows as started are deselected, so that a rerun
# goes on after the crash (the one that crashed is marked "crashed" in the file).
PROGRESS = os.environ.get("DNNX_TEST_PROGRESS")


def _progress(line: str) -> None:
    with open(PROGRESS, "a") as f:
        f.write(line + "\n")


def _not_started(items) -> list:
    """The items the progress file shows no start of; the one that crashed is marked there."""
    started = set()
    last = None
    with open(PROGRESS) as f:
        for line in f:
            kind, _, nodeid = line.rstrip("\n").partition(" ")
            if kind == "start":
                started.add(nodeid)
                last = nodeid
            elif kind in ("passed", "failed", "skipped"):
                last = None if nodeid == last else last
    if last is not None:
        _progress(f"crashed {last}")
    return [item for item in items if item.nodeid not in started]


if PROGRESS:
    def pytest_runtest_logstart(nodeid, location):
        _progress(f"start {nodeid}")

    def pytest_runtest_logreport(report):
        if report.when == "call" or report.outcome != "passed":
            _progress(f"{report.outcome} {report.nodeid}")
            if report.failed:
                text = report.longreprtext.strip().splitlines()
                _progress("\n".join("    " + t for t in text[-25:]))
