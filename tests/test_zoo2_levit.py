"""timm's LeViT-128S (../shared/external/zoo2/levit_128s.onnx, a dynamo export with GatherND
for its attention biases) against onnxruntime at batch 1 and 3. Skips when the shared models
are absent."""
import json
import sys
from pathlib import Path

import numpy as np
import pytest

import dnnx

ZOO2 = Path(__file__).resolve().parents[2] / "shared" / "external" / "zoo2"
ZOO = ZOO2.parent / "zoo"


def materialized(name):
    path = ZOO2 / f"{name}.onnx"
    if not path.is_file() or not (ZOO / "zoo_models.py").is_file():
        pytest.skip(f"{path} is not here (the shared zoo2 models are optional)")
    sys.path.insert(0, str(ZOO))
    import zoo_models

    return zoo_models.materialized(str(path))


@pytest.mark.parametrize("batch", [1, 3])
def test_levit_matches_onnxruntime(batch):
    import onnxruntime as ort

    model = materialized("levit_128s")
    spec = json.loads({p.key: p.value for p in model.metadata_props}["zoo.inputs"])[0]
    shape = [batch if d == 0 else d for d in spec["shape"]]
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = sess.run(None, {spec["name"]: x})[0]
    m = dnnx.load(model)  # refused before GatherND (which the import folds: its inputs are constants)
    got = m.run_dict({spec["name"]: x})[sess.get_outputs()[0].name]
    assert got.shape == want.shape
    # relative to the output's largest magnitude (activations are O(1) by construction)
    assert np.max(np.abs(got - want)) / np.max(np.abs(want)) < 1e-4
