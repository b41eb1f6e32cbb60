"""The plan cache under eight processes planning at once on the GPU (issue #18; Note [plan cache
lock] in engine/backends/cuda/search/plan_cache.cc): each loads LeNet with an exhaustive search at
its own batch size (distinct keys) and at one batch size they all share (overlapping keys), into
one cache file. No entry may be lost: afterwards each batch size's entries are all in the file,
and a new process at any of them times nothing. tests/test_plan_cache_file.py covers the file
logic with no GPU."""
import os
import subprocess
import sys

from test_cuda_plan_cache import SEARCHES, entries, in_new_process

PROCESSES = 8
SHARED_BATCH = 48

# One process: two exhaustive plans (its own batch, the shared one) into the cache at argv[1].
PROCESS = """
import sys
import dnnx
from dnnx.examples import build
for batch in (int(sys.argv[2]), int(sys.argv[3])):
    m = dnnx.load(build("lenet"), device="cuda", algo_search="exhaustive", batch_size=batch,
                  plan_cache=sys.argv[1], passes={"fuse_conv_pool": False})
    assert m.planner_stats()["plan_cache"] == sys.argv[1]
"""


def test_eight_processes_planning_at_once_lose_no_entry(tmp_path):
    cache = tmp_path / "plan-cache.json"
    own = [8 + 4 * i for i in range(PROCESSES)]  # 8, 12, ..., 36: none is SHARED_BATCH
    procs = [subprocess.Popen([sys.executable, "-c", PROCESS, str(cache), str(b), str(SHARED_BATCH)],
                              stderr=subprocess.PIPE, text=True, env=dict(os.environ)) for b in own]
    errors = [p.communicate(timeout=600)[1] for p in procs]
    assert all(p.returncode == 0 for p in procs), errors

    doc = entries(cache)
    assert len(doc) == SEARCHES * (PROCESSES + 1), sorted(doc)  # a batch size is a key of its own
    leftovers = [p.name for p in tmp_path.iterdir() if ".tmp." in p.name]
    assert not leftovers, leftovers
    for batch in own + [SHARED_BATCH]:  # every choice comes back: nothing is timed again
        stats = in_new_process(cache, batch)["stats"]
        assert stats["timing_runs"] == 0 and stats["cache_hits"] == SEARCHES, (batch, stats)
