"""One local Ray instance per test module (test_ray_data.py, test_ray_serve.py): 2 CPUs, no
dashboard, workers that import this dnnx. Skips the module when Ray is not installed."""
import logging
import os

import pytest

import dnnx


def start_ray(extra_paths=(), **init):
    """ray.init(num_cpus=2) with PYTHONPATH and DNNX_DEV_BUILD made absolute for the workers (they
    start in folders of Ray's own, where a relative path means nothing); returns (ray, restore)."""
    ray = pytest.importorskip("ray")
    saved = {key: os.environ.get(key) for key in ("PYTHONPATH", "DNNX_DEV_BUILD")}
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(dnnx.__file__)))
    paths = [package_root, *map(os.path.abspath, extra_paths)]
    paths += [os.path.abspath(p) for p in (saved["PYTHONPATH"] or "").split(os.pathsep) if p]
    os.environ["PYTHONPATH"] = os.pathsep.join(paths)
    if saved["DNNX_DEV_BUILD"]:
        os.environ["DNNX_DEV_BUILD"] = os.path.abspath(saved["DNNX_DEV_BUILD"])
    ray.init(**{"num_cpus": 2, "include_dashboard": False, "log_to_driver": False, "logging_level": logging.WARNING,
                **init})

    def restore():
        ray.shutdown()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return ray, restore
