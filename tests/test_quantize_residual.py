"""dnnx.quantize at residual joins (Note [int8 residual join] in python/dnnx/_quant_graph.py): an
Add of a quantized Conv's output (through its BatchNormalization) and a shortcut, [Relu], gets
QDQ pairs on its inputs and output, so that fuse_qdq_int8 makes the block's last Conv one Int8Conv
with a residual epilogue; the accuracy guard keeps a join whose own error exceeds the tolerance
float; onnxruntime runs the written file to dnnx's values within one quantization step."""
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import dnnx
from ort_check import ort_int8_exact, qdq_reference_session

ROOT = Path(__file__).resolve().parents[1]


def ort_first_output(proto, feeds):
    session = qdq_reference_session(proto.SerializeToString())
    return session.run(None, feeds)[0]


def one_step(proto) -> float:
    """One quantization step at the output, relative to its largest magnitude: the file's last
    Gemm reads a uint8 activation of scale s, and one step of one of its K inputs moves an output
    by s * |w| at most: s * max |w| (with the weights as the file dequantizes them). Both engines
    run the same integer grid; where a value sits at a rounding tie of a QuantizeLinear (onnxruntime
    adds in float, the fused layer in its epilogue's order) it lands one step apart."""
    inits = {t.name: numpy_helper.to_array(t) for t in proto.graph.initializer}
    producer = {o: n for n in proto.graph.node for o in n.output}
    gemm = [n for n in proto.graph.node if n.op_type == "Gemm"][-1]
    x_dq, w_dq = producer[gemm.input[0]], producer[gemm.input[1]]
    scale = float(inits[x_dq.input[1]])
    w = inits[w_dq.input[0]].astype(np.float64) * inits[w_dq.input[1]].reshape(-1, 1)
    return scale * float(np.abs(w).max())


# Where onnxruntime's int8 products saturate (ort_int8_exact), the reference is the QDQ graph run
# in float: each QuantizeLinear of a deep network then rounds float sums where the int8 layers
# round int32 ones, and a value at a tie moves a step at every layer it crosses (measured: up to 8
# steps at ResNet-18's output on an AVX2 EPYC). A wrong kernel is hundreds of steps off either way.
FLOAT_REFERENCE_STEPS = 16


def assert_within_one_step(got, want, proto):
    err = float(np.max(np.abs(got.astype(np.float64) - want)))
    steps = 1 if ort_int8_exact() else FLOAT_REFERENCE_STEPS
    assert err <= steps * one_step(proto) + 1e-6 * float(np.max(np.abs(want))), (err, one_step(proto))


def plan_of(proto) -> str:
    return str(dnnx.load(proto, batch_size=1).plan())


def residual_layers(plan: str) -> int:
    return sum(1 for line in plan.splitlines() if "Int8Conv" in line and "residual add" in line)


def float_layers(plan: str, op: str) -> int:
    return sum(1 for line in plan.splitlines() if f" {op} " in line)


def block_outputs(proto) -> list:
    """The Relu outputs after an Add: each residual block's output."""
    producer = {o: n for n in proto.graph.node for o in n.output}
    return [n.output[0] for n in proto.graph.node
            if n.op_type == "Relu" and getattr(producer.get(n.input[0]), "op_type", None) == "Add"]


def assert_blocks_fused(plan: str, proto, blocks: int):
    """`blocks` residual Int8Convs, and no float Add or Relu, nor a QuantizeLinear of a block's
    output, left between the blocks (the stem's and the classifier's input keep theirs)."""
    assert residual_layers(plan) == blocks, plan
    assert float_layers(plan, "Add") == 0 and float_layers(plan, "Relu") == 0, plan
    names = {line.split()[0] for line in plan.splitlines() if line.strip()}
    assert not [o for o in block_outputs(proto) if f"{o}_QuantizeLinear" in names], plan


# --- a small ResNet: an identity block, a projection block (both with BatchNormalization) -------

