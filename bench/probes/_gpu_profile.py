"""The per-layer GPU times of a model that the probe scripts compare (Model.profile: CUDA events in
a replayed graph), with environment variables set for the load only (DNNX_TEST_FAIL_ALGO to force
a candidate off). (Imported as `_gpu_profile`: the probes run as
`python bench/probes/<script>.py`, so bench/probes/ is sys.path[0].)"""
from __future__ import annotations

import os


def profile_on_gpu(model: bytes, x, repeat: int, env: dict | None = None, **options):
    """The ProfileTable of `model` on CUDA (no plan cache) over `repeat` runs on x, copied to the
    GPU first, with `env` set while the model loads and runs."""
    import dnnx

    env = env or {}
    saved = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    try:
        m = dnnx.load(model, device="cuda", plan_cache=False, **options)
        return m.profile(m.to_device(x), repeat=repeat)
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
