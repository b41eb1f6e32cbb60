"""The transformer ops' CUDA kernels (issue #35: RMSNormalization, RotaryEmbedding, Einsum as one
batched GEMM, the unfused Attention) against the CPU backend at sizes the onnx node cases leave
out: several blocks per row, grouped-query heads, past caches, causal and masked attention, packed
3-D inputs, partial and interleaved rotations. Each model's plan must run the op on the device
(no "on the host" row); an Einsum equation outside the GEMM form must still give the CPU's result,
through the host fallback, and say so. Then the zoo2 BERT and GPT-2 exports, CUDA against the CPU
at fp32.

Tolerances, per precision, against the CPU's fp32 result:
  fp32  cuda_check.py's bounds (elementwise 1e-4 relative + 1e-5 of max|ref|, relative L2 2e-5):
        the kernels sum in another order than OpenBLAS and the CPU loops, nothing else.
  fp16  1e-2 relative + 1e-2 of max|ref|, relative L2 5e-3 (test_cuda_fp16.py's one-layer bounds:
        every stored value, scores and probabilities included, is rounded to 11 bits).
  bf16  6e-2 relative + 6e-2 of max|ref|, relative L2 3e-2 (8 significant bits: 8x fp16's unit).
Half models load with measure_precision=False, so that the half kernels are what runs."""
import warnings

import numpy as np
import pytest
from onnx import TensorProto, helper

import dnnx
from cuda_check import assert_close
from ort_check import make_model, rand
from test_attention import attention_model, rotary_model

HALF_BOUNDS = {"fp16": (1e-2, 1e-2, 5e-3), "bf16": (6e-2, 6e-2, 3e-2)}


def assert_half_close(got, want, what, precision):
    rtol, atol, l2 = HALF_BOUNDS[precision]
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    g, w = got.astype(np.float64), want.astype(np.float64)
    scale = float(np.abs(w).max()) if w.size else 0.0
    np.testing.assert_allclose(g, w, rtol=rtol, atol=atol * max(scale, 1e-30), err_msg=what)
    norm = float(np.linalg.norm(w))
    if norm > 0:
        rel = float(np.linalg.norm(g - w)) / norm
        assert rel <= l2, f"{what}: relative L2 error {rel:.3g} > {l2}"


def on_device(m, op):
    """The plan rows of `op`, each of which must run on the device."""
    rows = [r for r in m.plan() if r["op"] == op]
    assert rows, f"no {op} row in the plan: {m.plan()}"
    for r in rows:
        assert not r["algorithm"].startswith("on the host"), r
    return rows


def check(model, feeds, op, precision="fp32"):
    """`model` on CUDA at `precision` against the CPU at fp32; the op runs on the device. Returns
    the op's plan rows and the CUDA outputs."""
    cpu = dnnx.load(model).run_dict(feeds)
    with warnings.catch_warnings():
        warnings.simplefilter("error", dnnx.HostFallbackWarning)  # none of these may fall back
        gpu_model = dnnx.load(model, device="cuda", precision=precision, measure_precision=False)
    got = gpu_model.run_dict(feeds)
    rows = on_device(gpu_model, op)
    assert set(got) == set(cpu)
    for name, want in cpu.items():
        what = f"{op} {name} ({precision}, cuda vs cpu)"
        if precision == "fp32":
            assert_close(got[name], want, what)
        else:
            assert_half_close(got[name], want, what, precision)
    return rows, got


# --- RMSNormalization ----------------------------------------------------------------------------

def rms_model(x_shape, scale_shape, **attrs):
    node = helper.make_node("RMSNormalization", ["x", "scale"], ["y"], **attrs)
    return make_model([node], [("x", x_shape), ("scale", scale_shape)], [("y", None)], opset=23)


RMS_CASES = {
    "last_axis": ([4, 50, 768], [768], {}),
    "two_axes": ([3, 17, 8, 96], [8, 96], {"axis": -2, "epsilon": 1e-3}),
    "scale_broadcast": ([2, 6, 40, 33], [40, 1], {"axis": 2}),
    "scalar_scale": ([5, 1000], [1], {}),
}


