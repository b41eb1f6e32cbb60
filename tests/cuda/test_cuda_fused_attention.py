"""Attention's cuDNN fused path (issue #35; Note [fused attention] in
engine/backends/cuda/attention/attention_cuda.cc): at fp16 and bf16 a node with no mask but
is_causal, no caches, no softcap and no qk_matmul_output runs cuDNN's fused scaled-dot-product
attention, built at plan time; everything else, and whatever cuDNN's check_support refuses, runs
the unfused path. plan() names the path: the fused one as its algorithm, or, unfused, the fused
one under `rejected` with the reason.

Each model runs against onnxruntime's CPU at fp32 (the CPU backend is held to it by
tests/test_attention.py). Tolerances, per precision (test_cuda_transformer_ops.py's half bounds,
which the unfused path meets on the same cases):
  fp16  1e-2 relative + 1e-2 of max|ref|, relative L2 5e-3: Q, K and V are rounded to fp16 (11
        significant bits, unit 2^-11 = 4.9e-4); the fused kernel keeps the scores and the softmax
        in float but rounds the probabilities to fp16 for the P V product and Y to fp16, so each
        Y element carries a few units of 2^-11 relative to the largest |V|: 1e-2 is a margin
        of ~20 units, and the L2 bound catches a systematic error the elementwise one would pass.
  bf16  6e-2 relative + 6e-2 of max|ref|, relative L2 3e-2: the same roundings with 8 significant
        bits (unit 2^-8 = 3.9e-3, 8x fp16's).
A build without cudnn-frontend (its plan says so) skips the tests that need the fused path; one
with it must take the fused path for a standard shape, or fail naming cuDNN's refusal."""
import numpy as np
import pytest
from onnx import TensorProto

import dnnx
from cuda_check import assert_close
from ort_check import rand, run_ort
from test_attention import attention_model
from test_cuda_transformer_ops import assert_half_close

FUSED = "cuDNN fused attention (SDPA)"
NO_FRONTEND = "this build has no cudnn-frontend"
HALVES = ["fp16", "bf16"]


def load(model, precision):
    # measure_precision=False: the half kernels are what runs (Note [measured precision]).
    return dnnx.load(model, device="cuda", precision=precision, measure_precision=False)


def attention_row(m):
    rows = [r for r in m.plan() if r["op"] == "Attention"]
    assert len(rows) == 1, m.plan()
    assert not rows[0]["algorithm"].startswith("on the host"), rows[0]
    return rows[0]


def fused_refusal(row):
    """Why the fused path was not taken ("" when it was): its reason under `rejected`."""
    if row["algorithm"].startswith(FUSED):
        return ""
    reasons = [why for algo, why in row["rejected"] if algo == FUSED]
    assert len(reasons) == 1, f"an unfused row must say why the fused path was not taken: {row}"
    return reasons[0]


def skip_without_frontend(row):
    if fused_refusal(row).startswith(NO_FRONTEND):
        pytest.skip(f"dnnx was built without cudnn-frontend: {fused_refusal(row)}")


def feeds_of(shapes, seed=0):
    return {name: rand(*shape, seed=seed + i) for i, (name, shape) in enumerate(shapes.items())}


def run_against_ort(shapes, attrs, precision, seed=0):
    """The model on CUDA at `precision` against onnxruntime at fp32; returns its Attention row."""
    model = attention_model(shapes, attrs)
    feeds = feeds_of(shapes, seed)
    want = run_ort(model, feeds)["Y"]
    m = load(model, precision)
    got = m.run_dict(feeds)["Y"]
    row = attention_row(m)
    assert_half_close(got, want, f"Attention Y ({precision}, {row['algorithm']})", precision)
    return row


