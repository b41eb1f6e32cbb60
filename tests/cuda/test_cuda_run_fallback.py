"""Note [run-time fallback] (engine/runtime/run_fallback.h): a kernel that fails when it runs gives
way to the next candidate (or the host), the run's result stays right, the model stays usable,
and plan() lists what failed under "fallbacks". A sticky CUDA error cannot be survived: it is a
DeviceError that says the process must restart. Failures are forced with the test hooks
DNNX_TEST_FAIL_ALGO=NAME:run and DNNX_TEST_FAULT_NODE (engine/backends/cuda/backend/test_hooks.h),
read when a model opens."""
import os
import subprocess
import sys
import textwrap

import pytest

import dnnx
from cuda_check import assert_close
from dnnx.examples import build
from ort_check import rand

BATCH = 16
UNFUSED = {"fuse_conv_pool": False}  # the convs as layers of their own
# Every candidate a LeNet conv may take: cuDNN's forward algorithms and the planner's own kernels.
CANDIDATES = ("IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT", "FFT", "FFT_TILING", "WINOGRAD",
              "WINOGRAD_NONFUSED", "direct (1 input channel)", "cublasLtMatmul (1x1 conv as a GEMM)",
              "direct depthwise")


def candidate(row) -> str:
    """The candidate name (KernelChoice::candidate) of a plan row's algorithm."""
    algorithm = row["algorithm"].replace("pad kernel + ", "")
    own = [name for name in CANDIDATES if " " in name and algorithm.startswith(name)]
    return own[0] if own else algorithm.split(" (")[0]


def lenet(**kwargs):
    return dnnx.load(build("lenet"), device="cuda", batch_size=BATCH, plan_cache=False, **kwargs)


def rows_of(model, op):
    return [row for row in model.plan() if row["op"].startswith(op)]


def reference(x):
    return dnnx.load(build("lenet"), batch_size=BATCH).run(x)


def test_a_conv_that_fails_at_run_time_gives_way_to_the_next_candidate(monkeypatch):
    planned = rows_of(lenet(passes=UNFUSED), "Conv")
    failing = [candidate(row) for row in planned]  # conv1: the direct kernel; conv2: a cuDNN algorithm
    monkeypatch.setenv("DNNX_TEST_FAIL_ALGO", ",".join(name + ":run" for name in failing))
    model = lenet(passes=UNFUSED)
    before = rows_of(model, "Conv")
    assert [row["algorithm"] for row in before] == [row["algorithm"] for row in planned]  # plans as usual
    assert all(row["fallbacks"] == [] for row in before)
    x = rand(BATCH, 1, 28, 28)
    want = reference(x)
    for _ in range(3):  # eager (the fallback happens here), then a graph capture, then a replay
        assert_close(model.run(x), want, "lenet after a run-time fallback")
    after = rows_of(model, "Conv")
    for old, new in zip(planned, after):
        # the planned kernel failed first; any next one that is on the list failed too (the hook
        # applies to every layer), until one that is not
        failed = [algo for algo, _ in new["fallbacks"]]
        assert failed[0] == old["algorithm"], new
        assert all(candidate({"algorithm": algo}) in failing for algo in failed), new
        for _, why in new["fallbacks"]:
            assert why.startswith("failed at run time: ") and "forced by DNNX_TEST_FAIL_ALGO" in why, why
        assert candidate(new) not in failing, new
        assert not new["algorithm"].startswith("on the host"), new  # cuDNN had other candidates
    assert "run-time fallback from" in str(model.plan())
    assert model.graphs()[0]["state"] == "captured", model.graphs()


def test_when_every_candidate_fails_at_run_time_the_layer_runs_on_the_host(monkeypatch):
    monkeypatch.setenv("DNNX_TEST_FAIL_ALGO", ",".join(name + ":run" for name in CANDIDATES))
    model = lenet(passes=UNFUSED)
    x = rand(BATCH, 1, 28, 28)
    assert_close(model.run(x), reference(x), "lenet with its convs on the host")
    for row in rows_of(model, "Conv"):
        assert row["algorithm"].startswith("on the host: "), row
        assert "run-time fallback" in row["algorithm"], row
        assert len(row["fallbacks"]) >= 2, row  # the planned kernel, then every cuDNN one it tried
    assert_close(model.run(x), reference(x), "the second run")


