"""The plan cache file under concurrent writers, with no GPU (issue #18; Note [plan cache lock] in
engine/backends/cuda/search/plan_cache.cc). The cache is host code inside libdnnx_cuda.so, which
loads without a GPU: its test entry points (backend/test_hooks.h) open a cache at a path as a model
does and store one entry, through ctypes. Eight processes store distinct and overlapping keys at
once while a reader parses the file over and over: no entry may be lost, the overlapping keys
hold one writer's value, the reader never sees a partial file, and no temporary file is left.
tests/cuda/test_cuda_plan_cache_processes.py does the same with real exhaustive searches on a GPU."""
import ctypes
import json
import os
import subprocess
import sys
import time

import pytest

import dnnx.cuda

LIBRARY = dnnx.cuda.library_path()
PROCESSES = 8
DISTINCT = 12  # keys only one process writes
SHARED = 6     # keys every process writes

pytestmark = pytest.mark.skipif(not os.path.exists(LIBRARY), reason=f"{LIBRARY} is not built")

# One writer: stores its distinct keys and the shared ones, interleaved, as fast as it can.
WRITER = """
import ctypes, sys
import dnnx.cuda
dnnx.cuda._preload_wheel_libraries()
lib = ctypes.CDLL(dnnx.cuda.library_path())
lib.dnnx_test_plan_cache_store.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                                           ctypes.c_size_t]
path, me, distinct, shared = sys.argv[1].encode(), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
message = ctypes.create_string_buffer(4096)
for j in range(max(distinct, shared)):
    keys = ([(f"process {me} key {j}", 1000 * me + j)] if j < distinct else []) + \\
           ([(f"shared key {j}", 1000 * me + 500 + j)] if j < shared else [])
    for key, algo in keys:
        if lib.dnnx_test_plan_cache_store(path, key.encode(), algo, message, len(message)) != 0:
            sys.exit("store failed: " + message.value.decode())
"""

# One reader: parses the file until told to stop; prints how many reads saw a whole document.
READER = """
import json, os, sys, time
path, stop = sys.argv[1], sys.argv[2]
whole = torn = 0
while not os.path.exists(stop):
    try:
        with open(path, "rb") as f:
            text = f.read()
    except FileNotFoundError:
        continue
    try:
        doc = json.loads(text)
        assert doc["format"] == "dnnx plan cache 1" and isinstance(doc["entries"], dict)
        whole += 1
    except (ValueError, KeyError, AssertionError):
        torn += 1
print(json.dumps({"whole": whole, "torn": torn}))
"""


def library():
    dnnx.cuda._preload_wheel_libraries()
    lib = ctypes.CDLL(LIBRARY)
    lib.dnnx_test_plan_cache_store.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                                               ctypes.c_size_t]
    lib.dnnx_test_plan_cache_find.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    return lib


def env():
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join(p for p in [os.path.dirname(os.path.dirname(dnnx.cuda.__file__)),
                                                  e.get("PYTHONPATH")] if p)
    return e


def test_a_store_and_a_fresh_read_through_the_test_entry_points(tmp_path):
    lib = library()
    path = str(tmp_path / "sub" / "plan-cache.json").encode()
    message = ctypes.create_string_buffer(1024)
    assert lib.dnnx_test_plan_cache_store(path, b"k1", 7, message, len(message)) == 0, message.value
    assert lib.dnnx_test_plan_cache_store(path, b"k2", 9, message, len(message)) == 0, message.value
    assert lib.dnnx_test_plan_cache_find(path, b"k1") == 7 and lib.dnnx_test_plan_cache_find(path, b"k2") == 9
    assert lib.dnnx_test_plan_cache_find(path, b"nothing") == -1
    assert (tmp_path / "sub" / "plan-cache.json.lock").exists()  # the sidecar every store locks
    doc = json.loads((tmp_path / "sub" / "plan-cache.json").read_text())
    assert doc["entries"]["k2"]["algo"] == 9 and doc["entries"]["k2"]["algorithm"] == "test algorithm 9"


def test_eight_processes_storing_at_once_lose_no_entry_and_no_reader_sees_a_partial_file(tmp_path):
    path = tmp_path / "plan-cache.json"
    stop = tmp_path / "stop"
    reader = subprocess.Popen([sys.executable, "-c", READER, str(path), str(stop)], stdout=subprocess.PIPE,
                              text=True, env=env())
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(me), str(DISTINCT), str(SHARED)],
                                stderr=subprocess.PIPE, text=True, env=env()) for me in range(PROCESSES)]
    failures = []
    for w in writers:
        _, err = w.communicate(timeout=240)
        if w.returncode != 0:
            failures.append(err)
    stop.touch()
    seen = json.loads(reader.communicate(timeout=60)[0])
    assert not failures, failures

    entries = json.loads(path.read_text())["entries"]
    missing = [f"process {me} key {j}" for me in range(PROCESSES) for j in range(DISTINCT)
               if f"process {me} key {j}" not in entries]
    assert not missing, f"{len(missing)} entries lost, e.g. {missing[:3]}"
    for me in range(PROCESSES):
        for j in range(DISTINCT):
            assert entries[f"process {me} key {j}"]["algo"] == 1000 * me + j
    for j in range(SHARED):  # the last writer of a key wins: some writer's whole value
        algo = entries[f"shared key {j}"]["algo"]
        assert algo % 1000 == 500 + j and 0 <= algo // 1000 < PROCESSES, algo
        assert entries[f"shared key {j}"]["algorithm"] == f"test algorithm {algo}"
    assert len(entries) == PROCESSES * DISTINCT + SHARED
    assert seen["torn"] == 0 and seen["whole"] > 0, seen
    leftovers = [p.name for p in tmp_path.iterdir() if ".tmp." in p.name]
    assert not leftovers, leftovers

    lib = library()  # a process opening the cache now reads every entry back
    assert all(lib.dnnx_test_plan_cache_find(str(path).encode(), f"process {me} key 3".encode()) == 1000 * me + 3
               for me in range(PROCESSES))


def test_a_lock_held_elsewhere_makes_a_store_wait_for_it(tmp_path):
    """The lock is what orders the stores: while another process holds it, a store does not
    write; once it is released, the store completes with both entries kept."""
    import fcntl

    lib = library()
    path = tmp_path / "plan-cache.json"
    message = ctypes.create_string_buffer(1024)
    assert lib.dnnx_test_plan_cache_store(str(path).encode(), b"first", 1, message, len(message)) == 0
    with open(str(path) + ".lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        store = subprocess.Popen([sys.executable, "-c", WRITER, str(path), "3", "1", "0"], env=env(),
                                 stderr=subprocess.PIPE, text=True)
        time.sleep(3.0)  # long enough for the child to import, open the library and reach the lock
        assert store.poll() is None, store.communicate()[1]  # still waiting for the lock
        assert "process 3 key 0" not in json.loads(path.read_text())["entries"]
        fcntl.flock(held, fcntl.LOCK_UN)
    assert store.wait(timeout=60) == 0, store.communicate()[1]
    entries = json.loads(path.read_text())["entries"]
    assert entries["first"]["algo"] == 1 and entries["process 3 key 0"]["algo"] == 3000