# The cases the fused path is meant for: no mask, or is_causal, 4-D or packed, grouped-query heads,
# head sizes cuDNN's kernels take.
FUSED_CASES = {
    # name: (shapes, attrs)
    "plain": ({"Q": [2, 8, 64, 64], "K": [2, 8, 80, 64], "V": [2, 8, 80, 64]}, {}),
    "causal": ({"Q": [2, 12, 128, 64], "K": [2, 12, 128, 64], "V": [2, 12, 128, 64]}, {"is_causal": 1}),
    # top-left causal with fewer queries than keys (no past cache: ONNX's frontier is j <= i)
    "causal_short_queries": ({"Q": [2, 4, 48, 64], "K": [2, 4, 80, 64], "V": [2, 4, 80, 64]}, {"is_causal": 1}),
    "head_128_scale": ({"Q": [1, 4, 200, 128], "K": [1, 4, 200, 128], "V": [1, 4, 200, 128]},
                       {"is_causal": 1, "scale": 0.05}),
    "gqa_causal": ({"Q": [2, 8, 50, 64], "K": [2, 2, 50, 64], "V": [2, 2, 50, 64]}, {"is_causal": 1}),
    "packed_gqa": ({"Q": [2, 30, 8 * 64], "K": [2, 40, 4 * 64], "V": [2, 40, 4 * 64]},
                   {"q_num_heads": 8, "kv_num_heads": 4, "scale": 0.2}),
    "value_head_differs": ({"Q": [2, 4, 33, 64], "K": [2, 4, 45, 64], "V": [2, 4, 45, 32]}, {}),
}


@pytest.mark.parametrize("precision", HALVES)
@pytest.mark.parametrize("case", list(FUSED_CASES))
def test_fused_cases_match_onnxruntime(case, precision):
    shapes, attrs = FUSED_CASES[case]
    row = run_against_ort(shapes, attrs, precision)
    skip_without_frontend(row)
    why = fused_refusal(row)
    # None of the planner's own conditions blocks these: only cuDNN may refuse one (its message
    # then names the step), and the unfused path ran instead, as checked above.
    assert why == "" or why.startswith("cuDNN "), row
    if why == "":
        assert ("grouped-query" in row["algorithm"]) == (case in ("gqa_causal", "packed_gqa")), row
        assert ("(causal)" in row["algorithm"]) == ("is_causal" in attrs), row


@pytest.mark.parametrize("precision", HALVES)
def test_a_standard_shape_takes_the_fused_path(precision):
    # BERT-base's attention: 12 heads of 64, 128 tokens. A build with cudnn-frontend must run it
    # fused: anything else is the fused path silently lost, and the message carries cuDNN's reason.
    shapes = {"Q": [2, 12, 128, 64], "K": [2, 12, 128, 64], "V": [2, 12, 128, 64]}
    for attrs in ({}, {"is_causal": 1}):
        row = run_against_ort(shapes, attrs, precision)
        skip_without_frontend(row)
        assert row["algorithm"].startswith(FUSED), f"the fused path was not taken: {fused_refusal(row)!r} ({row})"
        assert any(why == "the fused kernel applies" for _, why in row["rejected"]), row


@pytest.mark.parametrize("precision", HALVES)
@pytest.mark.parametrize("head", [20, 264])
def test_a_head_size_cudnn_refuses_falls_back(head, precision):
    # 20: not a multiple of 8 (rows not 16-byte aligned): validate or check_support refuses, the
    # plan says which step and why, and the unfused path gives ONNX's result. 264: over the 256 of
    # older cuDNN 9 releases on Hopper; cuDNN 9.19 on an H100 takes it (2026-12-06), so either path
    # is right there, and both give ONNX's result (run_against_ort checked it).
    shapes = {"Q": [2, 4, 24, head], "K": [2, 4, 40, head], "V": [2, 4, 40, head]}
    row = run_against_ort(shapes, {"is_causal": 1}, precision)
    skip_without_frontend(row)
    why = fused_refusal(row)
    if head == 264 and why == "":
        return
    assert why.startswith("cuDNN ") and "refused the graph" in why, row
    assert "masked softmax" in row["algorithm"], row