def test_a_gemm_whose_dense_rows_kernel_fails_at_run_time_takes_cublaslt(monkeypatch):
    planned = rows_of(lenet(), "Gemm")
    assert any(row["algorithm"].startswith("dense rows kernel") for row in planned), planned
    monkeypatch.setenv("DNNX_TEST_FAIL_ALGO", "dense rows kernel:run")
    model = lenet()
    x = rand(BATCH, 1, 28, 28)
    assert_close(model.run(x), reference(x), "lenet after the Gemm fallback")
    for old, new in zip(planned, rows_of(model, "Gemm")):
        if not old["algorithm"].startswith("dense rows kernel"):
            assert new["fallbacks"] == [], new
            continue
        assert [algo for algo, _ in new["fallbacks"]] == [old["algorithm"]], new
        assert new["algorithm"].startswith("cublasLtMatmul"), new


FAULT_SCRIPT = textwrap.dedent("""
    import numpy as np
    import dnnx
    from dnnx.examples import build
    model = dnnx.load(build("lenet"), device="cuda", batch_size=4, plan_cache=False)
    x = np.ones((4, 1, 28, 28), np.float32)
    for attempt in ("FIRST", "SECOND"):
        try:
            model.run(x)
            print(attempt, "no error")
        except dnnx.DeviceError as e:
            print(attempt, str(e).replace("\\n", " "))
    try:
        dnnx.load(build("lenet"), device="cuda", batch_size=4, plan_cache=False).run(x)
        print("RELOAD no error")
    except dnnx.DeviceError as e:
        print("RELOAD", str(e).replace("\\n", " "))
""")


@pytest.mark.parametrize("blocking", [False, True])
def test_a_sticky_error_is_a_device_error_that_says_restart(blocking):
    plan = dnnx.load(build("lenet"), device="cuda", batch_size=4, plan_cache=False).plan()
    layer = next(row for row in plan if row["op"].startswith("Conv"))
    env = dict(os.environ, DNNX_TEST_FAULT_NODE=layer["name"])
    if blocking:
        env["CUDA_LAUNCH_BLOCKING"] = "1"
    done = subprocess.run([sys.executable, "-c", FAULT_SCRIPT], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]  # no crash: every failure was an exception
    lines = {line.split(" ", 1)[0]: line.split(" ", 1)[1] for line in done.stdout.splitlines() if " " in line}
    for attempt in ("FIRST", "SECOND", "RELOAD"):
        assert "must restart" in lines[attempt] or "until the process restarts" in lines[attempt], (attempt, lines)
    assert "cudaErrorIllegalAddress" in lines["FIRST"], lines
    if blocking:  # each launch waits, so the error shows at the faulting layer
        assert lines["FIRST"].startswith(f"node '{layer['name']}'"), lines
    else:
        assert "CUDA_LAUNCH_BLOCKING=1" in lines["FIRST"], lines


def test_memory_limit_caps_what_the_model_holds():
    limit = 64 << 20
    model = lenet(memory_limit="64MiB")
    x = rand(BATCH, 1, 28, 28)
    assert_close(model.run(x), reference(x), "lenet under memory_limit")
    held = model.planner_stats()["device_bytes"]
    assert 1_000_000 < held <= limit, held  # LeNet's weights alone are about 1.7 MB


def test_memory_limit_refuses_a_plan_past_it_at_once():
    # the batch left symbolic (lenet() fixes it, and a fixed batch takes no other size)
    model = dnnx.load(build("lenet"), device="cuda", plan_cache=False, memory_limit="16MiB")
    with pytest.raises(ValueError, match="under memory_limit"):
        model.plan(batch_size=65536)  # an arena of about 1 GiB
    x = rand(BATCH, 1, 28, 28)
    assert_close(model.run(x), reference(x), "the model after the refused plan")


def test_memory_limit_below_the_weights_fails_at_load():
    with pytest.raises(dnnx.DeviceError, match="would pass memory_limit="):
        lenet(memory_limit="64KiB")


def test_an_exhaustive_search_keeps_within_memory_limit():
    model = lenet(memory_limit="24MiB", algo_search="exhaustive", passes=UNFUSED)
    x = rand(BATCH, 1, 28, 28)
    assert_close(model.run(x), reference(x), "an exhaustive plan under memory_limit")
    assert model.planner_stats()["device_bytes"] <= 24 << 20
