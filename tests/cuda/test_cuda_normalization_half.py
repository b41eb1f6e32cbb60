"""LayerNormalization, InstanceNormalization and GroupNormalization on CUDA in float32, float16 and
bfloat16 storage (normalization_kernels.cu: the sums in float32; rows of up to 1024 elements one
warp each, Note [warp rows], longer rows one block each). Against onnxruntime with the tolerances
of each precision: cuda_check.py's for fp32, test_cuda_fp16.py's and test_cuda_bf16.py's one-layer
bounds for the half types (the inputs, the parameters and the output are each rounded once; the
sums are float32). The plan shows the half layer and the kernel."""
import pytest
from onnx import helper

import dnnx
from ort_check import make_model, rand, run_ort
from precision_check import assert_layer_close


def compare(model, feeds, precision):
    m = dnnx.load(model, device="cuda", precision=precision, plan_cache=False,
                  **({"measure_precision": False} if precision in ("fp16", "bf16") else {}))
    got = m.run_dict(feeds)
    for name, want in run_ort(model, feeds).items():
        assert_layer_close(precision, got[name], want, name)
    return m.plan()


def layer_norm(shape, axis=-1, bias=True, stats=False):
    norm = shape[axis:] if axis != -1 else shape[-1:]
    inits = {"s": rand(*norm, seed=2) + 1.0}
    if bias:
        inits["b"] = rand(*norm, seed=3)
    outs = ["y", "mean", "inv_std"] if stats else ["y"]
    node = helper.make_node("LayerNormalization", ["x", "s"] + (["b"] if bias else []), outs, name="ln", axis=axis)
    return make_model([node], [("x", list(shape))], [(o, None) for o in outs], inits, opset=17)


@pytest.mark.parametrize("precision", ["fp32", "fp16", "bf16"])
@pytest.mark.parametrize("shape, axis, kernel", [
    ((4, 7, 96), -1, "warp row kernel"),      # ConvNeXt's 96 channels: 3 values per lane
    ((3, 768), -1, "warp row kernel"),        # a transformer's 768: 24 per lane
    ((2, 5, 33), -1, "warp row kernel"),      # one past a lane's multiple
    ((5, 8, 128), 1, "warp row kernel"),      # two normalized dims, 1024 elements: the warp's limit
    ((3, 2000), -1, "row kernel"),            # past it: one block per row
])
@pytest.mark.parametrize("bias", [True, False])
def test_layer_norm_at_every_precision(shape, axis, kernel, bias, precision):
    x = rand(*shape, seed=1) * 3 + 0.5
    plan = compare(layer_norm(shape, axis, bias), {"x": x}, precision)
    row = [r for r in plan if r["op"] == "LayerNormalization"][0]
    assert row["algorithm"] == kernel, row
    if precision != "fp32":
        assert row["math"].startswith(precision), row  # the layer stores half: no conversion around it


def test_layer_norm_statistics_outputs_in_the_warp_kernel():
    x = rand(6, 96, seed=4)
    plan = compare(layer_norm((6, 96), stats=True), {"x": x}, "fp32")
    assert [r["algorithm"] for r in plan if r["op"] == "LayerNormalization"] == ["warp row kernel"]


@pytest.mark.parametrize("precision", ["fp16", "bf16"])
def test_instance_and_group_norm_at_half_precision(precision):
    c = 8
    inst = make_model([helper.make_node("InstanceNormalization", ["x", "s", "b"], ["y"], name="in")],
                      [("x", [2, c, 5, 6])], [("y", None)], {"s": rand(c, seed=2) + 1, "b": rand(c, seed=3)})
    compare(inst, {"x": rand(2, c, 5, 6, seed=1)}, precision)
    group = make_model([helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"], name="gn", num_groups=4)],
                       [("x", [2, c, 40, 40])], [("y", [2, c, 40, 40])], {"s": rand(c, seed=2) + 1, "b": rand(c, seed=3)},
                       opset=21)
    compare(group, {"x": rand(2, c, 40, 40, seed=1)}, precision)