# What the planner keeps off the fused path before asking cuDNN, each with its reason.
PLANNER_REFUSALS = {
    # name: (shapes, attrs, outputs, mask type, precision, reason's start)
    "fp32": ({"Q": [2, 4, 32, 64], "K": [2, 4, 32, 64], "V": [2, 4, 32, 64]}, {}, ("Y",), None, "fp32",
             "float32 storage"),
    "float_mask": ({"Q": [2, 4, 32, 64], "K": [2, 4, 32, 64], "V": [2, 4, 32, 64], "attn_mask": [32, 32]}, {}, ("Y",),
                   TensorProto.FLOAT, "fp16", "attn_mask"),
    "bool_mask": ({"Q": [2, 4, 32, 64], "K": [2, 4, 32, 64], "V": [2, 4, 32, 64], "attn_mask": [2, 1, 32, 32]}, {},
                  ("Y",), TensorProto.BOOL, "fp16", "attn_mask"),
    "softcap": ({"Q": [2, 4, 32, 64], "K": [2, 4, 32, 64], "V": [2, 4, 32, 64]}, {"softcap": 2.0}, ("Y",), None, "bf16",
                "softcap"),
    # (a past cache given, so that shape inference knows the present outputs' shapes)
    "present": ({"Q": [2, 4, 32, 64], "K": [2, 4, 32, 64], "V": [2, 4, 32, 64], "past_key": [2, 4, 8, 64],
                 "past_value": [2, 4, 8, 64]}, {"is_causal": 1},
                ("Y", "present_key", "present_value"), None, "fp16", "a key/value cache"),
    "qk_output": ({"Q": [2, 4, 32, 64], "K": [2, 4, 32, 64], "V": [2, 4, 32, 64]}, {}, ("Y", "qk_matmul_output"), None,
                  "bf16", "qk_matmul_output"),
}


@pytest.mark.parametrize("case", list(PLANNER_REFUSALS))
def test_what_the_fused_path_leaves_runs_unfused_and_says_why(case):
    shapes, attrs, outputs, mask_type, precision, reason = PLANNER_REFUSALS[case]
    model = attention_model(shapes, attrs, outputs=outputs, mask_type=mask_type or TensorProto.FLOAT)
    feeds = feeds_of(shapes)
    if mask_type == TensorProto.BOOL:
        feeds["attn_mask"] = np.random.default_rng(3).random(shapes["attn_mask"]) > 0.3
    want = run_ort(model, feeds)
    m = load(model, precision)
    got = m.run_dict(feeds)
    row = attention_row(m)
    why = fused_refusal(row)
    if not why.startswith(NO_FRONTEND):
        assert why.startswith(reason), row
    assert "masked softmax" in row["algorithm"], row
    for name in outputs:
        if precision == "fp32":  # cuda_check.py's fp32 bounds: the sums in another order, nothing else
            assert_close(got[name], want[name], f"Attention {name} (fp32, {case})")
        else:
            assert_half_close(got[name], want[name], f"Attention {name} ({precision}, {case})", precision)


@pytest.mark.parametrize("precision", HALVES)
def test_an_empty_batch(precision):
    # Empty tensors are valid everywhere: a batch of 0 gives Y [0, H, S, Dv], on the unfused path
    # (there is nothing for cuDNN to run), and a batch of 2 of the same model still runs fused.
    shapes = {"Q": [0, 4, 32, 64], "K": [0, 4, 40, 64], "V": [0, 4, 40, 64]}
    model = attention_model(shapes, {"is_causal": 1})
    m = load(model, precision)
    got = m.run_dict(feeds_of(shapes))["Y"]
    assert got.shape == (0, 4, 32, 64)
    row = attention_row(m)
    if row["algorithm"].startswith("empty output"):  # the planner runs nothing at all for it
        return
    why = fused_refusal(row)
    assert why == "an empty tensor" or why.startswith(NO_FRONTEND), row


def test_a_fused_kernel_that_fails_at_run_time_gives_way(monkeypatch):
    # Note [run-time fallback]: the fused kernel fails each time it runs (the test hook); the layer
    # is planned again without it (unfused where the run's workspace holds the scores, else on the
    # host), and the result is still ONNX's.
    shapes = {"Q": [2, 8, 64, 64], "K": [2, 8, 64, 64], "V": [2, 8, 64, 64]}
    model = attention_model(shapes, {"is_causal": 1})
    skip_without_frontend(attention_row(load(model, "fp16")))
    monkeypatch.setenv("DNNX_TEST_FAIL_ALGO", FUSED + ":run")
    m = load(model, "fp16")
    before = attention_row(m)
    assert before["algorithm"].startswith(FUSED), before
    feeds = feeds_of(shapes)
    want = run_ort(model, feeds)["Y"]
    for _ in range(2):
        assert_half_close(m.run_dict(feeds)["Y"], want, "Attention Y after the run-time fallback", "fp16")
    after = [r for r in m.plan() if r["op"] == "Attention"][0]
    assert not after["algorithm"].startswith(FUSED), after
    assert [algo for algo, _ in after["fallbacks"]] == [before["algorithm"]], after
    assert "DNNX_TEST_FAIL_ALGO" in after["fallbacks"][0][1], after
