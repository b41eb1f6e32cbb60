"""Device arrays in and out of a CUDA model, without host copies: dnnx.DeviceArray, PyTorch CUDA
tensors through DLPack and __cuda_array_interface__ (skipped where torch is absent), the stream
order between PyTorch's work and dnnx's, the lifetime of output arrays, and the ValueErrors for
a wrong dtype, shape, layout or device."""
import gc
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import dnnx
from dnnx.examples import build
from ort_check import rand


@pytest.fixture(scope="module")
def lenet():
    return dnnx.load(build("lenet"), device="cuda")


@pytest.fixture(scope="module")
def torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA device")
    return torch


def test_device_array_round_trip(lenet):
    x = rand(8, 1, 28, 28)
    want = lenet.run(x)
    xd = lenet.to_device(x)
    assert (xd.shape, xd.dtype, xd.device, xd.nbytes, len(xd)) == ((8, 1, 28, 28), np.float32, "cuda:0", x.nbytes, 8)
    np.testing.assert_array_equal(xd.numpy(), x)
    for _ in range(3):  # eager, capture, replay
        y = lenet.run(xd, output="device")
        assert isinstance(y, dnnx.DeviceArray) and y.shape == (8, 10)
        np.testing.assert_array_equal(y.numpy(), want)
    np.testing.assert_array_equal(lenet.run(xd), want)  # device in, numpy out
    cai = y.__cuda_array_interface__
    assert cai["shape"] == (8, 10) and cai["typestr"] == "<f4" and cai["data"] == (y.data_ptr, False)
    assert cai["version"] == 3 and cai["strides"] is None
    assert y.__dlpack_device__() == (2, 0)
    assert "DeviceArray [8,10] float32 on cuda:0" in repr(y)


def test_output_arrays_outlive_their_model():
    x = rand(2, 1, 28, 28)
    y = dnnx.load(build("lenet"), device="cuda").run(x, output="device")
    gc.collect()
    np.testing.assert_allclose(y.numpy(), dnnx.load(build("lenet")).run(x), rtol=1e-4, atol=1e-6)


def test_torch_tensors_in_and_out_without_host_copies(lenet, torch):
    x = rand(16, 1, 28, 28)
    want = lenet.run(x)
    xt = torch.from_numpy(x).cuda()
    # a CUDA tensor has no host path (numpy refuses it), so a pass proves the device path
    np.testing.assert_array_equal(lenet.run(xt), want)
    y = lenet.run(xt, output="device")
    t = torch.from_dlpack(y)  # DLPack: PyTorch reads dnnx's memory in place
    assert t.is_cuda and t.data_ptr() == y.data_ptr and tuple(t.shape) == (16, 10)
    c = torch.as_tensor(y, device="cuda")  # __cuda_array_interface__: in place too
    assert c.data_ptr() == y.data_ptr
    del y
    gc.collect()  # the tensor keeps the memory alive
    np.testing.assert_array_equal(t.cpu().numpy(), want)
    # the output pool reuses freed memory: a later run must not write over the live tensor
    for _ in range(3):
        lenet.run(xt, output="device")
    np.testing.assert_array_equal(t.cpu().numpy(), want)


def test_torch_input_through_cuda_array_interface_only(lenet, torch):
    class Wrapped:  # what an older library offers: the interface and nothing else
        def __init__(self, tensor):
            self.tensor = tensor
            self.__cuda_array_interface__ = tensor.__cuda_array_interface__

    x = rand(4, 1, 28, 28)
    np.testing.assert_array_equal(lenet.run(Wrapped(torch.from_numpy(x).cuda())), lenet.run(x))


def test_input_written_on_a_torch_side_stream_is_waited_for(lenet, torch):
    # The producer's kernels are still queued on its current stream when run() is called: the
    # DLPack handshake (__dlpack__(stream=...)) must order them before dnnx's copy into the arena.
    x = rand(256, 1, 28, 28)
    want = lenet.run(x)
    side = torch.cuda.Stream()
    base = torch.from_numpy(x).cuda()
    torch.cuda.synchronize()
    for trial in range(3):
        with torch.cuda.stream(side):
            big = torch.randn(4096, 4096, device="cuda")
            for _ in range(20):  # milliseconds of work ahead of the write that matters
                big = big @ big * 1e-3
            xt = base + big[0, 0] * 0  # written last, on the side stream
            np.testing.assert_array_equal(lenet.run(xt), want, err_msg=f"trial {trial}")
    torch.cuda.synchronize()


def test_device_array_and_torch_outputs_from_many_threads(lenet, torch):
    xs = [rand(b, 1, 28, 28, seed=s) for s, b in enumerate([1, 8, 32, 8] * 6)]
    want = [lenet.run(x) for x in xs]
    devs = [lenet.to_device(x) if i % 2 else torch.from_numpy(x).cuda() for i, x in enumerate(xs)]
    torch.cuda.synchronize()
    with ThreadPoolExecutor(6) as pool:
        got = list(pool.map(lambda d: lenet.run(d, output="device"), devs))
    for i, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_array_equal(torch.from_dlpack(g).cpu().numpy(), w, err_msg=f"call {i}")


def test_wrong_device_inputs_are_value_errors_naming_the_input(lenet, torch):
    with pytest.raises(ValueError, match="input 'x': expected dtype float32, got float64"):
        lenet.run(torch.zeros(2, 1, 28, 28, dtype=torch.float64, device="cuda"))
    with pytest.raises(ValueError, match="input 'x'.*expected"):
        lenet.run(torch.zeros(2, 3, 28, 28, device="cuda"))
    with pytest.raises(ValueError, match="input 'x'.*C-contiguous"):
        lenet.run(torch.zeros(2, 1, 28, 56, device="cuda")[..., ::2])

    class HostPointer:  # claims device memory, points at the host
        def __init__(self, array):
            self.array = array
            self.__cuda_array_interface__ = {"shape": array.shape, "typestr": "<f4",
                                             "data": (array.ctypes.data, False), "version": 2}

    with pytest.raises(ValueError, match="input 'x': is on no CUDA device"):
        lenet.run(HostPointer(rand(2, 1, 28, 28)))
    x = rand(2, 1, 28, 28)  # and the model is fine afterwards
    np.testing.assert_allclose(lenet.run(torch.from_numpy(x).cuda()), dnnx.load(build("lenet")).run(x),
                               rtol=1e-4, atol=1e-6)


def test_dlpack_export_options(lenet, torch):
    y = lenet.run(rand(2, 1, 28, 28), output="device")
    copy = torch.from_dlpack(y.__dlpack__(copy=True))
    assert copy.data_ptr() != y.data_ptr
    np.testing.assert_array_equal(copy.cpu().numpy(), y.numpy())
    with pytest.raises(BufferError):
        y.__dlpack__(dl_device=(1, 0))