@pytest.mark.parametrize("precision", ["fp32", "fp16", "bf16"])
@pytest.mark.parametrize("case", list(RMS_CASES))
def test_rms_norm(case, precision):
    x_shape, scale_shape, attrs = RMS_CASES[case]
    feeds = {"x": rand(*x_shape, seed=1) * 3 + 0.5, "scale": rand(*scale_shape, seed=2)}
    check(rms_model(x_shape, scale_shape, **attrs), feeds, "RMSNormalization", precision)


@pytest.mark.parametrize("shape, axis, scale_shape", [
    ((4, 6, 40), -1, (40,)),
    ((3, 6, 40), 1, (6, 40)),
    ((3, 6, 40), 1, (6, 1)),      # a broadcast scale: its gradient sums the columns that read it
    ((64, 1000), -1, (1000,)),    # rows longer than a block
])
def test_rms_norm_gradient(shape, axis, scale_shape):
    # h = x * q -> RMSNormalization -> y; q and scale trainable; CUDA's outputs, loss and
    # gradients against the CPU's (test_cuda_activation_norm_grads.py's bounds), on the device.
    from test_cuda_activation_norm_grads import assert_runs_on_the_device, compare
    from test_cuda_activation_norm_grads import rand as grad_rand

    inits = {"q": grad_rand(*shape), "scale": grad_rand(*scale_shape)}
    nodes = [helper.make_node("Mul", ["x", "q"], ["h"]),
             helper.make_node("RMSNormalization", ["h", "scale"], ["y"], axis=axis, epsilon=1e-3)]
    model = make_model(nodes, [("x", list(shape))], [("y", list(shape))], inits, opset=23)
    tuner = compare(model, list(inits), {"x": grad_rand(*shape)}, grad_rand(*shape))
    assert_runs_on_the_device(tuner, "RMSNormalization")


# --- RotaryEmbedding -----------------------------------------------------------------------------

def rotary_feeds(x_shape, cache_shape, positions, max_position=None, seed=0):
    rng = np.random.default_rng(seed)
    angles = rng.uniform(0, 6.3, cache_shape).astype(np.float32)
    feeds = {"x": rand(*x_shape, seed=seed + 1), "cos": np.cos(angles), "sin": np.sin(angles)}
    if positions:
        b = x_shape[0]
        s = x_shape[-2] if len(x_shape) == 4 else x_shape[1]
        feeds["pos"] = rng.integers(0, max_position, (b, s)).astype(np.int64)
    return feeds


ROTARY_CASES = {
    # name: (x shape, cache shape, attrs, position_ids)
    "4d_positions": ([2, 8, 128, 64], [512, 32], {}, True),
    "4d_interleaved_partial": ([2, 4, 33, 64], [100, 16], {"interleaved": 1, "rotary_embedding_dim": 32}, True),
    "4d_no_positions": ([3, 5, 20, 32], [3, 20, 16], {}, False),
    "packed_partial": ([2, 70, 12 * 48], [300, 8], {"num_heads": 12, "rotary_embedding_dim": 16}, True),
    "packed_interleaved": ([4, 9, 6 * 16], [4, 9, 8], {"num_heads": 6, "interleaved": 1}, False),
}


@pytest.mark.parametrize("precision", ["fp32", "fp16", "bf16"])
@pytest.mark.parametrize("case", list(ROTARY_CASES))
def test_rotary_embedding(case, precision):
    x_shape, cache_shape, attrs, positions = ROTARY_CASES[case]
    model = rotary_model(x_shape, cache_shape, attrs, positions=positions)
    feeds = rotary_feeds(x_shape, cache_shape, positions, max_position=cache_shape[0])
    check(model, feeds, "RotaryEmbedding", precision)


# --- Einsum --------------------------------------------------------------------------------------

def einsum_model(equation, shapes):
    names = [f"x{i}" for i in range(len(shapes))]
    node = helper.make_node("Einsum", names, ["y"], equation=equation)
    return make_model([node], list(zip(names, shapes)), [("y", None)], opset=12)


