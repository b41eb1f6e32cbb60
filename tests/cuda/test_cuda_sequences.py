"""Sequences and optionals on CUDA (Note [sequences] in engine/runtime/values/host_value.h): the
sequence and optional ops run on the host between plan stages, every stage's plan on the device;
results equal the CPU's. The models are tests/test_sequences.py's."""
import numpy as np

from onnx import helper

import dnnx
from test_sequences import F, _at_model, assert_same, model_of, seq_vi, vi


def _both(model, feeds):
    cpu = dnnx.load(model).run_dict(feeds)
    gpu_model = dnnx.load(model, device="cuda")
    gpu = gpu_model.run_dict(feeds)
    for name, want in cpu.items():
        assert_same(gpu[name], want)
    return gpu_model


def test_split_concat_on_cuda_matches_the_cpu():
    nodes = [helper.make_node("SplitToSequence", ["x"], ["s"], axis=1),
             helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0),
             helper.make_node("Relu", ["y"], ["z"])]
    x = np.random.default_rng(0).standard_normal((4, 6)).astype(np.float32)
    m = _both(model_of(nodes, [vi("x", F, [4, 6])], [vi("z"), seq_vi("s")]), {"x": x})
    assert any(r["algorithm"].startswith("staged:") for r in m.plan())


def test_sequence_input_on_cuda_matches_the_cpu():
    _both(_at_model(-1), {"seq": [np.full(2, k, np.float32) for k in range(3)]})
