"""The CPU backend's kernel registrations as Model.kernels() shows them (runtime/backend.h,
KernelEntry): every op dnnx supports has a CPU kernel or is a view, and the capabilities are the
registered ones (the CPU kernels store float32)."""
import dnnx
from dnnx.examples import build


def test_every_supported_op_has_a_cpu_kernel_or_is_a_view():
    kernels = dnnx.load(build("lenet")).kernels()
    views = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Dropout"}
    missing = [op for op in dnnx.supported_ops() if op not in kernels and op not in views]
    assert not missing, missing
    assert "Conv" in kernels and "Gemm+Relu" in kernels  # fused types register like the rest


def test_cpu_capabilities():
    kernels = dnnx.load(build("lenet")).kernels()
    assert all(caps["dtypes"] == ["float32"] for caps in kernels.values())
    assert not any(caps["checks_nodes"] for caps in kernels.values())  # the CPU refuses no node form


def test_threads_module_is_reachable_from_the_package():
    assert dnnx.threads.get_num_threads() >= 1  # as the README shows: import dnnx; dnnx.threads...