EINSUM_GEMM = {
    "bhid,bhjd->bhij": [[2, 8, 64, 32], [2, 8, 48, 32]],   # Q K^T: B read transposed in place
    "bhij,bhjd->bhid": [[2, 8, 64, 48], [2, 8, 48, 32]],   # P V: both in place
    "bij,bjk->bik": [[6, 33, 70], [6, 70, 21]],
    "bid,jd->bij": [[4, 50, 64], [96, 64]],                 # a weight without batch (M folds b, i)
    "bhqd,bkhd->bhqk": [[2, 4, 16, 32], [2, 24, 4, 32]],    # B gathered into [b, h, d, k]
    "ij,jk->ki": [[40, 50], [50, 30]],                      # C gathered into the output order
    "...ij,...jk->...ik": [[3, 2, 20, 30], [3, 2, 30, 10]],
    "bij,bjk": [[5, 7, 9], [5, 9, 11]],                     # implicit output "ik": K is (b, j)
    "bij,bkj->bik": [[5, 1, 9], [5, 13, 9]],                # M of size 1
    "bik,kj->bij": [[1, 8, 16], [16, 8]],
    "abcd->cadb": [[3, 4, 5, 6]],                           # a transpose
    "ij->ij": [[31, 17]],                                   # a copy
}


@pytest.mark.parametrize("precision", ["fp32", "fp16", "bf16"])
@pytest.mark.parametrize("equation", list(EINSUM_GEMM))
def test_einsum_gemm_form(equation, precision):
    shapes = EINSUM_GEMM[equation]
    feeds = {f"x{i}": rand(*s, seed=i) for i, s in enumerate(shapes)}
    rows, _ = check(einsum_model(equation, shapes), feeds, "Einsum", precision)
    if len(shapes) == 2:
        assert "cublas" in rows[0]["algorithm"], rows


@pytest.mark.parametrize("equation, shapes", [
    ("ii->i", [[7, 7]]),                                    # a diagonal
    ("ij->i", [[7, 9]]),                                    # a sum over one operand
    ("ij,jk,kl->il", [[4, 5], [5, 6], [6, 3]]),             # three operands
    ("bij,bjk->bi", [[2, 3, 4], [2, 4, 5]]),                # k summed over B alone
])
def test_einsum_outside_the_gemm_form_falls_back(equation, shapes):
    feeds = {f"x{i}": rand(*s, seed=i) for i, s in enumerate(shapes)}
    model = einsum_model(equation, shapes)
    with pytest.warns(dnnx.HostFallbackWarning):
        m = dnnx.load(model, device="cuda")
    (row,) = [r for r in m.plan() if r["op"] == "Einsum"]
    assert row["algorithm"].startswith("on the host"), row
    want = dnnx.load(model).run_dict(feeds)
    got = m.run_dict(feeds)
    for name in want:
        assert_close(got[name], want[name], f"{equation} {name}")


def test_integer_einsum_falls_back():
    i64 = TensorProto.INT64
    node = helper.make_node("Einsum", ["x0", "x1"], ["y"], equation="ij,jk->ik")
    model = make_model([node], [("x0", [4, 5], i64), ("x1", [5, 6], i64)], [("y", [4, 6], i64)], opset=12)
    rng = np.random.default_rng(0)
    feeds = {"x0": rng.integers(-9, 9, (4, 5)).astype(np.int64), "x1": rng.integers(-9, 9, (5, 6)).astype(np.int64)}
    with pytest.warns(dnnx.HostFallbackWarning):
        m = dnnx.load(model, device="cuda")
    (row,) = [r for r in m.plan() if r["op"] == "Einsum"]
    assert row["algorithm"].startswith("on the host"), row
    np.testing.assert_array_equal(m.run_dict(feeds)["y"], feeds["x0"] @ feeds["x1"])


