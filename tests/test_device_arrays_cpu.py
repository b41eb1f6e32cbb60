"""What a CPU model says about device arrays (tests/cuda/test_cuda_device_arrays.py has the
GPU side): device inputs and output="device" are ValueErrors that say why, and every host array
path keeps working."""
import numpy as np
import pytest

import dnnx
from dnnx.examples import build
from ort_check import rand


class FakeCudaArray:
    """Claims GPU memory through __cuda_array_interface__ (never dereferenced)."""

    def __init__(self, shape, typestr="<f4"):
        self.__cuda_array_interface__ = {"shape": tuple(shape), "typestr": typestr, "data": (1 << 40, False),
                                         "version": 3, "strides": None}


class FakeDlpack:
    """A DLPack producer on cuda:0 (its capsule is never asked for on a CPU model)."""

    def __dlpack_device__(self):
        return (2, 0)

    def __dlpack__(self, stream=None):
        raise AssertionError("a CPU model must not ask for a CUDA capsule")


@pytest.fixture(scope="module")
def lenet():
    return dnnx.load(build("lenet"))


def test_device_inputs_are_refused_naming_the_input(lenet):
    for fake in (FakeCudaArray((2, 1, 28, 28)), FakeDlpack()):
        with pytest.raises(ValueError, match="input 'x'.*CUDA device memory.*runs on cpu"):
            lenet.run(fake)


def test_device_outputs_and_arrays_need_a_cuda_model(lenet):
    with pytest.raises(ValueError, match="CUDA device"):
        lenet.run(rand(1, 1, 28, 28), output="device")
    with pytest.raises(ValueError, match="CUDA device"):
        lenet.to_device(rand(1, 1, 28, 28))
    with pytest.raises(ValueError, match="output must be 'numpy' or 'device'"):
        lenet.run(rand(1, 1, 28, 28), output="cupy")
    assert lenet.graphs() == []


def test_host_inputs_of_every_kind(lenet):
    x = rand(2, 1, 28, 28)
    want = lenet.run(x)
    np.testing.assert_array_equal(lenet.run(np.asfortranarray(x)), want)  # copied to C order
    np.testing.assert_array_equal(lenet.run(x[::1]), want)
    np.testing.assert_array_equal(lenet.run_dict({"x": x}, output="numpy")["probs"], want)
    with pytest.raises(ValueError, match="input 'x': expected dtype float32, got float64"):
        lenet.run(x.astype(np.float64))


def test_device_array_is_exported():
    assert dnnx.DeviceArray is dnnx._core.DeviceArray
    assert "DeviceArray" in dnnx.__all__
    with pytest.raises(TypeError):
        dnnx.DeviceArray()
