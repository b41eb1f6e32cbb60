"""The CPU thread pool (engine/backends/cpu/runtime/thread_pool.cc): results do not depend on the thread
count, runs from several Python threads at once, and dnnx.threads.set_num_threads."""
import os
import subprocess
import sys
import threading

import numpy as np
import pytest
from onnx import helper

import dnnx
from dnnx.examples import build
from dnnx.threads import blas_core_name, get_num_threads, set_num_threads
from ort_check import make_model, rand

THREAD_COUNTS = (1, 2, 3)


@pytest.fixture(autouse=True)
def restore_threads():
    before = get_num_threads()
    yield
    set_num_threads(before)


def load_with_threads(model, threads, **kwargs):
    set_num_threads(threads)  # kernels are split for the threads at plan time
    return dnnx.load(model, **kwargs)


def grouped_conv_model():
    # Every threaded kernel: a grouped, padded conv (batch split), MaxPool and AveragePool (planes),
    # and a Gemm large enough for sgemm to split.
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=2),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("MaxPool", ["r"], ["m"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("AveragePool", ["m"], ["a"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("Flatten", ["a"], ["f"]),
             helper.make_node("Gemm", ["f", "g"], ["y"], transB=1)]
    return make_model(nodes, [("x", [24, 8, 32, 32])], [("y", None)],
                      {"w": rand(16, 4, 3, 3, seed=1), "b": rand(16, seed=2), "g": rand(300, 16 * 16 * 16, seed=3)})


@pytest.mark.parametrize("name, make, shape", [
    ("lenet", lambda: build("lenet", seed=0), (64, 1, 28, 28)),
    ("grouped", grouped_conv_model, (24, 8, 32, 32)),
])
def test_results_equal_across_thread_counts(name, make, shape):
    # OpenBLAS picks its kernels per CPU, and their rounding at a block's edge is what a
    # thread-dependent split would expose: say which ones ran (pytest -s, or on failure).
    print(f"OpenBLAS core: {blas_core_name()}")
    model, x = make(), rand(*shape, seed=5)
    results = []
    for threads in THREAD_COUNTS:
        m = load_with_threads(model, threads, batch_size=shape[0]) if name == "lenet" else \
            load_with_threads(model, threads)
        results.append(m.run(x))
    for other in results[1:]:
        np.testing.assert_array_equal(other, results[0])  # bit-identical, not merely close


def gemm_model(m, k, n, trans_b):
    w = rand(n, k, seed=7) if trans_b else rand(k, n, seed=7)
    nodes = [helper.make_node("Gemm", ["x", "w"], ["y"], transB=int(trans_b))]
    return make_model(nodes, [("x", [m, k])], [("y", None)], {"w": w}), (w.T if trans_b else w)


# Wide (split by columns), tall (split by rows), ragged block edges, and 4-5 threads on 2 cores;
# one row (sgemv, split in smaller blocks: LeNet's fc1 at batch 1), either layout of B.
@pytest.mark.parametrize("m, k, n, trans_b", [(64, 800, 500, True), (2000, 300, 37, False),
                                              (333, 517, 1001, False), (8, 4096, 4000, True),
                                              (1, 800, 500, True), (1, 517, 1001, False)])
def test_large_gemm_equal_across_thread_counts(m, k, n, trans_b):
    print(f"OpenBLAS core: {blas_core_name()}")
    (model, w), x = gemm_model(m, k, n, trans_b), rand(m, k, seed=5)
    results = [load_with_threads(model, t).run(x) for t in (1, 2, 3, 4, 5)]
    for other in results[1:]:
        np.testing.assert_array_equal(other, results[0])
    # fp32 against float64: sums of k <= 4096 standard-normal products (|y| ~ 64) carry ~sqrt(k) ulp.
    np.testing.assert_allclose(results[0], x.astype(np.float64) @ w, rtol=1e-5, atol=2e-3)


def test_blas_core_name_is_reported():
    assert blas_core_name() and blas_core_name() != "unknown"


def conv_with_pads():
    # 12 channels: im2col+gemm (16 or more run on the packed tiles: Note [nchw convs on the tiles])
    node = helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])
    return make_model([node], [("x", ["N", 12, 12, 12])], [("y", None)], {"w": rand(50, 12, 5, 5, seed=1)})


def test_plan_names_threads_and_workspace_per_worker():
    model = build("lenet", seed=0)
    one = {r["name"]: r for r in load_with_threads(model, 1, batch_size=64).plan()}
    two = {r["name"]: r for r in load_with_threads(model, 2, batch_size=64).plan()}
    assert one["conv2"]["algorithm"] == "direct"
    assert two["conv2"]["algorithm"] == "direct x2 threads"
    assert one["conv2"]["workspace"] == two["conv2"]["workspace"] == 0  # it reads X in place
    assert two["pool1"]["algorithm"] in ("direct x2 threads", "direct 2x2 x2 threads")  # Note [max pool 2x2]
    # One image: the direct conv splits its filters instead.
    single = {r["name"]: r for r in load_with_threads(model, 2, batch_size=1).plan()}
    assert single["conv2"]["algorithm"] == "direct x2 threads"
    # An im2col conv (LeNet's conv2, padded) gives each worker its own col.
    padded = conv_with_pads()
    one = load_with_threads(padded, 1, batch_size=8).plan()[0]
    two = load_with_threads(padded, 2, batch_size=8).plan()[0]
    assert (one["algorithm"], two["algorithm"]) == ("im2col+gemm", "im2col+gemm x2 threads")
    assert two["workspace"] == 2 * one["workspace"]  # one col per worker
    # One image is not split (and its conv needs one col).
    single = load_with_threads(padded, 2, batch_size=1).plan()[0]
    assert single["algorithm"] == "im2col+gemm"
    assert single["workspace"] == one["workspace"]


def test_one_image_splits_its_im2col_rows():
    """Note [im2col across the pool]: one image of a large im2col conv (speech_gru's first: 1
    channel, 11x11, stride 2) splits its col's rows across the pool; the copies are the same
    values, so the output is the same bits as on 1 thread, and matches onnxruntime."""
    from ort_check import assert_matches_ort
    from thread_check import assert_same_bits_on_one_and_two_threads

    node = helper.make_node("Conv", ["x", "w", "b"], ["y"], pads=[5, 5, 5, 5], strides=[2, 2])
    model = make_model([node], [("x", [1, 1, 80, 100])], [("y", None)],
                       {"w": rand(16, 1, 11, 11, seed=2) * 0.1, "b": rand(16, seed=3)})
    assert load_with_threads(model, 1).plan()[0]["algorithm"] == "im2col+gemm"
    two = load_with_threads(model, 2).plan()[0]
    assert two["algorithm"] == "im2col+gemm x2 threads"
    assert two["workspace"] == 121 * 40 * 50 * 4  # still one col: the image's rows share it
    feeds = {"x": rand(1, 1, 80, 100, seed=4)}
    assert_same_bits_on_one_and_two_threads(model, feeds)
    assert_matches_ort(model, feeds)


@pytest.mark.parametrize("threads", [2, 3])
def test_concurrent_runs_from_python_threads(threads):
    # Several runs share one pool: one holds it, the others run on their own threads; every
    # result must still be the serial one.
    lenet = load_with_threads(build("lenet", seed=0), threads, batch_size=32)
    grouped = load_with_threads(grouped_conv_model(), threads)
    cases = [(lenet, rand(32, 1, 28, 28, seed=s)) for s in range(3)] + \
            [(grouped, rand(24, 8, 32, 32, seed=s)) for s in range(3)]
    expected = [m.run(x) for m, x in cases]
    errors = []

    def worker(i):
        try:
            m, x = cases[i % len(cases)]
            for _ in range(5):
                np.testing.assert_array_equal(m.run(x), expected[i % len(cases)])
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    pool = [threading.Thread(target=worker, args=(i,)) for i in range(2 * len(cases))]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    assert not errors, errors


def test_set_num_threads_round_trip_while_models_run():
    model = load_with_threads(build("lenet", seed=0), 2, batch_size=16)
    x = rand(16, 1, 28, 28)
    expected = model.run(x)
    for threads in (1, 4, 2, 3, 1):
        set_num_threads(threads)
        assert get_num_threads() == threads
        np.testing.assert_array_equal(model.run(x), expected)  # planned for 2, run on any


def test_default_is_the_available_cores():
    code = "import dnnx.threads as t; print(t.get_num_threads())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env=os.environ.copy()).stdout
    assert int(out) == len(os.sched_getaffinity(0))


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_set_num_threads_rejects(bad):
    with pytest.raises(ValueError, match="positive int"):
        set_num_threads(bad)


LATE_WORKERS = """
import sys, time
import numpy as np
import dnnx
from dnnx.examples import build
from dnnx.threads import set_num_threads
rng = np.random.default_rng(0)
xs = [rng.standard_normal((b, 1, 28, 28)).astype(np.float32) for b in (2, 3, 4, 6, 9, 12, 16, 32)]
set_num_threads(1)
want = [dnnx.load(build("lenet")).run(x) for x in xs]
set_num_threads(16)
model = dnnx.load(build("lenet"))
runs, end = 0, time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:
    for x, w in zip(xs, want):
        assert np.array_equal(model.run(x), w), f"batch {len(x)} differs after {runs} runs"
        runs += 1
print("ok", runs)
"""


def test_more_threads_than_cores_with_capped_layers():
    # Note [late workers] (thread_pool.cc): 16 threads on few cores, layers capped to fewer workers
    # back to back; a worker woken late once took a capped job's range under its own index and
    # wrote past the kernel's scratch (a heap corruption that aborted the process within seconds).
    # In a child process: an abort there fails this test instead of ending pytest.
    done = subprocess.run([sys.executable, "-c", LATE_WORKERS, "8"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.startswith("ok"), (done.returncode, done.stdout, done.stderr[-2000:])


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs 2 CPUs to step off")
def test_workers_keep_their_affinity_after_stepping_off():
    """Note [woken beside the caller]: a worker on the caller's CPU steps off it by narrowing its
    affinity and then restores it, so after many jobs (some after the pool went idle) every
    thread may still run on every CPU the process may."""
    import time

    allowed = os.sched_getaffinity(0)
    model = build("lenet", seed=0)
    m = load_with_threads(model, 2, batch_size=8)
    x = rand(8, 1, 28, 28, seed=1)
    for _ in range(5):
        for _ in range(10):
            m.run(x)
        time.sleep(0.01)  # the workers go to sleep: the next job wakes them
    for tid in os.listdir("/proc/self/task"):
        try:
            assert os.sched_getaffinity(int(tid)) == allowed
        except ProcessLookupError:  # a thread that ended meanwhile
            pass
