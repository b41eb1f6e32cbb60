"""Attention's qk_matmul_output in each of its four modes with softcap and a float mask, so that
every stage differs from the next, against onnxruntime: 0 the scaled scores (before softcap),
1 after softcap, 2 after the mask is added, 3 the probabilities."""
import pytest

from ort_check import assert_matches_ort, rand
from test_attention import attention_model


@pytest.mark.parametrize("mode", [0, 1, 2, 3])
def test_qk_output_stages_with_softcap_and_mask(mode):
    shapes = {"Q": [2, 3, 7, 8], "K": [2, 3, 9, 8], "V": [2, 3, 9, 8], "attn_mask": [7, 9]}
    model = attention_model(shapes, {"scale": 0.4, "softcap": 1.5, "qk_matmul_output_mode": mode},
                            outputs=("Y", "qk_matmul_output"))
    feeds = {k: rand(*v, seed=i) * 2 for i, (k, v) in enumerate(shapes.items())}
    assert_matches_ort(model, feeds)
