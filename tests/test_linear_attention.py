"""LinearAttention (opset 27) against onnxruntime at sizes and combinations the onnx node cases
leave out: long sequences with grouped-query heads, head sizes Dk != Dv, every update rule with a
past state, decay per head and per key feature, a shared beta; a prefill split into chunks that
carry present_state into past_state gives the one-shot result; and the load-time errors a user
can cause."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import dnnx
from ort_check import assert_matches_ort, make_model, rand

NAMES = ["query", "key", "value", "past_state", "decay", "beta"]
OPSET = 27


def la_model(shapes, attrs, elem=TensorProto.FLOAT, state_elem=None, checked=True):
    """The one-node model; the outputs' shapes are written out (onnx's shape inference leaves them
    unset for some valid nodes). checked=False skips onnx.checker, which would refuse the wrong
    models the error tests feed to dnnx."""
    inputs, node_inputs = [], []
    for name in NAMES:
        if name in shapes:
            e = (state_elem or elem) if name == "past_state" else elem
            inputs.append((name, shapes[name], e))
            node_inputs.append(name)
        else:
            node_inputs.append("")
    while not node_inputs[-1]:
        node_inputs.pop()
    node = helper.make_node("LinearAttention", node_inputs, ["output", "present_state"], **attrs)
    b, t, _ = shapes["query"]
    hq, hkv = attrs["q_num_heads"], attrs["kv_num_heads"]
    dk, dv = shapes["query"][2] // hq, shapes["value"][2] // hkv
    outputs = [("output", [b, t, hq * dv], elem),
               ("present_state", [b, hkv, dk, dv], state_elem if "past_state" in shapes and state_elem else elem)]
    if checked:
        return make_model([node], inputs, outputs, opset=OPSET)
    vi = [helper.make_tensor_value_info(*spec[:1], spec[2], spec[1]) for spec in inputs]
    vo = [helper.make_tensor_value_info(*spec[:1], spec[2], spec[1]) for spec in outputs]
    graph = helper.make_graph([node], "test", vi, vo)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])


def feeds_for(shapes, kv_heads, seed=0):
    """Inputs in the ranges the recurrences are meant for: unit-norm keys per head, decay <= 0,
    beta in [0, 1)."""
    rng = np.random.default_rng(seed)
    feeds = {}
    for name, shape in shapes.items():
        x = rng.standard_normal(shape).astype(np.float32)
        if name == "key":
            b, t, hd = shape
            x4 = x.reshape(b, t, kv_heads, hd // kv_heads)
            x = (x4 / np.linalg.norm(x4, axis=-1, keepdims=True)).reshape(shape).astype(np.float32)
        elif name == "decay":
            x = (-np.abs(x) * 0.1).astype(np.float32)
        elif name == "beta":
            x = rng.random(shape).astype(np.float32)
        elif name == "past_state":
            x = (x * 0.1).astype(np.float32)
        feeds[name] = x
    return feeds


def shapes_of(b, t, hq, hkv, dk, dv, past=True, decay=None, beta=None):
    s = {"query": [b, t, hq * dk], "key": [b, t, hkv * dk], "value": [b, t, hkv * dv]}
    if past:
        s["past_state"] = [b, hkv, dk, dv]
    if decay:
        s["decay"] = [b, t, decay]
    if beta:
        s["beta"] = [b, t, beta]
    return s


@pytest.mark.parametrize("rule", ["linear", "gated", "delta", "gated_delta"])
def test_rules_gqa_long_sequence_with_past(rule):
    b, t, hq, hkv, dk, dv = 2, 41, 6, 2, 16, 24
    gated, delta = rule in ("gated", "gated_delta"), rule in ("delta", "gated_delta")
    shapes = shapes_of(b, t, hq, hkv, dk, dv, decay=hkv * dk if gated else None, beta=hkv if delta else None)
    model = la_model(shapes, {"q_num_heads": hq, "kv_num_heads": hkv, "update_rule": rule})
    assert_matches_ort(model, feeds_for(shapes, hkv, seed=3))


def test_per_head_decay_shared_beta_mqa_explicit_scale():
    b, t, hq, hkv, dk, dv = 3, 17, 4, 1, 32, 8
    shapes = shapes_of(b, t, hq, hkv, dk, dv, past=False, decay=hkv, beta=1)
    model = la_model(shapes, {"q_num_heads": hq, "kv_num_heads": hkv, "scale": 0.07, "chunk_size": 4})
    assert_matches_ort(model, feeds_for(shapes, hkv, seed=5))


def test_chunked_prefill_carries_the_state():
    """Tokens [0, 12) in one call equal tokens [0, 5) then [5, 12), present_state fed back as past_state."""
    b, t, h, dk, dv = 2, 12, 4, 8, 8
    full = shapes_of(b, t, h, h, dk, dv, decay=h * dk, beta=h)
    feeds = feeds_for(full, h, seed=7)
    attrs = {"q_num_heads": h, "kv_num_heads": h}
    whole = dnnx.load(la_model(full, attrs)).run_dict(feeds)
    state = feeds["past_state"]
    outputs = []
    for lo, hi in ((0, 5), (5, 12)):
        part = shapes_of(b, hi - lo, h, h, dk, dv, decay=h * dk, beta=h)
        part_feeds = {k: (v if k == "past_state" else v[:, lo:hi]) for k, v in feeds.items()}
        part_feeds["past_state"] = state
        got = dnnx.load(la_model(part, attrs)).run_dict(part_feeds)
        outputs.append(got["output"])
        state = got["present_state"]
    np.testing.assert_allclose(np.concatenate(outputs, axis=1), whole["output"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(state, whole["present_state"], rtol=1e-5, atol=1e-6)


def test_float16_activations_keep_a_float32_state():
    b, t, h, dk, dv = 1, 6, 2, 8, 4
    shapes = shapes_of(b, t, h, h, dk, dv, decay=h, beta=h)
    feeds = feeds_for(shapes, h, seed=9)
    feeds = {k: (v if k == "past_state" else v.astype(np.float16)) for k, v in feeds.items()}
    model = la_model(shapes, {"q_num_heads": h, "kv_num_heads": h}, elem=TensorProto.FLOAT16,
                     state_elem=TensorProto.FLOAT)
    got = assert_matches_ort(model, feeds, rtol=2e-3, atol=2e-3)
    assert got["output"].dtype == np.float16 and got["present_state"].dtype == np.float32


@pytest.mark.parametrize("rule, inputs, message", [
    ("linear", {"decay": [1, 3, 2]}, "update_rule 'linear' forbids the input decay"),
    ("gated_delta", {"decay": [1, 3, 2]}, "update_rule 'gated_delta' requires the input beta"),
    ("delta", {"beta": [1, 3, 2], "past_state": [1, 2, 8, 5]},
     r"past_state \[1,2,8,5\] must be \[B, kv_num_heads, Dk, Dv\] \[1,2,8,4\]"),
    ("gated", {"decay": [1, 3, 5]}, r"decay \[1,3,5\] must be \[1, 3, kv_num_heads or kv_num_heads \* Dk\]"),
    ("delta", {"beta": [1, 3, 3]}, r"beta \[1,3,3\] must be \[1, 3, kv_num_heads or 1\]"),
])
def test_errors_name_the_input(rule, inputs, message):
    shapes = {**shapes_of(1, 3, 2, 2, 8, 4, past=False), **inputs}
    model = la_model(shapes, {"q_num_heads": 2, "kv_num_heads": 2, "update_rule": rule}, checked=False)
    with pytest.raises(dnnx.InvalidModelError, match=message):
        dnnx.load(model)


def test_heads_must_divide():
    shapes = shapes_of(1, 2, 3, 2, 4, 4, past=False)
    model = la_model(shapes, {"q_num_heads": 3, "kv_num_heads": 2, "update_rule": "linear"}, checked=False)
    with pytest.raises(dnnx.InvalidModelError, match=r"q_num_heads \(3\) must be a positive multiple of kv_num_heads \(2\)"):
        dnnx.load(model)
