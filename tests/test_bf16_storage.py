"""precision="bf16" pieces that need no GPU: the option's name and its refusal on the CPU, the
bfloat16 dtype made by the half_storage pass (Note [half storage], run on its own with a stand-in
backend through the test-only dnnx._pass_hooks module), its host rounding against an independent
numpy reference, and BFLOAT16 Casts in models as loaded. The GPU side is tests/cuda/test_cuda_bf16.py."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import dnnx
from dnnx import _core as core
from dnnx._importer import import_model
from dnnx._native import load_extension
from dnnx.examples import build
from ort_check import make_model
from test_half_storage import conv_relu_gemm

pass_hooks = load_extension("_pass_hooks")  # test-only module, beside _core

TO_FLOAT, TO_BF16 = TensorProto.FLOAT, TensorProto.BFLOAT16


def rewrite(model, half_ops):
    return pass_hooks.half_storage_rewrite(import_model(model).ir, list(half_ops), half="bfloat16")


def bf16_bits(values):
    """float32 -> bfloat16 bit patterns, round to nearest even, computed here from the IEEE bits
    (independent of the engine's code): NaN becomes a quiet NaN."""
    bits = np.asarray(values, np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(np.asarray(values, np.float32))
    return np.where(nan, ((bits >> 16) | 0x40).astype(np.uint16), rounded)


def bf16_values(bits):
    return (np.asarray(bits, np.uint16).astype(np.uint32) << 16).view(np.float32)


def test_bf16_is_a_precision_name_and_the_cpu_refuses_it():
    assert "bf16" in core.precision_names()
    kind, options = core.device_options(device="cuda", precision="bf16")
    assert kind == "cuda" and options.precision == core.Precision.bf16 and "precision='bf16'" in repr(options)
    with pytest.raises(ValueError, match="CPU backend runs fp32"):
        dnnx.load(build("lenet"), precision="bf16")


def test_half_nodes_store_bfloat16_with_casts_at_the_edges():
    out = rewrite(conv_relu_gemm(), ["Conv", "Relu", "Flatten", "Gemm"])
    nodes, types = out["nodes"], out["types"]
    assert out["in_half"] == 4
    assert [n["op"] for n in nodes] == ["Cast", "Conv", "Relu", "Flatten", "Gemm", "Cast", "LeakyRelu"]
    entry, conv, back = nodes[0], nodes[1], nodes[5]
    assert entry["inputs"] == ["x"] and entry["to"] == TO_BF16 and conv["inputs"][0] == entry["outputs"][0]
    assert entry["outputs"][0] == "x/bf16"
    for value in ("c1", "r1", "f1", "g1"):
        assert types[value] == "bfloat16", value
    for name in conv["inputs"][1:]:
        assert types[name] == "bfloat16" and name.endswith("/bf16"), name
    assert back["to"] == TO_FLOAT and types["y"] == "float32" and "float16" not in types.values()


def test_initializers_round_to_nearest_even_like_the_reference():
    rng = np.random.default_rng(3)
    scales = np.float32(10.0) ** rng.uniform(-38, 38, 20000).astype(np.float32)
    values = (rng.standard_normal(20000).astype(np.float32) * scales).astype(np.float32)
    # exact ties (the dropped 16 bits are 0x8000) with an even and an odd upper half, values that
    # round up into the next binade, subnormals, the largest float (rounds to inf), NaN and infs
    ties = np.array([1 + 2**-8, 1 + 3 * 2**-8, 1 + 255 * 2**-8 + 2**-9, 2.0**-130, 3.4028235e38,
                     70000.0, 1e30, np.nan, np.inf, -np.inf, -0.0], np.float32)
    values = np.concatenate([values, ties])
    node = helper.make_node("Mul", ["x", "k"], ["y"], name="mul")
    out = rewrite(make_model([node], [("x", [values.size])], [("y", None)], {"k": values}), ["Mul"])
    (name,) = out["constants"]
    assert name == "k/bf16" and out["types"][name] == "bfloat16"
    got = np.frombuffer(out["constants"][name], np.uint16)
    np.testing.assert_array_equal(got, bf16_bits(values))
    back = bf16_values(got)
    assert back[-11] == 1.0 and back[-10] == 1 + 2 * 2**-7 and back[-9] == 2.0  # ties to even; carry
    assert back[-6] == 70144.0 and np.isfinite(back[-5])  # no fp16-style overflow at 65504
    assert np.isinf(back[-7]) and np.isnan(back[-4]) and np.signbit(back[-1])
    # within half a bfloat16 ulp of every finite normal value: 2^-8 relative (8 significant bits)
    finite = np.isfinite(values) & np.isfinite(back) & (np.abs(values) > 1.2e-38)
    assert np.all(np.abs(back[finite] - values[finite]) <= np.abs(values[finite]) * 2.0**-8)


def test_a_bfloat16_cast_in_a_loaded_model_is_a_bfloat16_cast_on_the_cpu():
    """A model's own Cast to BFLOAT16 is a value type on the CPU (issue #35; on a device it is a
    float32 Cast with the edge converted: python/dnnx/_edges.py), rounded to nearest even."""
    import ml_dtypes

    node = helper.make_node("Cast", ["x"], ["y"], name="to_bf16", to=TensorProto.BFLOAT16)
    model = make_model([node], [("x", [4])], [("y", [4], TensorProto.BFLOAT16)])
    x = np.array([1.0, 1.00390625, 1.01171875, -3.3e38], np.float32)  # ties to even, and a large value
    got = dnnx.load(model).run(x)
    assert got.dtype == np.dtype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(got.view(np.uint16), x.astype(ml_dtypes.bfloat16).view(np.uint16))


def test_lstm_rewrite_without_bf16_recurrent_kernels_keeps_the_lstm_float32():
    """cuDNN's RNNs take no bfloat16 (tests/cuda/test_cuda_bf16.py checks the CUDA registration):
    the LSTM keeps float32 between Casts, the layers after it store bfloat16."""
    out = rewrite(build("lstm"), ["Squeeze", "Gemm", "Softmax"])
    ops = [n["op"] for n in out["nodes"]]
    assert ops[0] == "LSTM" and "Cast" in ops and ops[-1] == "Cast", ops
    lstm = out["nodes"][0]
    assert all(out["types"][name] == "float32" for name in lstm["outputs"] if name)
    gemm = [n for n in out["nodes"] if n["op"] == "Gemm"][0]
    assert out["types"][gemm["outputs"][0]] == "bfloat16"


def test_unknown_half_type_is_refused():
    with pytest.raises(ValueError, match="half: expected 'float16' or 'bfloat16'"):
        pass_hooks.half_storage_rewrite(import_model(conv_relu_gemm()).ir, ["Conv"], half="float8")

