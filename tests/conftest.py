"""Fixtures shared by the CPU test modules."""
import pytest


@pytest.fixture
def nchw_kernels(monkeypatch):
    """The CPU's NCHW conv and pool kernels for every conv, whatever its width: the channels-last
    path (Note [channels-last conv on the cpu]) keeps only regions with a conv this wide, so none.
    The modules that pin an NCHW kernel's algorithm or bits use it; the channels-last kernels have
    their own tests (test_conv_channels_last_cpu.py)."""
    monkeypatch.setenv("DNNX_CONV_NHWC_MIN_CHANNELS", str(2**40))
