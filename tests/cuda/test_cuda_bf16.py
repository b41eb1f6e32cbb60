"""precision="bf16" on CUDA (Note [half storage] in engine/runtime/passes/half_storage.cc): every
operator of tests/cuda/test_cuda_fp16.py's cases in a bf16 model against onnxruntime's fp32, the
plan's math per layer and the edge conversions, the recurrent layers kept fp32 (cuDNN's RNNs take
no bfloat16), LeNet, the model families and ResNet-50 in bf16, bf16's float32 range (no range
check), float32 outputs, and fine-tuning with bf16 frozen layers and fp32 master weights (Note
[bf16 fine-tuning] in engine/train/trainer.cc). The zoo models run in bf16 in test_cuda_zoo_models.py.

Tolerance. bf16 keeps 8 significant bits: every stored value carries a relative rounding error of
up to u = 2^-8 ~ 3.9e-3, 8 times fp16's 2^-11, with the same fp32 accumulation. So the bounds
are fp16's (test_cuda_fp16.py: one layer rtol 1e-2, atol 1e-2 x max|want|, relative L2 5e-3,
about 10 of fp16's u) scaled by 8: one layer 8e-2 / 8e-2 and relative L2 <= 4e-2; whole models
0.24 / 0.24 and L2 <= 0.16 (ResNet-50's 53 layers: relative L2 <= 0.2 alone). fp32 on the same
ops stays below 2e-5, and test_bf16_is_visibly_less_precise_than_fp16 shows that bfloat16
storage really ran.

Every model here loads with measure_precision=False: what is tested is the bf16 kernels, and
Note [measured precision] would keep most of these small models in fp32 (that rule has its own
tests in test_cuda_precision_choice.py)."""
import numpy as np
import pytest
from onnx import helper

import dnnx
from dnnx._digits import load_digits
from dnnx.examples import build
from dnnx.examples.lenet import build_lenet
from ort_check import make_model, rand, run_ort
from test_cuda_fp16 import (CASES, FALLBACK_CASES, _resnet50_builder, layer, node_model, relative_l2,
                            weights)
from test_model_families import FAMILIES

OP_RTOL, OP_ATOL, OP_L2 = 8e-2, 8e-2, 4e-2
MODEL_RTOL, MODEL_ATOL, MODEL_L2 = 0.24, 0.24, 0.16

BF16_CONV = "bf16 storage, tensor ops, fp32 accumulation (CUDNN_TENSOR_OP_MATH)"
BF16_BLAS = "bf16 storage, tensor ops, fp32 accumulation (CUBLAS_COMPUTE_32F)"
TO_BF16 = "float32 -> bfloat16 (round to nearest even)"
TO_FLOAT = "bfloat16 -> float32 (exact)"


def assert_bf16_close(got, want, what, rtol=OP_RTOL, atol=OP_ATOL, l2=OP_L2):
    assert isinstance(got, np.ndarray) and got.shape == want.shape, f"{what}: {type(got)} {got.shape} {want.shape}"
    if want.dtype.kind != "f":
        np.testing.assert_array_equal(got, want, err_msg=what)
        return
    assert got.dtype == np.float32, f"{what}: {got.dtype}"
    scale = float(np.abs(want).max()) if want.size else 0.0
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol * max(scale, 1e-30), err_msg=what)
    assert relative_l2(got, want) <= l2, f"{what}: relative L2 {relative_l2(got, want):.3g} > {l2}"


def check_bf16(model, feeds, rtol=OP_RTOL, atol=OP_ATOL, l2=OP_L2, **load_kwargs):
    gpu = dnnx.load(model, device="cuda", precision="bf16", measure_precision=False, **load_kwargs)
    got, want = gpu.run_dict(feeds), run_ort(model, feeds)
    assert set(got) == set(want)
    for name, w in want.items():
        assert_bf16_close(got[name], w, name, rtol, atol, l2)
    return gpu


@pytest.mark.parametrize("case", list(CASES))
def test_op_in_bf16(case):
    model, feeds = CASES[case]()
    gpu = check_bf16(model, feeds)
    op = model.graph.node[0].op_type
    plan = gpu.plan()
    if op in ("Reshape", "Flatten"):
        assert layer(plan, op)["algorithm"] == "view (no copy)"
        return
    row = layer(plan, op)
    assert "bf16" in row["math"] and "fp16" not in row["math"], row
    assert not row["math"].startswith("fp32"), row
    if op == "Conv":
        assert row["math"].startswith("bf16 storage, "), row
        assert "direct" not in row["algorithm"], row  # the direct kernel is float32 only
    if op in ("Gemm", "MatMul"):
        assert row["math"] == BF16_BLAS, row
    assert plan[0]["op"] == "Cast" and plan[0]["math"] == TO_BF16, plan[0]
    assert plan[-1]["op"] == "Cast" and plan[-1]["math"] == TO_FLOAT, plan[-1]