def conv_bn(nodes, inits, rng, x, name, cin, cout, k, stride, relu, gamma=1.0, bias=0.0):
    """Conv (He init) -> BatchNormalization [-> Relu]; `bias`: the BN's shift of channel 0."""
    inits[f"{name}.w"] = (rng.standard_normal((cout, cin, k, k)) * np.sqrt(2.0 / (cin * k * k))).astype(np.float32)
    beta = rng.uniform(-0.1, 0.1, cout).astype(np.float32)
    beta[0] += bias
    for p, v in (("gamma", gamma * rng.uniform(0.8, 1.2, cout)), ("beta", beta),
                 ("mean", rng.uniform(-0.1, 0.1, cout)), ("var", rng.uniform(0.8, 1.2, cout))):
        inits[f"{name}.{p}"] = np.asarray(v, np.float32)
    nodes += [helper.make_node("Conv", [x, f"{name}.w"], [f"{name}.conv"], name=f"{name}.conv",
                               kernel_shape=[k, k], strides=[stride] * 2, pads=[k // 2] * 4),
              helper.make_node("BatchNormalization", [f"{name}.conv"] + [f"{name}.{p}" for p in
                               ("gamma", "beta", "mean", "var")], [f"{name}.bn"], name=f"{name}.bn")]
    if not relu:
        return f"{name}.bn"
    nodes.append(helper.make_node("Relu", [f"{name}.bn"], [f"{name}.relu"], name=f"{name}.relu"))
    return f"{name}.relu"


def block(nodes, inits, rng, x, name, cin, cout, stride, bias=0.0):
    h = conv_bn(nodes, inits, rng, x, f"{name}.a", cin, cout, 3, stride, relu=True)
    h = conv_bn(nodes, inits, rng, h, f"{name}.b", cout, cout, 3, 1, relu=False, gamma=0.5, bias=bias)
    short = x
    if stride != 1 or cin != cout:
        short = conv_bn(nodes, inits, rng, x, f"{name}.proj", cin, cout, 1, stride, relu=False)
    nodes += [helper.make_node("Add", [h, short], [f"{name}.add"], name=f"{name}.add"),
              helper.make_node("Relu", [f"{name}.add"], [f"{name}.out"], name=f"{name}.out")]
    return f"{name}.out"


def small_resnet(bias=0.0) -> onnx.ModelProto:
    """x [N, 3, 16, 16] -> stem conv 3x3 + BN + Relu (16) -> identity block -> projection block
    (stride 2, 32) -> GlobalAveragePool -> Flatten -> Gemm 10. `bias`: added to channel 0 of the
    identity block's last BN shift."""
    rng = np.random.default_rng(0)
    nodes, inits = [], {}
    h = conv_bn(nodes, inits, rng, "x", "stem", 3, 16, 3, 1, relu=True)
    h = block(nodes, inits, rng, h, "b1", 16, 16, 1, bias)
    h = block(nodes, inits, rng, h, "b2", 16, 32, 2)
    inits["fc.w"] = (rng.standard_normal((10, 32)) / np.sqrt(32)).astype(np.float32)
    inits["fc.b"] = np.zeros(10, np.float32)
    nodes += [helper.make_node("GlobalAveragePool", [h], ["pool"], name="pool"),
              helper.make_node("Flatten", ["pool"], ["flat"], name="flat"),
              helper.make_node("Gemm", ["flat", "fc.w", "fc.b"], ["logits"], name="fc", transB=1)]
    graph = helper.make_graph(nodes, "small_resnet", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 16, 16])],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 10])],
                              [numpy_helper.from_array(v, k) for k, v in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def test_small_resnet_joins_fuse_into_residual_int8_convs(tmp_path):
    rng = np.random.default_rng(1)
    calibration = rng.standard_normal((32, 3, 16, 16)).astype(np.float32)
    x = rng.standard_normal((8, 3, 16, 16)).astype(np.float32)
    out = tmp_path / "q.onnx"
    # b2's projection join (two fresh signed inputs) measures 1.2 %: this test is about the fusion
    report = dnnx.quantize(small_resnet(), out, calibration=calibration, int8_tolerance=0.02, show_progress=False)
    rows = report.decisions()
    assert rows["b1.add"].op == "Add" and rows["b1.add"].precision == "int8", str(report)
    assert rows["b2.add"].precision == "int8", str(report)
    assert "2 of 2 residual join(s)" in str(report)
    written = onnx.load(str(out))
    nodes = {n.name: n for n in written.graph.node}
    assert all(i.endswith("_DequantizeLinear_Output") for i in nodes["b1.add"].input)
    assert nodes["pool"].input[0] == "b2.out_DequantizeLinear_Output"  # the join's output, read dequantized
    plan = plan_of(written)
    assert_blocks_fused(plan, small_resnet(), 2)
    assert float_layers(plan, "BatchNormalization") == 0, plan  # each joined its Int8Conv
    got = dnnx.load(written).run(x)
    want = ort_first_output(written, {"x": x})
    assert_within_one_step(got, want, written)
    fp32 = dnnx.load(small_resnet()).run(x)
    assert np.sqrt(np.mean((got - fp32) ** 2) / np.mean(fp32 ** 2)) < 0.05


def test_guard_keeps_a_lossy_join_float(tmp_path):
    """Channel 0 of b1's last BN is shifted by -200: the Relu after the Add zeroes it, so the float
    model does not feel it, but the join's quantized Conv input must span [-200, ...], a step that
    loses the other channels: the join stays float (its Conv keeps a float output), the layers stay
    int8, and the plan says why."""
    model = small_resnet(bias=-200.0)
    calibration = np.random.default_rng(2).standard_normal((32, 3, 16, 16)).astype(np.float32)
    out = tmp_path / "q.onnx"
    report = dnnx.quantize(model, out, calibration=calibration, int8_tolerance=0.015, show_progress=False)
    rows = report.decisions()
    assert rows["b1.add"].precision == "fp32" and rows["b1.add"].error > 0.01, str(report)
    assert "exceeds int8_tolerance" in rows["b1.add"].why and "b1.b.conv keeps a float output" in rows["b1.add"].why
    assert rows["b1.b.conv"].precision == "int8" and rows["b2.add"].precision == "int8", str(report)
    written = onnx.load(str(out))
    assert list({n.name: n for n in written.graph.node}["b1.add"].input) == ["b1.b.bn", "stem.relu"]
    model_plan = dnnx.load(written, batch_size=1).plan()
    rows_by_name = {r["name"]: r for r in model_plan}
    assert rows_by_name["b1.add"]["precision"].startswith("fp32 (kept in fp32: error")
    assert residual_layers(str(model_plan)) == 1
    x = np.random.default_rng(3).standard_normal((8, 3, 16, 16)).astype(np.float32)
    assert_within_one_step(dnnx.load(written).run(x), ort_first_output(written, {"x": x}), written)
    loose = dnnx.quantize(model, out, calibration=calibration, int8_tolerance=10.0, show_progress=False)
    assert loose.decisions()["b1.add"].precision == "int8"


def test_join_of_a_float_conv_stays_float(tmp_path):
    """A guard that keeps every layer float keeps every join float too, saying so."""
    calibration = np.random.default_rng(4).standard_normal((8, 3, 16, 16)).astype(np.float32)
    report = dnnx.quantize(small_resnet(), tmp_path / "q.onnx", calibration=calibration, int8_tolerance=0.0,
                           show_progress=False)
    joins = [r for r in report.layers if r.op == "Add"]
    assert len(joins) == 2 and all(r.precision == "fp32" and "is kept in fp32" in r.why for r in joins), str(report)


# --- the zoo's ResNet-18 and bench/resnet50.py's ResNet-50 --------------------------------------

def zoo_resnet18(side):
    from zoo_check import zoo_model_at

    return zoo_model_at("resnet18", side)


def resnet50(side):
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from resnet50 import build_resnet50
    finally:
        sys.path.remove(str(ROOT / "bench"))
    model = build_resnet50(seed=0)
    for dim in model.graph.input[0].type.tensor_type.shape.dim[2:]:
        dim.dim_value = side
    del model.graph.value_info[:]  # the 224 x 224 shapes it was built with
    return model


@pytest.mark.parametrize("name, blocks", [("resnet18", 8), ("resnet50", 16)])
def test_resnet_blocks_fuse_and_match_onnxruntime(tmp_path, name, blocks):
    model = zoo_resnet18(112) if name == "resnet18" else resnet50(64)
    side = model.graph.input[0].type.tensor_type.shape.dim[2].dim_value
    rng = np.random.default_rng(0)
    calibration = rng.standard_normal((4, 3, side, side)).astype(np.float32)
    x = rng.standard_normal((4, 3, side, side)).astype(np.float32)
    # at the default 1 % the guard keeps a projection join or a few float (1.03 to 1.14 %: two
    # fresh signed inputs); this test is about the fusion and onnxruntime
    report = dnnx.quantize(model, tmp_path / "q.onnx", calibration=calibration, int8_tolerance=0.02,
                           show_progress=False)
    joins = [r for r in report.layers if r.op == "Add"]
    assert len(joins) == blocks and all(r.precision == "int8" for r in joins), str(report)
    written = report.model
    assert_blocks_fused(plan_of(written), model, blocks)
    got = dnnx.load(written).run(x)
    want = ort_first_output(written, {written.graph.input[0].name: x})
    if name == "resnet18":  # BatchNormalization folded into its convs: the same integer grid
        assert_within_one_step(got, want, written)
    else:
        # ResNet-50's BatchNormalization nodes stay in the file: onnxruntime runs Conv and BN in
        # float, dnnx as one more step of the int8 layer's epilogue (Note [int8 batchnorm]): float
        # rounding moves values at rounding ties by one step, and 16 untrained blocks spread the
        # flips (the file without the joins is 0.8 % of the largest output apart too; dnnx's own
        # float-between-QDQ path about as far): within 2.5 %, the same top-1 (below).
        assert np.max(np.abs(got - want)) <= 0.025 * np.max(np.abs(want))
    fp32 = dnnx.load(model).run(x)
    assert np.mean(fp32.argmax(1) == got.argmax(1)) >= 0.75
    assert np.array_equal(want.argmax(1), got.argmax(1))