@pytest.mark.parametrize("equation, x_shape, w_shape", [
    ("bhid,bhjd->bhij", [2, 3, 8, 16], [2, 3, 12, 16]),   # B in place, read transposed
    ("bij,bjk->bik", [3, 8, 16], [3, 16, 5]),
    ("bid,jd->bij", [2, 8, 16], [12, 16]),
    ("bhqd,bkhd->bhqk", [2, 3, 8, 16], [2, 12, 3, 16]),   # B gathered, dB laid back out
    ("ij,jk->ki", [8, 16], [16, 5]),                      # dY gathered into C's order
    ("kb,kc->bc", [16, 8], [16, 5]),                      # A read transposed
    ("abcd->cadb", [2, 3, 4, 5], None),                   # a transpose: dX = dY transposed back
])
def test_einsum_gradient(equation, x_shape, w_shape):
    # h = x * q -> Einsum(h, w) -> y; q and w trainable; CUDA's outputs, loss and gradients against
    # the CPU's (test_cuda_activation_norm_grads.py's bounds), the backward on the device.
    from test_cuda_activation_norm_grads import assert_runs_on_the_device, compare
    from test_cuda_activation_norm_grads import rand as grad_rand

    inits = {"q": grad_rand(*x_shape)}
    operands = ["h"]
    if w_shape:
        inits["w"] = grad_rand(*w_shape)
        operands.append("w")
    nodes = [helper.make_node("Mul", ["x", "q"], ["h"]), helper.make_node("Einsum", operands, ["y"], equation=equation)]
    shapes = [x_shape] + ([w_shape] if w_shape else [])
    y_shape = list(np.einsum(equation, *[np.zeros(s) for s in shapes]).shape)
    model = make_model(nodes, [("x", x_shape)], [("y", y_shape)], inits, opset=12)
    tuner = compare(model, list(inits), {"x": grad_rand(*x_shape)}, grad_rand(*y_shape))
    assert_runs_on_the_device(tuner, "Einsum")


# --- Attention -----------------------------------------------------------------------------------

def attention_feeds(shapes, mask_bool=False, nonpad=None, seed=0):
    rng = np.random.default_rng(seed)
    feeds = {}
    for i, (name, shape) in enumerate(shapes.items()):
        if name == "attn_mask":
            feeds[name] = rng.random(shape) > 0.3 if mask_bool else rand(*shape, seed=seed + i) * 2
        elif name == "nonpad_kv_seqlen":
            feeds[name] = np.array(nonpad, np.int64)
        else:
            feeds[name] = rand(*shape, seed=seed + i)
    return feeds


ATTENTION_CASES = {
    # name: (shapes, attrs, outputs, opset, mask is bool)
    "plain": ({"Q": [2, 8, 64, 64], "K": [2, 8, 80, 64], "V": [2, 8, 80, 64]}, {}, ("Y",), 23, False),
    "causal": ({"Q": [2, 12, 128, 64], "K": [2, 12, 128, 64], "V": [2, 12, 128, 64]}, {"is_causal": 1}, ("Y",), 23,
               False),
    "bool_mask": ({"Q": [2, 4, 40, 32], "K": [2, 4, 50, 32], "V": [2, 4, 50, 16], "attn_mask": [2, 1, 40, 50]}, {},
                  ("Y",), 23, True),
    "float_mask_2d": ({"Q": [3, 4, 33, 16], "K": [3, 4, 45, 16], "V": [3, 4, 45, 16], "attn_mask": [33, 45]},
                      {"scale": 0.2}, ("Y",), 23, False),
    "short_mask_causal": ({"Q": [1, 2, 20, 16], "K": [1, 2, 20, 16], "V": [1, 2, 20, 16], "attn_mask": [1, 20, 15]},
                          {"is_causal": 1}, ("Y",), 23, True),
    "gqa_causal": ({"Q": [2, 8, 50, 32], "K": [2, 2, 50, 32], "V": [2, 2, 50, 24]}, {"is_causal": 1}, ("Y",), 23,
                   False),
    "gqa_past_present": ({"Q": [2, 8, 5, 16], "K": [2, 2, 7, 16], "V": [2, 2, 7, 12], "attn_mask": [2, 1, 5, 16],
                          "past_key": [2, 2, 9, 16], "past_value": [2, 2, 9, 12]},
                         {"is_causal": 1}, ("Y", "present_key", "present_value"), 23, True),
    "decode_step_past": ({"Q": [3, 4, 1, 32], "K": [3, 4, 1, 32], "V": [3, 4, 1, 32], "past_key": [3, 4, 63, 32],
                          "past_value": [3, 4, 63, 32]}, {}, ("Y", "present_key", "present_value"), 23, False),
    "packed_gqa_softcap": ({"Q": [2, 30, 8 * 16], "K": [2, 40, 4 * 16], "V": [2, 40, 4 * 8]},
                           {"q_num_heads": 8, "kv_num_heads": 4, "softcap": 2.0}, ("Y",), 23, False),
    "nonpad_causal": ({"Q": [2, 3, 6, 16], "K": [2, 3, 12, 16], "V": [2, 3, 12, 16], "nonpad_kv_seqlen": [2]},
                      {"is_causal": 1}, ("Y",), 24, False),
    "windows_past": ({"Q": [2, 4, 9, 16], "K": [2, 4, 9, 16], "V": [2, 4, 9, 16], "past_key": [2, 4, 6, 16],
                      "past_value": [2, 4, 6, 16]}, {"left_window_size": 4, "right_window_size": 1}, ("Y",), 25, False),
}
for _mode in range(4):
    ATTENTION_CASES[f"packed_qk_mode{_mode}"] = (
        {"Q": [2, 17, 4 * 8], "K": [2, 23, 4 * 8], "V": [2, 23, 4 * 8], "attn_mask": [17, 23]},
        {"q_num_heads": 4, "kv_num_heads": 4, "scale": 0.3, "softcap": 1.5, "qk_matmul_output_mode": _mode},
        ("Y", "qk_matmul_output"), 23, False)


