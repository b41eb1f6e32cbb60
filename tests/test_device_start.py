"""Note [overlapped device start] (engine/runtime/device_start.h): dnnx.load opens the CUDA backend
on a thread of its own while it reads the model. What a machine without a usable device sees is
the same DeviceError as before the overlap, and it comes before any error of the model file."""
import numpy as np
import onnx
import pytest

import dnnx
from dnnx._importer import import_model
from dnnx._native import core
from dnnx.examples import build
from dnnx.errors import DeviceError

CUDA_HERE = dnnx.cuda_available()


def test_a_library_that_does_not_load_is_an_unavailable_probe(tmp_path):
    start = core.DeviceStart([], str(tmp_path / "libnothing.so"), core.device_options("cuda")[1])
    available, message = start.probe()
    assert not available
    assert "libnothing.so" in message and "cannot load" in message, message
    with pytest.raises(DeviceError, match="libnothing.so"):  # the engine that would take its backend
        core.Engine(import_model(build("lenet")).ir, "cuda", {}, started=start)


def test_preloads_that_do_not_exist_are_left_to_the_probe(tmp_path):
    start = core.DeviceStart([str(tmp_path / "libmissing.so.1")], str(tmp_path / "libnothing.so"),
                             core.device_options("cuda")[1])
    assert start.probe()[0] is False
    assert start.probe()[0] is False  # asked again: the same answer, no second wait


@pytest.mark.skipif(CUDA_HERE, reason="a machine without a usable CUDA device")
def test_an_unavailable_device_is_reported_before_a_bad_file(tmp_path):
    bad = tmp_path / "broken.onnx"
    bad.write_bytes(b"not an onnx file")
    for src in (str(bad), str(tmp_path / "missing.onnx"), build("lenet")):
        with pytest.raises(DeviceError, match="device 'cuda' is not available"):
            dnnx.load(src, device="cuda")


def test_an_option_error_comes_before_the_device_starts(tmp_path):
    with pytest.raises(ValueError, match="precision"):
        dnnx.load(build("lenet"), device="cuda", precision="fp8")


def test_cpu_loads_start_no_device(tmp_path):
    path = tmp_path / "lenet.onnx"
    onnx.save(build("lenet"), path)
    m = dnnx.load(str(path))
    assert m.run(np.zeros((1, 1, 28, 28), np.float32)).shape == (1, 10)
    assert set(m.load_profile()) >= {"device", "read", "engine: backend"}
