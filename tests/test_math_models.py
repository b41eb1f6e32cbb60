"""The Hugging Face models of ../shared/external/zoo2 that issue #35's math ops unlock (BERT and
GPT-2 from torch's dynamo exporter stopped at IsNaN) against onnxruntime on the CPU, at batch 1
and 3, fed as the folder's PROVENANCE.md says. Skipped when the folder is absent."""
import json
import pathlib
import sys

import numpy as np
import pytest

import dnnx
from ort_check import run_ort

ZOO2 = pathlib.Path(__file__).resolve().parent.parent.parent / "shared" / "external" / "zoo2"
pytestmark = pytest.mark.skipif(not (ZOO2 / "bert.onnx").exists(), reason="../shared/external/zoo2 is absent")


def feeds(model, batch, seed=0):
    rng = np.random.default_rng(seed)
    specs = json.loads({p.key: p.value for p in model.metadata_props}["zoo.inputs"])
    out = {}
    for s in specs:
        shape = [batch if d == 0 else d for d in s["shape"]]
        if s["dtype"] == "int64":
            out[s["name"]] = rng.integers(0, s["high"], shape).astype(np.int64)
        elif s.get("unit"):
            out[s["name"]] = rng.random(shape).astype(np.float32)
        else:
            out[s["name"]] = rng.standard_normal(shape).astype(np.float32)
    return out


@pytest.mark.parametrize("name", ["bert", "gpt2"])
@pytest.mark.parametrize("batch", [1, 3])
def test_hugging_face_dynamo_export(name, batch):
    sys.path.insert(0, str(ZOO2.parent / "zoo"))
    from zoo_models import materialized

    model = materialized(str(ZOO2 / f"{name}.onnx"))
    x = feeds(model, batch)
    first = model.graph.output[0].name
    want = run_ort(model, x)[first]
    got = dnnx.load(model).run_dict(x)[first]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4 * float(np.abs(want).max()))
