"""LeakyRelu's, Elu's, Selu's and Clip's gradients on CUDA against the CPU's
(test_cuda_layer_grads.py's oracle and tolerances; the CPU's are checked against float64 finite
differences in tests/test_gradients_param_activations.py), their slopes at the kinks, and
MobileNetV2 (Relu6 as Clip) fine-tuned whole on CUDA against the CPU."""
from __future__ import annotations

import numpy as np
import pytest

import dnnx
from test_cuda_layer_grads import assert_grad_close, check_cuda_gradients, rand
from test_gradients_param_activations import CASES, case_id, conv_then


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_gradient(case):
    model = conv_then(*case)
    check_cuda_gradients(model, ["w", "b"], {"x": rand(2, 2, 5, 5)}, rand(2, 3, 5, 5))


def test_slopes_at_the_kinks_match_the_cpu():
    from onnx import helper
    from ort_check import make_model

    x = np.array([-2.0, -0.0, 0.0, 1e-3, 2.0, 6.0, 7.0], np.float32)
    for op, attrs, extra in [("LeakyRelu", {"alpha": 0.1}, {}), ("Elu", {}, {}), ("Selu", {}, {}),
                             ("Clip", {}, {"lo": 0.0, "hi": 6.0}), ("Clip", {}, {"lo": 1.0, "hi": -1.0})]:
        inits = {"x0": x, **{k: np.array(v, np.float32) for k, v in extra.items()}}
        nodes = [helper.make_node("Add", ["z", "x0"], ["x"]), helper.make_node(op, ["x", *extra], ["y"], **attrs)]
        model = make_model(nodes, [("z", [7])], [("y", [7])], inits, opset=13)
        got = check_cuda_gradients(model, ["x0"], {"z": np.zeros(7, np.float32)}, np.full(7, -1.0, np.float32))
        assert np.isfinite(np.asarray(got["x0"])).all(), op


def test_zoo_mobilenet_v2_trains_whole_on_cuda():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    from _external_models import EXTERNAL, read_model

    if not (EXTERNAL / "zoo" / "mobilenet_v2.onnx").exists():
        pytest.skip("../shared/external/zoo is absent")
    model = read_model("zoo/mobilenet_v2.onnx")
    x = np.random.default_rng(4).standard_normal((2, 3, 224, 224)).astype(np.float32)
    labels = np.array([5, 9])
    _, want = dnnx.load(model).finetune(trainable="all").gradients(x, labels)
    _, got = dnnx.load(model, device="cuda").finetune(trainable="all").gradients(x, labels)
    assert set(got) == set(want)
    for name in want:  # ~50 layers of fp32 sums in other orders: looser than one layer's L2
        assert_grad_close(np.asarray(got[name]), np.asarray(want[name]), f"d{name}", atol=1e-4, l2=1e-3)
