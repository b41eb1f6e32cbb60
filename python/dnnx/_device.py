"""The device a model runs on, and the options its backend takes, from ``dnnx.load``'s
arguments: ``device`` ("cpu", "cuda" or "cuda:N"), ``precision``, ``workspace_limit``,
``algo_search``, ``deterministic`` and ``plan_cache``."""
from __future__ import annotations

import os
import re

from . import cuda
from .errors import DeviceError

PRECISIONS = ("fp32", "tf32", "fp16")
ALGO_SEARCHES = ("heuristic", "exhaustive")
DEFAULT_WORKSPACE_LIMIT = 256 << 20

_UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "KIB": 1 << 10, "MIB": 1 << 20, "GIB": 1 << 30}


def parse_bytes(value, what: str = "workspace_limit") -> int:
    """An int (bytes) or a string such as "256MiB", "1.5 GB", "0"."""
    if isinstance(value, bool):
        raise ValueError(f"{what}: expected bytes as an int or a string like '256MiB', got {value!r}")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"{what}: must not be negative, got {value}")
        return value
    if isinstance(value, str):
        match = re.fullmatch(r"\s*(\d+(?:\.\d*)?)\s*([A-Za-z]*)\s*", value)
        if match and match.group(2).upper() in _UNITS:
            return int(float(match.group(1)) * _UNITS[match.group(2).upper()])
    raise ValueError(f"{what}: expected bytes as an int or a string like '256MiB', got {value!r}")


def default_plan_cache() -> str:
    """The plan cache file when ``plan_cache`` is not given: $XDG_CACHE_HOME/dnnx/plan-cache.json,
    or ~/.cache/dnnx/plan-cache.json."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "dnnx", "plan-cache.json")


def plan_cache_path(plan_cache) -> str:
    """The file the backend keeps exhaustive choices in; "" when the cache is off (False/None)."""
    if plan_cache is None or plan_cache is False:
        return ""
    if plan_cache is True:
        return default_plan_cache()
    if isinstance(plan_cache, (str, os.PathLike)):
        path = os.fspath(plan_cache)
        if path:
            return os.path.abspath(os.path.expanduser(path))
    raise ValueError(f"plan_cache: expected a file path, True (the default file) or False/None (off), got "
                     f"{plan_cache!r}")


def parse_device(device: str) -> tuple:
    """("cpu", 0) or ("cuda", N); DeviceError for any other device."""
    match = re.fullmatch(r"(cpu|cuda)(?::(\d+))?", device.strip().lower()) if isinstance(device, str) else None
    if not match or (match.group(1) == "cpu" and match.group(2) not in (None, "0")):
        raise DeviceError(f"device {device!r} is not supported ('cpu', 'cuda' or 'cuda:N')")
    return match.group(1), int(match.group(2) or 0)


def backend_options(device: str, precision: str = "fp32", workspace_limit=None, algo_search: str = "heuristic",
                    deterministic: bool = False, plan_cache=True) -> tuple:
    """(kind, options) for ``_core.Engine``. DeviceError when CUDA is asked for but unavailable."""
    kind, index = parse_device(device)
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
    if algo_search not in ALGO_SEARCHES:
        raise ValueError(f"algo_search must be one of {', '.join(ALGO_SEARCHES)}, got {algo_search!r}")
    limit = DEFAULT_WORKSPACE_LIMIT if workspace_limit is None else parse_bytes(workspace_limit)
    cache = plan_cache_path(plan_cache)
    if kind == "cpu":
        if precision != "fp32":
            raise ValueError(f"precision={precision!r} applies to device='cuda'; the CPU backend runs fp32")
        return kind, {}
    available, message = cuda._probe()
    if not available:
        raise DeviceError(f"device {device!r} is not available: {message}")
    return kind, {"library": cuda.library_path(), "device": index, "precision": precision,
                  "workspace_limit": limit, "algo_search": algo_search, "deterministic": bool(deterministic),
                  "plan_cache": cache}
