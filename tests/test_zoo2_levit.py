"""timm's LeViT-128S (../shared/external/zoo2/levit_128s.onnx, a dynamo export with GatherND
for its attention biases) against onnxruntime at batch 1 and 3, fed as tests/zoo_check.py feeds
the zoo2 files. Skips when the shared models are absent."""
import numpy as np
import pytest

import dnnx
from zoo_check import zoo2_inputs, zoo2_model


@pytest.mark.parametrize("batch", [1, 3])
def test_levit_matches_onnxruntime(batch):
    import onnxruntime as ort

    model = zoo2_model("levit_128s")
    x = zoo2_inputs("levit_128s", model, batch)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    first = sess.get_outputs()[0].name
    want = sess.run([first], x)[0]
    m = dnnx.load(model)  # refused before GatherND (which the import folds: its inputs are constants)
    got = m.run_dict(x)[first]
    assert got.shape == want.shape
    # relative to the output's largest magnitude (activations are O(1) by construction)
    assert np.max(np.abs(got - want)) / np.max(np.abs(want)) < 1e-4
