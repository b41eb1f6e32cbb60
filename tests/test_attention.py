"""Attention (opset 23/24) and RotaryEmbedding (23) against onnxruntime at sizes and combinations
the onnx node cases leave out: several GEMM blocks per head, grouped-query heads with a past cache
and a bool mask, packed 3-D inputs with a float mask; a mask shorter than the keys (padded as masked, as onnx's
reference does; onnxruntime refuses it) against the reference's own node case; and the run-time
errors a user can cause."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import dnnx
from ort_check import assert_matches_ort, make_model, rand


def attention_model(shapes, attrs, outputs=("Y",), opset=23, mask_type=TensorProto.FLOAT):
    names = ["Q", "K", "V", "attn_mask", "past_key", "past_value", "nonpad_kv_seqlen"]
    inputs, node_inputs = [], []
    for name in names:
        if name in shapes:
            elem = mask_type if name == "attn_mask" else TensorProto.INT64 if name == "nonpad_kv_seqlen" else TensorProto.FLOAT
            inputs.append((name, shapes[name], elem))
            node_inputs.append(name)
        else:
            node_inputs.append("")
    while node_inputs and not node_inputs[-1]:
        node_inputs.pop()
    all_outputs = ["Y", "present_key", "present_value", "qk_matmul_output"]
    node_outputs = [o if o in outputs else "" for o in all_outputs]
    while not node_outputs[-1]:
        node_outputs.pop()
    node = helper.make_node("Attention", node_inputs, node_outputs, **attrs)
    return make_model([node], inputs, [(o, None) for o in outputs], opset=opset)


def test_gqa_past_bool_mask_causal_all_outputs():
    b, hq, hkv, s, l, p, d, dv = 2, 8, 2, 5, 7, 9, 16, 12
    shapes = {"Q": [b, hq, s, d], "K": [b, hkv, l, d], "V": [b, hkv, l, dv], "attn_mask": [b, 1, s, p + l],
              "past_key": [b, hkv, p, d], "past_value": [b, hkv, p, dv]}
    model = attention_model(shapes, {"is_causal": 1}, outputs=("Y", "present_key", "present_value"),
                            mask_type=TensorProto.BOOL)
    rng = np.random.default_rng(1)
    feeds = {k: rand(*v, seed=i) for i, (k, v) in enumerate(shapes.items()) if k != "attn_mask"}
    feeds["attn_mask"] = rng.random(shapes["attn_mask"]) > 0.3
    assert_matches_ort(model, feeds)


@pytest.mark.parametrize("mode", [0, 2, 3])
def test_packed_float_mask(mode):
    b, hq, hkv, s, l, d = 3, 4, 4, 33, 40, 8
    shapes = {"Q": [b, s, hq * d], "K": [b, l, hkv * d], "V": [b, l, hkv * d], "attn_mask": [s, l]}
    model = attention_model(shapes, {"q_num_heads": hq, "kv_num_heads": hkv, "scale": 0.3,
                                     "qk_matmul_output_mode": mode}, outputs=("Y", "qk_matmul_output"))
    feeds = {k: rand(*v, seed=i) for i, (k, v) in enumerate(shapes.items())}
    assert_matches_ort(model, feeds)


def test_softcap_and_nonpad_kv_seqlen():
    b, h, s, l, d = 2, 3, 4, 10, 8
    shapes = {"Q": [b, h, s, d], "K": [b, h, l, d], "V": [b, h, l, d], "nonpad_kv_seqlen": [b]}
    model = attention_model(shapes, {"is_causal": 1, "softcap": 1.5}, opset=24)
    feeds = {k: rand(*v, seed=i) for i, (k, v) in enumerate(shapes.items()) if k != "nonpad_kv_seqlen"}
    feeds["nonpad_kv_seqlen"] = np.array([7, 10], np.int64)
    assert_matches_ort(model, feeds)


def test_mismatched_heads_are_refused_at_load():
    shapes = {"Q": [1, 6, 4, 8], "K": [1, 4, 4, 8], "V": [1, 4, 4, 8]}
    with pytest.raises(dnnx.InvalidModelError, match="6 heads are not a multiple of the 4 key/value heads"):
        dnnx.load(attention_model(shapes, {}))


def rotary_model(x_shape, cache_shape, attrs, positions=True):
    inputs = [("x", x_shape), ("cos", cache_shape), ("sin", cache_shape)]
    if positions:
        inputs.append(("pos", [x_shape[0], x_shape[-2] if len(x_shape) == 4 else x_shape[1]], TensorProto.INT64))
    node = helper.make_node("RotaryEmbedding", [i[0] for i in inputs], ["y"], **attrs)
    return make_model([node], inputs, [("y", None)], opset=23)


@pytest.mark.parametrize("interleaved", [0, 1])
def test_rotary_packed_partial(interleaved):
    model = rotary_model([2, 5, 4 * 16], [32, 4], {"num_heads": 4, "rotary_embedding_dim": 8,
                                                    "interleaved": interleaved})
    feeds = {"x": rand(2, 5, 64), "cos": rand(32, 4, seed=1), "sin": rand(32, 4, seed=2),
             "pos": np.random.default_rng(3).integers(0, 32, (2, 5)).astype(np.int64)}
    assert_matches_ort(model, feeds)


def test_rotary_position_out_of_range_is_an_input_error():
    model = rotary_model([1, 2, 3, 8], [10, 4], {})
    feeds = {"x": rand(1, 2, 3, 8), "cos": rand(10, 4), "sin": rand(10, 4), "pos": np.array([[0, 1, 10]], np.int64)}
    with pytest.raises(ValueError, match=r"position_ids\[0, 2\] = 10 is outside the caches' 10 positions"):
        dnnx.load(model).run_dict(feeds)
