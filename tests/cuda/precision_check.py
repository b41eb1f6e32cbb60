"""One layer's result against its reference with the tolerance of the precision it ran at:
cuda_check.py's fp32 bounds for fp32 and for kernels that sum in fp32 FMAs whatever tf32 permits,
test_cuda_fp16.py's and test_cuda_bf16.py's one-layer bounds for the half types (each derived
there)."""
from cuda_check import assert_close
from test_cuda_bf16 import assert_bf16_close
from test_cuda_fp16 import assert_fp16_close


def assert_layer_close(precision: str, got, want, what: str) -> None:
    if precision == "fp16":
        assert_fp16_close(got, want, what)
    elif precision == "bf16":
        assert_bf16_close(got, want, what)
    else:
        assert_close(got, want, what)
