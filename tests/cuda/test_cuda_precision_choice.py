"""Note [measured precision] on CUDA (python/dnnx/_precision_choice.py): at fp16 and bf16 every
segment of half layers is timed at load against the same layers in fp32 and keeps fp32 where that
is faster. LeNet at batch 1 (measured on an H200: fp16 58.7 µs against fp32 29.1 µs before this
rule) keeps fp32, so it computes exactly what the fp32 plan computes; a wide conv network keeps
half; measure_precision=False gives the all-half plan; the reason is on every kept layer."""
import numpy as np
import pytest
from onnx import helper

import dnnx
from dnnx.examples import build
from ort_check import make_model, rand
from test_cuda_fp16 import weights

pytestmark = pytest.mark.usefixtures("fixed_layout")  # the pass's own forms (conftest.py)

KEPT = "(kept in fp32: measured faster in fp32 at input shape"


@pytest.mark.parametrize("precision", ["fp16", "bf16"])
def test_lenet_at_batch_1_keeps_fp32_and_computes_as_fp32(precision):
    model = build("lenet")
    gpu = dnnx.load(model, device="cuda", precision=precision)
    plan = gpu.plan()
    kept = [r for r in plan if KEPT in r["math"]]
    assert kept, plan
    assert all(not r["math"].startswith(precision) for r in plan), plan  # no half layer left
    assert not [r for r in plan if r["op"] == "Cast" or r["op"].endswith("@NHWC")], plan  # no conversions
    reason = kept[0]["math"]
    assert f"µs in {precision} with" in reason and "Note [measured precision]" in reason, reason
    conv = [r for r in plan if r["op"].startswith("Conv")]
    assert all("channels-last" in " ".join(c for c, _ in r["rejected"]) for r in conv), conv  # layout reason
    x = rand(1, 1, 28, 28)
    fp32 = dnnx.load(model, device="cuda").run(x)
    np.testing.assert_allclose(gpu.run(x), fp32, rtol=1e-6, atol=1e-7)
    assert gpu.load_profile()["precision_choice"] > 0


@pytest.mark.parametrize("precision", ["fp16", "bf16"])
def test_measure_precision_false_keeps_every_half_layer(precision):
    gpu = dnnx.load(build("lenet"), device="cuda", precision=precision, measure_precision=False)
    plan = gpu.plan()
    assert not [r for r in plan if r["math"].startswith("fp32")], plan
    assert plan[0]["op"] == "Cast" and "precision_choice" not in gpu.load_profile()


def wide_convs():
    """Three 3x3 convs of 128 channels on 32x32 at batch 32: tensor-op work that half storage wins."""
    nodes, inits, prev = [], {}, "x"
    for i in range(3):
        nodes.append(helper.make_node("Conv", [prev, f"w{i}", f"b{i}"], [f"c{i}"], name=f"conv{i}", pads=[1, 1, 1, 1]))
        nodes.append(helper.make_node("Relu", [f"c{i}"], [f"r{i}"], name=f"relu{i}"))
        inits[f"w{i}"], inits[f"b{i}"], prev = weights(128, 128, 3, 3, seed=i), rand(128, seed=10 + i), f"r{i}"
    nodes.append(helper.make_node("GlobalAveragePool", [prev], ["y"], name="gap"))
    return make_model(nodes, [("x", [32, 128, 32, 32])], [("y", None)], inits)


@pytest.mark.parametrize("precision", ["fp16", "bf16"])
def test_wide_convolutions_keep_half(precision):
    gpu = dnnx.load(wide_convs(), device="cuda", precision=precision)
    plan = gpu.plan()
    convs = [r for r in plan if r["op"].startswith("Conv")]
    assert len(convs) == 3 and all(r["math"].startswith(precision + " storage") for r in convs), plan
    assert not [r for r in plan if KEPT in r["math"]], plan


def test_a_kept_model_stays_right_across_batches_and_pickles():
    import pickle

    gpu = dnnx.load(build("lenet"), device="cuda", precision="fp16")
    assert [r for r in gpu.plan() if KEPT in r["math"]]
    x = rand(64, 1, 28, 28)
    np.testing.assert_allclose(gpu.run(x), dnnx.load(build("lenet"), device="cuda").run(x), rtol=1e-5, atol=1e-6)
    again = pickle.loads(pickle.dumps(gpu))
    assert [r for r in again.plan() if KEPT in r["math"]]  # measured again where it lands
    np.testing.assert_allclose(again.run(x), gpu.run(x), rtol=1e-5, atol=1e-6)
