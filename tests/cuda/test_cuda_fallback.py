"""The planner's fallback: a candidate that fails at plan time (not supported, or its workspace
cannot be allocated) gives way to the next one, the reason kept in plan(); an out-of-memory search
workspace retries smaller. Failures are forced with the test hooks DNNX_TEST_FAIL_ALGO and
DNNX_TEST_OOM_ABOVE (engine/backends/cuda/backend/test_hooks.h), read when a model opens."""
import pytest

import dnnx
from cuda_check import check_cuda
from dnnx.examples import build
from ort_check import rand

BATCH = 16
UNFUSED = {"fuse_conv_pool": False}
ALGOS = ("IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT", "FFT", "FFT_TILING", "WINOGRAD",
         "WINOGRAD_NONFUSED")


def conv_rows(**load_kwargs):
    # the convolutions as layers of their own (fuse_conv_pool off): the conv planner is under test
    plan = dnnx.load(build("lenet"), device="cuda", batch_size=BATCH, plan_cache=False, passes=UNFUSED,
                     **load_kwargs).plan()
    return [row for row in plan if row["op"].startswith("Conv")]


@pytest.mark.parametrize("failure", ["", ":oom"])
def test_a_failing_algorithm_gives_way_to_the_next(monkeypatch, failure):
    before = conv_rows()
    failing = before[1]["algorithm"]  # cuDNN's heuristic ranks the same way every time
    monkeypatch.setenv("DNNX_TEST_FAIL_ALGO", failing + failure)
    after = conv_rows()
    for old, new in zip(before, after):
        assert new["algorithm"] != failing, new
        if old["algorithm"] != failing:
            continue
        assert new["math"] == old["math"], (old, new)  # a fallback never changes the math
        reasons = [why for algo, why in new["rejected"] if algo == failing]
        if failure:
            assert len(reasons) == 1 and "could not be allocated at plan time (out of memory)" in reasons[0], new
        else:
            assert reasons == ["not supported (failure forced by DNNX_TEST_FAIL_ALGO)"], new
    check_cuda(build("lenet"), {"x": rand(BATCH, 1, 28, 28)}, plan_cache=False)


def test_an_exhaustive_search_falls_back_past_every_failing_candidate(monkeypatch):
    # Every algorithm but the slowest one that ran fails: whatever a new search times faster
    # than that one must show the forced failure, and the slowest is taken. (Timings vary from
    # search to search, so which ones come before it is not fixed; that they all fail is.)
    before = conv_rows(algo_search="exhaustive")
    ran = [algo for algo, why in before[1]["rejected"] if "slower than" in why or "within 10% of" in why]
    keep = ran[-1] if ran else before[1]["algorithm"]
    others = [a for a in ALGOS if a != keep]
    monkeypatch.setenv("DNNX_TEST_FAIL_ALGO", ",".join(others))
    row = conv_rows(algo_search="exhaustive")[1]
    assert row["algorithm"] == keep, row
    assert row["math"] == before[1]["math"]
    for algo, why in row["rejected"]:
        if algo in others:
            assert why == "not supported (failure forced by DNNX_TEST_FAIL_ALGO)" or "slower than " + keep in why, \
                (algo, why)
    forced = [algo for algo, why in row["rejected"] if "DNNX_TEST_FAIL_ALGO" in why]
    assert forced or keep == before[1]["algorithm"], row
    check_cuda(build("lenet"), {"x": rand(BATCH, 1, 28, 28)}, algo_search="exhaustive", plan_cache=False)


@pytest.mark.parametrize("search", ["heuristic", "exhaustive"])
def test_out_of_memory_at_plan_time_retries_with_less_workspace(monkeypatch, search):
    monkeypatch.setenv("DNNX_TEST_OOM_ABOVE", "0")  # only a zero-byte workspace "allocates"
    rows = conv_rows(algo_search=search)
    assert all(row["workspace"] == 0 for row in rows), rows
    reasons = [why for row in rows for _, why in row["rejected"]]
    assert any("out of memory" in why for why in reasons), rows
    if search == "exhaustive":
        notes = [why for row in rows for algo, why in row["rejected"] if algo == "search workspace"]
        assert all("searched within less" in why for why in notes)
    check_cuda(build("lenet"), {"x": rand(BATCH, 1, 28, 28)}, algo_search=search, plan_cache=False)


def test_when_every_candidate_fails_the_error_lists_them(monkeypatch):
    monkeypatch.setenv("DNNX_TEST_FAIL_ALGO", ",".join(ALGOS))
    with pytest.raises(dnnx.DeviceError, match="conv1.*no cuDNN convolution algorithm qualifies.*IMPLICIT_GEMM"):
        dnnx.load(build("lenet"), device="cuda", plan_cache=False)