@pytest.mark.parametrize("case", list(FALLBACK_CASES))
def test_op_without_a_bf16_kernel_runs_fp32_visibly(case):
    model, feeds = FALLBACK_CASES[case]()
    row = layer(check_bf16(model, feeds).plan(), model.graph.node[0].op_type)
    assert row["math"].startswith("fp32") and "no bf16 kernel" in row["math"], row


@pytest.mark.parametrize("search", ["heuristic", "exhaustive"])
def test_lenet_in_bf16(search):
    model = build("lenet")
    x = rand(64, 1, 28, 28)
    gpu = dnnx.load(model, device="cuda", precision="bf16", measure_precision=False,
                    algo_search=search, batch_size=64, plan_cache=False)
    plan = gpu.plan()
    assert plan[0]["math"] == TO_BF16 and plan[-1]["math"] == TO_FLOAT
    for row in plan:
        if row["op"].startswith("Conv"):
            assert row["math"].startswith("bf16 storage, "), row
        if row["op"].startswith("Gemm") or row["op"] == "MatMul":
            assert row["math"] == BF16_BLAS, row
    want = dnnx.load(model, batch_size=64).run(x)
    assert_bf16_close(gpu.run(x), want, f"lenet bf16 ({search}) vs cpu", MODEL_RTOL, MODEL_ATOL, MODEL_L2)


def test_bf16_is_visibly_less_precise_than_fp16():
    """8 significant bits against 11: on one conv the error is several times fp16's (8x in
    expectation); asserting 2x leaves room for the error's spread while proving bf16 ran."""
    model = node_model("Conv", [("x", [8, 64, 16, 16])], inits={"w": weights(64, 64, 3, 3)}, pads=[1, 1, 1, 1])
    x = rand(8, 64, 16, 16)
    want = dnnx.load(model).run(x)
    bf16 = dnnx.load(model, device="cuda", precision="bf16", measure_precision=False).run(x)
    fp16 = dnnx.load(model, device="cuda", precision="fp16", measure_precision=False).run(x)
    assert_bf16_close(bf16, want, "conv bf16 vs cpu")
    assert relative_l2(bf16, want) > 2 * relative_l2(fp16, want), (relative_l2(bf16, want), relative_l2(fp16, want))


def test_bf16_keeps_values_past_fp16_range_without_fp32_layers():
    """fp16 keeps a layer whose values pass 65504 in fp32 (Note [fp16 range]); bfloat16 has
    float32's exponent range, so the same model runs every layer in bf16 and stays finite."""
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("Mul", ["r", "k"], ["y"], name="scale")]
    inits = {"w": weights(8, 4, 3, 3), "b": rand(8), "k": np.full([1], 1e6, np.float32)}
    model = make_model(nodes, [("x", [2, 4, 8, 8])], [("y", None)], inits)
    x = {"x": rand(2, 4, 8, 8)}
    fp16 = dnnx.load(model, device="cuda", precision="fp16", measure_precision=False, passes={"channels_last": False})
    assert any("fp16's range" in r["math"] for r in fp16.plan()), fp16.plan()
    gpu = check_bf16(model, x, MODEL_RTOL, MODEL_ATOL, MODEL_L2, passes={"channels_last": False})
    assert not [r for r in gpu.plan() if r["math"].startswith("fp32")], gpu.plan()
    assert float(np.abs(gpu.run(x["x"])).max()) > 1e5


def test_lstm_example_keeps_the_lstm_fp32_and_the_rest_in_bf16():
    model = build("lstm")
    x = rand(16, 4, 8)
    gpu = dnnx.load(model, device="cuda", precision="bf16", measure_precision=False)
    plan = gpu.plan()
    lstm = layer(plan, "LSTM")
    assert lstm["math"].startswith("fp32 (no bf16 kernel"), lstm
    assert any(r["math"] == BF16_BLAS for r in plan), plan
    assert_bf16_close(gpu.run(x), dnnx.load(model).run(x), "lstm bf16 vs cpu", MODEL_RTOL, MODEL_ATOL, MODEL_L2)


@pytest.mark.parametrize("batch", [1, 8])
@pytest.mark.parametrize("family", list(FAMILIES))
def test_family_in_bf16(family, batch):
    make, x_shape = FAMILIES[family]
    feeds = {"x": rand(batch, *x_shape, seed=batch)}
    got = dnnx.load(make(), device="cuda", precision="bf16", measure_precision=False, batch_size=batch).run_dict(feeds)
    for name, want in run_ort(make(), feeds).items():
        assert_bf16_close(got[name], want, f"{family} {name} bf16", MODEL_RTOL, MODEL_ATOL, MODEL_L2)


