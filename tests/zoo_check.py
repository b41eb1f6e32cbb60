"""The 13 architectures of ../shared/external/zoo (PyTorch exports with a symbolic batch, weights
materialized from a seed) and how dnnx's outputs compare with onnxruntime's on them."""
import sys
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

ZOO = Path(__file__).resolve().parents[2] / "shared" / "external" / "zoo"
NAMES = ["convnext_tiny", "densenet121", "efficientnet_b0", "fcn_resnet50", "googlenet", "lstm_bi",
         "mobilenet_v2", "mobilenet_v3_small", "r3d_18", "resnet18", "shufflenet_v2_x1_0", "squeezenet1_1",
         "vgg11_bn"]


@lru_cache(maxsize=2)
def zoo_model(name):
    path = ZOO / f"{name}.onnx"
    if not path.is_file():
        pytest.skip(f"{path} is not here (the shared zoo models are optional)")
    sys.path.insert(0, str(ZOO))
    import zoo_models

    return zoo_models.materialized(str(path))


def zoo_model_at(name, side):
    """A copy of zoo_model(name) whose input's spatial dims are fixed at `side` (a small image for
    a quick test; the cached model stays as it is)."""
    import onnx

    model = onnx.ModelProto()
    model.CopyFrom(zoo_model(name))
    for dim in model.graph.input[0].type.tensor_type.shape.dim[2:]:
        dim.dim_value = side
    return model


def zoo_input(model, batch, seed=0):
    dims = [d.dim_value if d.HasField("dim_value") else batch for d in model.graph.input[0].type.tensor_type.shape.dim]
    return np.random.default_rng(seed).standard_normal(dims).astype(np.float32)


@lru_cache(maxsize=4)
def ort_outputs(name, batch):
    import onnxruntime as ort

    model = zoo_model(name)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    x = zoo_input(model, batch)
    return x, dict(zip([o.name for o in sess.get_outputs()], sess.run(None, {model.graph.input[0].name: x})))


def relative_error(got, want):
    """max |got - want| over max |want|: the activations are O(1) by construction (PROVENANCE.md)."""
    return float(np.max(np.abs(got.astype(np.float64) - want)) / max(float(np.max(np.abs(want))), 1e-30))



ZOO2 = ZOO.parent / "zoo2"


def zoo2_model(name):
    """A zoo2 file as its PROVENANCE.md says (bench/_external_models.py's reader, the sweep's):
    float weights materialized from the seed, the quantized q_* files with their own."""
    if not (ZOO2 / f"{name}.onnx").is_file():
        pytest.skip(f"{ZOO2 / name}.onnx is not here (the shared zoo2 models are optional)")
    from bench_modules import bench_module

    return bench_module("_external_models").read_model(f"zoo2/{name}.onnx", ZOO.parent)


def zoo2_inputs(name, model, batch):
    """{input name: array} of zoo2/NAME.onnx from its metadata_props["zoo.inputs"], drawn as the
    sweep draws them (bench/_external_models.py: seeded by the file and the batch)."""
    from bench_modules import bench_module

    feeds, _ = bench_module("_external_models").make_inputs(f"zoo2/{name}.onnx", model, batch)
    return feeds
