"""Note [overlapped device start] (engine/runtime/device_start.h) on a GPU: the backend opened on its
own thread serves the engine built on the caller's, a file's error still surfaces as that error
while the device opens, and a started backend is taken once."""
import numpy as np
import pytest

import dnnx
from cuda_check import check_cuda
from dnnx._importer import import_model
from dnnx._native import core
from dnnx.cuda import library_path, wheel_library_paths
from dnnx.errors import DeviceError
from dnnx.examples import build
from ort_check import rand


@pytest.mark.parametrize("device", ["cuda", "cuda:0"])
def test_the_started_backend_runs_the_model(device):
    m = dnnx.load(build("lenet"), device=device, plan_cache=False)
    x = rand(4, 1, 28, 28, seed=3)
    np.testing.assert_allclose(m.run(x), dnnx.load(build("lenet")).run(x), rtol=1e-4, atol=1e-5)
    profile = m.load_profile()
    assert profile["engine: backend"] >= 0 and profile["device start: probe wait"] >= 0, profile
    assert profile["device start: probe"] > 0 and profile["device start: open"] > 0, profile  # the thread's steps


def test_a_bad_file_is_its_own_error_while_the_device_opens(tmp_path):
    bad = tmp_path / "broken.onnx"
    bad.write_bytes(b"not an onnx file")
    with pytest.raises(Exception) as caught:
        dnnx.load(str(bad), device="cuda")
    assert not isinstance(caught.value, DeviceError), caught.value
    assert "broken.onnx" in str(caught.value)
    check_cuda(build("lenet"), {"x": rand(2, 1, 28, 28, seed=4)})  # the process's device still serves


def test_a_started_backend_is_taken_once():
    start = core.DeviceStart(wheel_library_paths(), library_path(), core.device_options("cuda")[1])
    available, message = start.probe()
    assert available, message
    ir = import_model(build("lenet")).ir
    options = {"library": library_path(), "device_options": core.device_options("cuda")[1]}
    engine = core.Engine(ir, "cuda", options, started=start)
    assert engine.load_phases()["engine: backend"] >= 0
    with pytest.raises(DeviceError, match="already taken"):
        core.Engine(ir, "cuda", options, started=start)
