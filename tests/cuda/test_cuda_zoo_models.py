"""Every architecture of ../shared/external/zoo on CUDA against onnxruntime (CPU) at batch 1 and 3.
Bounds, as a fraction of the output's largest magnitude (activations are O(1)): fp32 1e-3 (the
summation order); tf32 3e-2 (10-bit mantissas in every conv/GEMM product, over ~50 layers); fp16
5e-2 (half storage of every activation as well); bf16 0.2 (8 significant bits against fp16's 11).
fp16 and bf16 load with measure_precision=False, so that the half path is what is compared."""
import numpy as np
import pytest

import dnnx
from zoo_check import NAMES, ort_outputs, relative_error, zoo_model

BOUNDS = {"fp32": 1e-3, "tf32": 3e-2, "fp16": 5e-2, "bf16": 0.2}


@pytest.mark.parametrize("precision", list(BOUNDS))
@pytest.mark.parametrize("name", NAMES)
def test_zoo_model_on_cuda(name, precision):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dnnx.HostFallbackWarning)  # reported by plan(), tested elsewhere
        m = dnnx.load(zoo_model(name), device="cuda", precision=precision, measure_precision=False)
    for batch in (1, 3):
        x, want = ort_outputs(name, batch)
        got = m.run_dict({m.inputs[0].name: x})
        for out, value in want.items():
            assert got[out].shape == value.shape
            assert np.all(np.isfinite(got[out])), f"{name} {precision} batch {batch} {out}: non-finite"
            assert relative_error(got[out], value) < BOUNDS[precision], f"{name} {precision} batch {batch} {out}"