@pytest.mark.parametrize("precision", ["fp32", "fp16", "bf16"])
@pytest.mark.parametrize("case", list(ATTENTION_CASES))
def test_attention(case, precision):
    shapes, attrs, outputs, opset, mask_bool = ATTENTION_CASES[case]
    model = attention_model(shapes, attrs, outputs=outputs, opset=opset,
                            mask_type=TensorProto.BOOL if mask_bool else TensorProto.FLOAT)
    feeds = attention_feeds(shapes, mask_bool=mask_bool, nonpad=[9, 12])
    check(model, feeds, "Attention", precision)


def test_attention_fully_masked_rows_are_zero():
    # Rows whose mask is false everywhere give Y = 0 on both backends (Note [attention bias]).
    shapes = {"Q": [1, 2, 6, 8], "K": [1, 2, 9, 8], "V": [1, 2, 9, 8], "attn_mask": [1, 1, 6, 9]}
    model = attention_model(shapes, {}, mask_type=TensorProto.BOOL)
    feeds = attention_feeds(shapes, mask_bool=True)
    feeds["attn_mask"][0, 0, 2, :] = False
    _, got = check(model, feeds, "Attention")
    assert np.all(got["Y"][0, :, 2, :] == 0)
    assert np.any(got["Y"][0, :, 1, :] != 0)


# --- the zoo2 transformer exports ----------------------------------------------------------------

@pytest.mark.parametrize("name", ["bert", "gpt2"])
def test_zoo2_transformer_on_cuda_matches_cpu(name):
    from zoo_check import zoo2_inputs, zoo2_model

    model = zoo2_model(name)
    try:
        cpu = dnnx.load(model)
    except dnnx.DnnxError as e:
        pytest.skip(f"the CPU refuses {name}.onnx: {e}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dnnx.HostFallbackWarning)  # what still falls back: plan() says
        gpu = dnnx.load(model, device="cuda", precision="fp32")
    for batch in (1, 3):
        feeds = zoo2_inputs(name, model, batch)
        want = cpu.run_dict(feeds)
        got = gpu.run_dict(feeds)
        first = next(iter(want))
        w, g = want[first], got[first]
        assert g.shape == w.shape
        assert np.all(np.isfinite(g)), f"{name} batch {batch}: non-finite"
        # relative to the output's largest magnitude (LayerNorm keeps activations O(1))
        assert np.max(np.abs(g - w)) / np.max(np.abs(w)) < 1e-4, f"{name} batch {batch}"
