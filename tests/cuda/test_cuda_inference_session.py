"""dnnx.InferenceSession on CUDA (issue #16): the CUDA provider and its options (device_id,
cudnn_conv_algo_search, use_tf32), outputs against onnxruntime's CPU session at fp32 tolerances
(FMA math: FP32_RTOL/FP32_ATOL are summation-order bounds; fp32 here means no TF32), and
io_binding with device arrays (DeviceArray, onnxruntime's raw pointer form, torch via DLPack
where torch is present) with outputs left on the GPU."""
import numpy as np
import onnxruntime
import pytest

import dnnx
from dnnx.examples import build
from ort_check import FP32_ATOL, FP32_RTOL, rand

CUDA = "CUDAExecutionProvider"


@pytest.fixture(scope="module")
def lenet_bytes():
    return build("lenet", seed=0).SerializeToString()


def ort_probs(lenet_bytes, x):
    sess = onnxruntime.InferenceSession(lenet_bytes, providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x})[0]


@pytest.mark.parametrize("search", ["EXHAUSTIVE", "HEURISTIC", "DEFAULT"])
def test_cuda_provider_with_options(lenet_bytes, search):
    options = {"device_id": 0, "cudnn_conv_algo_search": search, "use_tf32": 0}
    sess = dnnx.InferenceSession(lenet_bytes, providers=[(CUDA, options), "CPUExecutionProvider"])
    assert sess.get_providers() == [CUDA, "CPUExecutionProvider"]
    assert sess.model.device == "cuda:0"
    x = rand(6, 1, 28, 28, seed=1)
    (got,) = sess.run(None, {"x": x})
    assert isinstance(got, np.ndarray)
    np.testing.assert_allclose(got, ort_probs(lenet_bytes, x), rtol=FP32_RTOL, atol=FP32_ATOL)


def test_provider_options_list_and_tf32(lenet_bytes):
    sess = dnnx.InferenceSession(lenet_bytes, providers=[CUDA], provider_options=[{"use_tf32": 1}])
    x = rand(4, 1, 28, 28, seed=2)
    (got,) = sess.run(None, {"x": x})
    np.testing.assert_allclose(got, ort_probs(lenet_bytes, x), rtol=1e-2, atol=1e-3)  # TF32: ~3 digits per product


def test_io_binding_keeps_outputs_on_the_gpu(lenet_bytes):
    sess = dnnx.InferenceSession(lenet_bytes, providers=[CUDA])
    x = rand(5, 1, 28, 28, seed=3)
    want = ort_probs(lenet_bytes, x)
    xd = sess.model.to_device(x)
    binding = sess.io_binding()
    binding.bind_input("x", xd)
    binding.bind_output("probs", "cuda")
    for _ in range(3):  # eager, capture, replay
        sess.run_with_iobinding(binding)
        (out,) = binding.get_outputs()
        assert isinstance(out, dnnx.DeviceArray) and out.shape == (5, 10)
        np.testing.assert_allclose(out.numpy(), want, rtol=FP32_RTOL, atol=FP32_ATOL)
    np.testing.assert_allclose(binding.copy_outputs_to_cpu()[0], want, rtol=FP32_RTOL, atol=FP32_ATOL)
    # onnxruntime's raw form over the same device memory
    binding.bind_input("x", "cuda", 0, np.float32, list(x.shape), xd.data_ptr)
    binding.bind_output("probs", "cpu")
    sess.run_with_iobinding(binding)
    np.testing.assert_allclose(binding.copy_outputs_to_cpu()[0], want, rtol=FP32_RTOL, atol=FP32_ATOL)
    assert binding.get_outputs()[0].device_name() == "cpu"


def test_io_binding_with_torch(lenet_bytes):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA device")
    sess = dnnx.InferenceSession(lenet_bytes, providers=[CUDA])
    x = rand(3, 1, 28, 28, seed=4)
    binding = sess.io_binding()
    binding.bind_input("x", torch.from_numpy(x).cuda())
    binding.bind_output("probs", "cuda")
    sess.run_with_iobinding(binding)
    got = torch.from_dlpack(binding.get_outputs()[0]).cpu().numpy()
    np.testing.assert_allclose(got, ort_probs(lenet_bytes, x), rtol=FP32_RTOL, atol=FP32_ATOL)
