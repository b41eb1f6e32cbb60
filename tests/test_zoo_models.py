"""Every architecture of ../shared/external/zoo (torchvision CNNs, a 3-D video CNN, an LSTM, as
PyTorch's exporter writes them, batch symbolic) against onnxruntime at batch 1 and 3 on the CPU.
fp32 on both: only the summation order differs, over up to ~50 layers of O(1) activations, so
the bound is 1e-3 of the output's largest magnitude."""
import numpy as np
import pytest

import dnnx
from zoo_check import NAMES, ort_outputs, relative_error, zoo_model

FP32_BOUND = 1e-3


@pytest.mark.parametrize("name", NAMES)
def test_zoo_model_matches_onnxruntime(name):
    m = dnnx.load(zoo_model(name))
    for batch in (1, 3):
        x, want = ort_outputs(name, batch)
        got = m.run_dict({m.inputs[0].name: x})
        for out, value in want.items():
            assert got[out].shape == value.shape
            assert relative_error(got[out], value) < FP32_BOUND, f"{name} batch {batch} {out}"
