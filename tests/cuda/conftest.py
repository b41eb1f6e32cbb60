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


def pytest_collection_modifyitems(config, items):
    mine = [item for item in items if str(item.fspath).startswith(HERE + os.sep)]
    if not mine:
        return
    skip = None if dnnx.cuda_available() else pytest.mark.skip(reason=f"no CUDA: {dnnx.cuda_status()}")
    for item in mine:
        item.add_marker(pytest.mark.cuda)
        if skip:
            item.add_marker(skip)
