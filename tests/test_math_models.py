"""The Hugging Face models of ../shared/external/zoo2 that issue #35's math ops unlock (BERT and
GPT-2 from torch's dynamo exporter stopped at IsNaN) against onnxruntime on the CPU, at batch 1
and 3, fed as the folder's PROVENANCE.md says (tests/zoo_check.py). Skipped when the folder is absent."""
import numpy as np
import pytest

import dnnx
from ort_check import run_ort
from zoo_check import zoo2_inputs, zoo2_model


@pytest.mark.parametrize("name", ["bert", "gpt2"])
@pytest.mark.parametrize("batch", [1, 3])
def test_hugging_face_dynamo_export(name, batch):
    model = zoo2_model(name)
    x = zoo2_inputs(name, model, batch)
    first = model.graph.output[0].name
    want = run_ort(model, x)[first]
    got = dnnx.load(model).run_dict(x)[first]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4 * float(np.abs(want).max()))
