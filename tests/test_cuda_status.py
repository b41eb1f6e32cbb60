"""The CUDA backend's availability checks and device options: everything that needs no GPU, so
that it runs in CI (tests/cuda needs a GPU)."""
import os

import pytest

import dnnx
from dnnx import cuda
from dnnx._native import core
from dnnx.examples import build


def test_status_is_one_line_that_says_available_or_why_not():
    status = dnnx.cuda_status()
    assert status.startswith("available: " if dnnx.cuda_available() else "unavailable: ")
    assert "\n" not in status and len(status) > len("unavailable: ")


def test_cuda_load_without_cuda_is_a_device_error_with_the_reason():
    if dnnx.cuda_available():
        pytest.skip("CUDA is available here")
    with pytest.raises(dnnx.DeviceError, match="not available"):
        dnnx.load(build("lenet"), device="cuda")


def test_cpu_still_works_whatever_the_cuda_status():
    model = dnnx.load(build("lenet"))
    assert model.run(__import__("numpy").ones((1, 1, 28, 28), "float32")).shape == (1, 10)


def test_missing_library_is_reported_as_not_built(monkeypatch, tmp_path):
    monkeypatch.setenv("DNNX_DEV_BUILD", str(tmp_path))
    assert cuda.library_path() == str(tmp_path / cuda.LIBRARY_NAME)
    assert dnnx.cuda_status().startswith("unavailable: not built")
    assert not dnnx.cuda_available()


def test_unloadable_library_is_reported_with_the_loader_message(monkeypatch, tmp_path):
    (tmp_path / cuda.LIBRARY_NAME).write_bytes(b"not an ELF file")
    monkeypatch.setenv("DNNX_DEV_BUILD", str(tmp_path))
    status = dnnx.cuda_status()
    assert status.startswith("unavailable: cannot load") and cuda.LIBRARY_NAME in status


def options_of(**kwargs):
    """core.device_options: every dnnx.load option parsed and checked once, in C++."""
    return core.device_options(**kwargs)


@pytest.mark.parametrize("device,parsed", [("cpu", ("cpu", 0)), ("cuda", ("cuda", 0)), ("cuda:3", ("cuda", 3)),
                                           ("CUDA:1", ("cuda", 1)), (" cuda:2 ", ("cuda", 2))])
def test_parse_device(device, parsed):
    kind, options = options_of(device=device)
    assert (kind, options.device) == parsed


@pytest.mark.parametrize("device", ["tpu", "cuda:", "cuda:-1", "cpu:1", "", None, 0])
def test_unknown_devices_are_device_errors(device):
    with pytest.raises(dnnx.DeviceError, match="not supported"):
        options_of(device=device)


@pytest.mark.parametrize("text,expected", [(0, 0), (1024, 1024), ("256MiB", 256 << 20), ("1.5 GiB", 3 << 29),
                                           ("64 KB", 64000), ("0", 0), (None, None)])
def test_parse_bytes(text, expected):
    assert options_of(device="cuda", workspace_limit=text)[1].workspace_limit == expected


@pytest.mark.parametrize("bad", [-1, "lots", "12 XB", True, 1.5])
def test_parse_bytes_rejects(bad):
    with pytest.raises(ValueError, match="workspace_limit"):
        options_of(device="cuda", workspace_limit=bad)


@pytest.mark.parametrize("text,expected", [(None, 0), ("2GiB", 2 << 30), (1 << 20, 1 << 20)])
def test_memory_limit_parses_like_workspace_limit(text, expected):
    options = options_of(device="cuda", memory_limit=text)[1]
    assert options.memory_limit == expected and f"memory_limit={expected}" in repr(options)


@pytest.mark.parametrize("bad", [-1, "lots", True, 2.5])
def test_memory_limit_rejects_what_is_not_bytes(bad):
    with pytest.raises(ValueError, match="memory_limit"):
        dnnx.load(build("lenet"), device="cuda", memory_limit=bad)  # checked before the device is looked for


def test_memory_limit_is_refused_on_the_cpu():
    with pytest.raises(ValueError, match="memory_limit applies to device='cuda'"):
        dnnx.load(build("lenet"), memory_limit="1GiB")


def test_plan_rows_carry_no_fallbacks_on_the_cpu():
    assert all(row["fallbacks"] == [] for row in dnnx.load(build("lenet")).plan())


def test_option_names_and_defaults_come_from_one_place():
    kind, o = options_of()
    assert kind == "cpu" and o.precision == core.Precision.fp32 and o.algo_search == core.AlgoSearch.auto
    assert o.workspace_limit is None and "workspace_limit=None" in repr(o)  # the backend's default
    assert core.precision_names() == ["fp32", "tf32", "fp16", "bf16"]
    assert core.algo_search_names() == ["auto", "heuristic", "exhaustive", "background"]
    assert [m for m in core.AlgoSearch.__members__] == core.algo_search_names()
    assert [m for m in core.Precision.__members__] == core.precision_names()
    o = options_of(device="cuda:1", precision="tf32", algo_search="exhaustive", deterministic=True, plan_cache=False)[1]
    assert (o.device, o.precision, o.algo_search, o.deterministic, o.plan_cache) == \
        (1, core.Precision.tf32, core.AlgoSearch.exhaustive, True, "")
    assert o.with_deterministic(False).deterministic is False and o.deterministic is True
    assert "precision='tf32'" in repr(o)
    with pytest.raises(ValueError, match="precision must be one of fp32, tf32, fp16, bf16, got 'fp64'"):
        options_of(device="cuda", precision="fp64")


def test_cuda_options_are_checked_before_the_device():
    with pytest.raises(ValueError, match="precision"):
        dnnx.load(build("lenet"), device="cuda", precision="fp64")
    with pytest.raises(ValueError, match="algo_search"):
        dnnx.load(build("lenet"), device="cuda", algo_search="guess")
    with pytest.raises(ValueError, match="CPU backend runs fp32"):
        dnnx.load(build("lenet"), precision="fp16")


def test_plan_rows_carry_a_math_field():
    row = dnnx.load(build("lenet")).plan()[0]
    assert "math" in row


def test_plan_cache_option(tmp_path, monkeypatch):
    def path(value):
        return options_of(device="cuda", plan_cache=value)[1].plan_cache

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert path(True) == str(tmp_path / "dnnx" / "plan-cache.json")
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert path(True).endswith(os.path.join(".cache", "dnnx", "plan-cache.json"))
    assert path(False) == "" and path(None) == ""
    assert path(tmp_path / "p.json") == str(tmp_path / "p.json")
    monkeypatch.chdir(tmp_path)
    assert path("rel/p.json") == str(tmp_path / "rel" / "p.json")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert path("~/q.json") == str(tmp_path / "q.json")
    for bad in (3, ""):
        with pytest.raises(ValueError, match="plan_cache"):
            path(bad)


def test_cpu_planner_stats_are_zero():
    stats = dnnx.load(build("lenet"), plan_cache=False).planner_stats()
    assert stats == {"timing_runs": 0, "cache_hits": 0, "cache_misses": 0, "cache_stale": 0, "cache_writes": 0,
                     "search_seconds": 0, "plan_cache": None, "plans_built": 1, "plans_reused": 0,
                     "plans_evicted": 0, "plans_kept": 1, "max_plans": 64, "stages": [], "plans_kept_total": 1}