def test_outputs_on_the_device_are_float32():
    gpu = dnnx.load(build("lenet"), device="cuda", precision="bf16", measure_precision=False, batch_size=4)
    x = rand(4, 1, 28, 28)
    device = gpu.run(x, output="device")
    assert device.dtype == np.float32 and device.__cuda_array_interface__["typestr"] == "<f4"
    np.testing.assert_array_equal(device.numpy(), gpu.run(x))


def test_resnet50_in_bf16():
    model = _resnet50_builder()(seed=0)
    x = rand(2, 3, 224, 224)
    gpu = dnnx.load(model, device="cuda", precision="bf16", measure_precision=False, batch_size=2)
    plan = gpu.plan()
    assert not [r for r in plan if r["math"].startswith("fp32")], plan  # every layer has a bf16 kernel
    assert sum(r["op"].startswith("Conv") for r in plan) == 53
    got, want = gpu.run(x), dnnx.load(model, batch_size=2).run(x)
    assert np.isfinite(got).all() and relative_l2(got, want) <= 0.2, relative_l2(got, want)


# --- fine-tuning (Note [bf16 fine-tuning]) -------------------------------------------------------

STEPS, BATCH = 8, 64


def tune(precision, steps=STEPS):
    x, y = load_digits([1, 1, 28, 28], seed=0)[:2]
    model = dnnx.load(build_lenet(seed=0), device="cuda", precision=precision, measure_precision=False)
    tuner = model.finetune(trainable="last:2", lr=0.05, momentum=0.9)
    order = np.random.default_rng(0).permutation(len(y))
    losses = []
    for s in range(steps):
        b = order[(s * BATCH) % len(y):][:BATCH]
        losses.append(tuner.step(x[b], y[b]))
    return model, tuner, np.array(losses), x


def test_finetune_in_bf16_trains_fp32_masters_behind_a_bf16_head(tmp_path):
    """The frozen head (conv1, conv2 and their pools) stores bf16; the trained layers (fc1, fc2)
    run fp32 on fp32 weights. Against an fp32 fine-tune of the same model and batches: the head's
    outputs differ by bf16 rounding (relative <= 2^-8 per value, compounded over two convs: a few
    1e-3), which moves each step's gradient by about as much, and 8 momentum steps at lr 0.05
    amplify that: on an H200 the losses drifted from 3e-4 apart at the first step to 3.2% at the
    seventh. So each loss agrees to 6e-2 relative and the tuned weights to 6e-2 in relative L2
    (fp32 CUDA against the CPU agrees to 1e-4 / 1e-3: tests/cuda/test_cuda_finetune.py)."""
    model, tuner, losses, x = tune("bf16")
    ref_model, ref_tuner, ref_losses, _ = tune("fp32")
    assert losses[-1] < losses[0]  # it learns
    np.testing.assert_allclose(losses, ref_losses, rtol=6e-2)
    assert abs(losses[0] - ref_losses[0]) <= 2e-3 * ref_losses[0]  # before any update: the head alone
    weights, ref = tuner.weights(), ref_tuner.weights()
    assert set(weights) == {"fc1.w", "fc1.b", "fc2.w", "fc2.b"}
    for name, w in weights.items():
        assert w.dtype == np.float32, name  # masters, never rounded
        assert relative_l2(w, ref[name]) <= 6e-2, (name, relative_l2(w, ref[name]))
    bf16_bits = (weights["fc1.w"].view(np.uint32) & 0xFFFF) != 0
    assert bf16_bits.mean() > 0.9  # the masters keep float32's low bits: not bfloat16 values
    rows = tuner.plan(batch_size=BATCH)
    frozen = [r for r in rows if r["stage"] == "frozen" and r["op"].startswith("Conv")]
    trained = [r for r in rows if r["stage"] == "forward" and r["op"].startswith("Gemm")]
    assert frozen and all(r["math"].startswith("bf16 storage") for r in frozen), rows
    assert trained and all("bf16" not in r["math"] for r in trained), rows
    # The model runs the tuned weights (rounded to bf16 by its rebuilt engine) like the fp32 one.
    got, want = model.run(x[:32]), ref_model.run(x[:32])
    assert_bf16_close(got, want, "tuned lenet bf16 vs fp32", MODEL_RTOL, MODEL_ATOL, MODEL_L2)
    assert (got.argmax(1) == want.argmax(1)).mean() >= 0.9
    path = tmp_path / "tuned.onnx"
    model.save(path)
    saved = dnnx.load(str(path)).run(x[:32])
    np.testing.assert_allclose(saved, ref_model.run(x[:32]), rtol=0.05, atol=0.05)


def test_finetune_is_still_refused_in_fp16():
    with pytest.raises(ValueError, match="not fp16"):
        dnnx.load(build("lenet"), device="cuda", precision="fp16").finetune()
