"""LeakyRelu's, Elu's, Selu's and Clip's backward on the CPU against float64 finite differences
(tests/grad_check.py): a trainable Conv before each, so the gradient flows through it. Inputs are
kept away from the kinks (x = 0, Clip's bounds), where a central difference straddles two slopes;
the kinks themselves are checked exactly (PyTorch's rules: at 0 the x <= 0 slope, at a bound 0)."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from grad_check import check_gradients
from ort_check import make_model
from seeded_rand import SeededRand

import dnnx

rand = SeededRand()


@pytest.fixture(autouse=True)
def seeded_rng(request):
    rand.reseed(request.node.nodeid)


def bounds(lo, hi):
    """Clip's min and max as opset-13 inputs (None: absent)."""
    inits = {}
    names = []
    for name, value in (("lo", lo), ("hi", hi)):
        names.append(name if value is not None else "")
        if value is not None:
            inits[name] = np.array(value, np.float32)
    return names, inits


# (op, attributes, opset, Clip's (min, max) as inputs)
CASES = [
    ("LeakyRelu", {}, 13, None),
    ("LeakyRelu", {"alpha": 0.3}, 13, None),
    ("Elu", {}, 13, None),
    ("Elu", {"alpha": 0.5}, 13, None),
    ("Selu", {}, 13, None),
    ("Selu", {"alpha": 1.2, "gamma": 0.9}, 13, None),
    ("Clip", {"min": -0.5, "max": 0.6}, 6, None),       # bounds as attributes
    ("Clip", {}, 13, (-0.5, 0.6)),
    ("Clip", {}, 13, (0.0, None)),                       # min only: a Relu
    ("Clip", {}, 13, (None, 0.3)),                       # max only
]


def case_id(case):
    op, attrs, opset, clip = case
    return f"{op}-opset{opset}-" + "-".join(f"{k}{v}" for k, v in attrs.items()) + (f"-inputs{clip}" if clip else "")


def conv_then(op, attrs, opset, clip):
    inits = {"w": rand(3, 2, 3, 3, scale=0.5), "b": rand(3, scale=0.1)}
    act_inputs = ["c"]
    if clip:
        names, values = bounds(*clip)
        act_inputs += names
        inits.update(values)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node(op, act_inputs, ["y"], **attrs)]
    return make_model(nodes, [("x", [2, 2, 5, 5])], [("y", [2, 3, 5, 5])], inits, opset=opset)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_gradient(case):
    model = conv_then(*case)
    check_gradients(model, ["w", "b"], {"x": rand(2, 2, 5, 5)}, rand(2, 3, 5, 5))


def kink_gradient(op, attrs, x, opset=13, extra=()):
    """d(sum(y * t)) / dx0 at x0 = x, through Add(z, x0) -> op, t = 1: the slope at each x."""
    inits = {"x0": x}
    inputs = ["x"]
    for name, value in extra:
        inits[name] = np.array(value, np.float32)
        inputs.append(name)
    nodes = [helper.make_node("Add", ["z", "x0"], ["x"]), helper.make_node(op, inputs, ["y"], **attrs)]
    model = make_model(nodes, [("z", list(x.shape))], [("y", list(x.shape))], inits, opset=opset)
    # mse against y - 1/2: dL/dy = 2 (y - t) / n = 1 / n everywhere
    m = dnnx.load(model, optimize=False)
    y = m.run(np.zeros_like(x))
    _, grads = m.finetune(trainable=["x0"], loss="mse").gradients(np.zeros_like(x), y - np.float32(0.5))
    return grads["x0"] * x.size


def test_slopes_at_the_kinks():
    x = np.array([-2.0, -0.0, 0.0, 1e-3, 2.0, 6.0, 7.0], np.float32)
    np.testing.assert_allclose(kink_gradient("LeakyRelu", {"alpha": 0.1}, x), [0.1, 0.1, 0.1, 1, 1, 1, 1], rtol=1e-6)
    np.testing.assert_allclose(kink_gradient("Clip", {}, x, extra=[("lo", 0.0), ("hi", 6.0)]),
                               [0, 0, 0, 1, 1, 0, 0], rtol=1e-6)
    elu = kink_gradient("Elu", {"alpha": 1.0}, x)
    np.testing.assert_allclose(elu, [np.exp(-2.0), 1, 1, 1, 1, 1, 1], rtol=1e-5)


def test_clip_with_min_above_max_passes_nothing():
    x = rand(10)
    np.testing.assert_array_equal(kink_gradient("Clip", {}, x, extra=[("lo", 1.0), ("hi", -1.0)]), np.zeros(10))


def test_a_trainable_clip_bound_is_refused():
    nodes = [helper.make_node("Clip", ["x", "lo", "hi"], ["y"], name="relu6")]
    model = make_model(nodes, [("x", [2, 3])], [("y", [2, 3])], {"lo": np.float32(0.0), "hi": np.float32(6.0)})
    with pytest.raises(dnnx.UnsupportedModelError, match=r"relu6.*Clip's max input is not supported"):
        dnnx.load(model, optimize=False).finetune(trainable=["hi"], loss="mse")


def test_mobilenet_v2_trains_whole():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    from _external_models import EXTERNAL, read_model

    if not (EXTERNAL / "zoo" / "mobilenet_v2.onnx").exists():
        pytest.skip("../shared/external/zoo is absent")
    m = dnnx.load(read_model("zoo/mobilenet_v2.onnx"))
    tuner = m.finetune(trainable="all", lr=0.01, momentum=0.9)
    x = np.random.default_rng(1).standard_normal((2, 3, 224, 224)).astype(np.float32)
    losses = [tuner.step(x, np.array([1, 2])) for _ in range(3)]
    assert losses[-1] < losses[0], losses
