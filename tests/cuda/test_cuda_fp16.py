"""precision="fp16" on CUDA (Note [half storage] in engine/runtime/passes/half_storage.cc): every
operator the CUDA backend runs, in an fp16 model, against onnxruntime's fp32; the plan's math per
layer and the edge conversions; the fp32 fallback between conversions; LeNet, the LSTM example,
the model families and a ResNet-50 in fp16; float32 outputs, on the host and on the device.

Tolerance. fp16 keeps 11 significant bits: every stored value (input, weight, activation) carries
a relative rounding error of up to u = 2^-11 ~ 4.9e-4. One layer reads rounded inputs and weights
and rounds its result (about 3u per value); a reduction of K products accumulated in fp32 adds
the rounding of each product's operands, which grows like sqrt(K) * u relative to the sum of
|terms| and so, where terms cancel, relative to the result too: hence an absolute part scaled by
the output's magnitude. For one layer (K up to ~600 here): |got - want| <= 1e-2 * |want| +
1e-2 * max|want| and a relative L2 error <= 5e-3 (about 10u). Whole models compound the error
layer by layer: 3e-2 / 3e-2 and relative L2 <= 2e-2 (ResNet-50's 53 layers: 6e-2). fp32 on the
same ops stays below 2e-5 (cuda_check.py), so these bounds cannot hide a wrong kernel, and
test_fp16_is_visibly_less_precise_than_fp32 shows that half storage really ran. Every model here
loads with measure_precision=False: the half kernels are what is tested, and Note [measured
precision] would keep most of these small models in fp32 (test_cuda_precision_choice.py)."""
import importlib.util
import os

import numpy as np
import pytest
from onnx import TensorProto, helper

import dnnx
from cuda_check import L2 as FP32_L2
from dnnx.examples import build
from ort_check import make_model, rand, run_ort
from test_cuda_lstm import to_graph_input
from test_lstm import lstm_case
from test_model_families import FAMILIES

pytestmark = pytest.mark.usefixtures("fixed_layout")  # the pass's own forms (conftest.py)

OP_RTOL, OP_ATOL, OP_L2 = 1e-2, 1e-2, 5e-3
MODEL_RTOL, MODEL_ATOL, MODEL_L2 = 3e-2, 3e-2, 2e-2

HALF_CONV = "fp16 storage, tensor ops, fp32 accumulation (CUDNN_TENSOR_OP_MATH)"
HALF_CONV_FMA = "fp16 storage, fp32 arithmetic (CUDNN_FMA_MATH)"
HALF_BLAS = "fp16 storage, tensor ops, fp32 accumulation (CUBLAS_COMPUTE_32F)"
TO_HALF = "float32 -> float16 (round to nearest even)"
TO_FLOAT = "float16 -> float32 (exact)"


def relative_l2(got, want):
    norm = float(np.linalg.norm(want.astype(np.float64)))
    return float(np.linalg.norm(got.astype(np.float64) - want)) / norm if norm else 0.0


def assert_fp16_close(got, want, what, rtol=OP_RTOL, atol=OP_ATOL, l2=OP_L2):
    assert isinstance(got, np.ndarray) and got.dtype == np.float32, f"{what}: {type(got)} {got.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    if want.dtype.kind != "f":
        np.testing.assert_array_equal(got, want, err_msg=what)
        return
    scale = float(np.abs(want).max()) if want.size else 0.0
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol * max(scale, 1e-30), err_msg=what)
    assert relative_l2(got, want) <= l2, f"{what}: relative L2 {relative_l2(got, want):.3g} > {l2}"


def check_fp16(model, feeds, rtol=OP_RTOL, atol=OP_ATOL, l2=OP_L2, **load_kwargs):
    """Runs `model` in fp16 on CUDA, compares every output with onnxruntime; returns the model."""
    gpu = dnnx.load(model, device="cuda", precision="fp16", measure_precision=False, **load_kwargs)
    got = gpu.run_dict(feeds)
    want = run_ort(model, feeds)
    assert set(got) == set(want)
    for name, w in want.items():
        if w.dtype == np.float32:
            assert_fp16_close(got[name], w, name, rtol, atol, l2)
        else:
            np.testing.assert_array_equal(got[name], w, err_msg=name)
    return gpu


def node_model(op, inputs, out_count=1, inits=None, opset=17, **attrs):
    """One node named `op.lower()` over graph inputs [(name, shape)] and initializers."""
    outs = [f"y{i}" for i in range(out_count)]
    node = helper.make_node(op, [n for n, _ in inputs] + list(inits or {}), outs, name=op.lower(), **attrs)
    return make_model([node], inputs, [(o, None) for o in outs], inits or {}, opset=opset)


def weights(*shape, seed=1):
    fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 1
    return (rand(*shape, seed=seed) / np.sqrt(fan_in)).astype(np.float32)


X4 = [2, 3, 8, 8]

# name: () -> (model, feeds). Every op the CUDA backend runs has a float16 kernel but Cast.
CASES = {
    "conv": lambda: (node_model("Conv", [("x", [2, 8, 10, 10])], inits={"w": weights(16, 8, 3, 3), "b": rand(16)},
                                pads=[1, 1, 1, 1]), {"x": rand(2, 8, 10, 10)}),
    "conv_stride_group": lambda: (node_model("Conv", [("x", [2, 8, 9, 9])], inits={"w": weights(8, 4, 3, 3)},
                                             strides=[2, 2], group=2), {"x": rand(2, 8, 9, 9)}),
    "conv_one_channel": lambda: (node_model("Conv", [("x", [4, 1, 28, 28])], inits={"w": weights(6, 1, 5, 5),
                                                                                 "b": rand(6)}),
                                 {"x": rand(4, 1, 28, 28)}),
    "conv_asymmetric_pads": lambda: (node_model("Conv", [("x", [1, 4, 7, 7])], inits={"w": weights(4, 4, 3, 3)},
                                                pads=[0, 1, 2, 0]), {"x": rand(1, 4, 7, 7)}),
    "conv_1d": lambda: (node_model("Conv", [("x", [2, 4, 16])], inits={"w": weights(6, 4, 3)}, pads=[1, 1]),
                        {"x": rand(2, 4, 16)}),
    "gemm_bias": lambda: (node_model("Gemm", [("a", [16, 64])], inits={"b": weights(32, 64), "c": rand(32)},
                                     transB=1), {"a": rand(16, 64)}),
    "gemm_full_c": lambda: (node_model("Gemm", [("a", [64, 16])], inits={"b": weights(64, 24), "c": rand(16, 24)},
                                       transA=1, alpha=0.5, beta=2.0), {"a": rand(64, 16)}),
    "gemm_no_c": lambda: (node_model("Gemm", [("a", [5, 40])], inits={"b": weights(40, 7)}), {"a": rand(5, 40)}),
    "matmul": lambda: (node_model("MatMul", [("a", [3, 16, 32])], inits={"b": weights(32, 24)}),
                       {"a": rand(3, 16, 32)}),
    "matmul_batched": lambda: (node_model("MatMul", [("a", [3, 8, 32]), ("b", [3, 32, 8])]),
                               {"a": rand(3, 8, 32), "b": rand(3, 32, 8, seed=2) / 5}),
    "matmul_broadcast": lambda: (node_model("MatMul", [("a", [2, 1, 4, 16]), ("b", [3, 16, 5])]),
                                 {"a": rand(2, 1, 4, 16), "b": rand(3, 16, 5, seed=2) / 4}),
    "maxpool": lambda: (node_model("MaxPool", [("x", X4)], kernel_shape=[2, 2], strides=[2, 2]), {"x": rand(*X4)}),
    "maxpool_pads": lambda: (node_model("MaxPool", [("x", X4)], kernel_shape=[3, 3], strides=[2, 2],
                                        pads=[1, 1, 1, 1]), {"x": rand(*X4)}),
    "global_average_pool": lambda: (node_model("GlobalAveragePool", [("x", X4)]), {"x": rand(*X4)}),
    "global_max_pool": lambda: (node_model("GlobalMaxPool", [("x", X4)]), {"x": rand(*X4)}),
    "relu": lambda: (node_model("Relu", [("x", [4, 50])]), {"x": rand(4, 50)}),
    "sigmoid": lambda: (node_model("Sigmoid", [("x", [4, 50])]), {"x": rand(4, 50)}),
    "tanh": lambda: (node_model("Tanh", [("x", [4, 50])]), {"x": rand(4, 50)}),
    "softmax": lambda: (node_model("Softmax", [("x", [4, 10])]), {"x": 3 * rand(4, 10)}),
    "log_softmax": lambda: (node_model("LogSoftmax", [("x", [4, 10])], axis=1), {"x": 3 * rand(4, 10)}),
    "add_broadcast": lambda: (node_model("Add", [("x", X4)], inits={"b": rand(3, 1, 1)}), {"x": rand(*X4)}),
    "sub": lambda: (node_model("Sub", [("x", [4, 5]), ("z", [4, 5])]), {"x": rand(4, 5), "z": rand(4, 5, seed=2)}),
    "mul": lambda: (node_model("Mul", [("x", [4, 5])], inits={"b": rand(5)}), {"x": rand(4, 5)}),
    "div": lambda: (node_model("Div", [("x", [4, 5])], inits={"b": np.abs(rand(5)) + 0.5}), {"x": rand(4, 5)}),
    "sum": lambda: (node_model("Sum", [("x", [4, 5]), ("z", [5]), ("w", [4, 1])]),
                    {"x": rand(4, 5), "z": rand(5, seed=2), "w": rand(4, 1, seed=3)}),
    "max": lambda: (node_model("Max", [("x", [4, 5]), ("z", [4, 5])]), {"x": rand(4, 5), "z": rand(4, 5, seed=2)}),
    "min": lambda: (node_model("Min", [("x", [4, 5]), ("z", [4, 5])]), {"x": rand(4, 5), "z": rand(4, 5, seed=2)}),
    "mean": lambda: (node_model("Mean", [("x", [4, 5]), ("z", [5]), ("w", [4, 1])]),
                     {"x": rand(4, 5), "z": rand(5, seed=2), "w": rand(4, 1, seed=3)}),
    "transpose": lambda: (node_model("Transpose", [("x", X4)], perm=[0, 2, 3, 1]), {"x": rand(*X4)}),
    "concat": lambda: (node_model("Concat", [("x", [2, 3]), ("z", [2, 4])], axis=1),
                       {"x": rand(2, 3), "z": rand(2, 4, seed=2)}),
    "slice": lambda: (node_model("Slice", [("x", [6, 8])], inits={"starts": np.array([1, 0], np.int64),
                                                               "ends": np.array([5, 8], np.int64),
                                                               "axes": np.array([0, 1], np.int64),
                                                               "steps": np.array([2, 3], np.int64)}),
                      {"x": rand(6, 8)}),
    "split": lambda: (node_model("Split", [("x", [4, 6])], out_count=2, axis=1), {"x": rand(4, 6)}),
    "expand": lambda: (node_model("Expand", [("x", [3, 1])], inits={"shape": np.array([2, 3, 4], np.int64)}),
                       {"x": rand(3, 1)}),
    "gather": lambda: (node_model("Gather", [("x", [5, 4])], inits={"idx": np.array([4, 0, 2], np.int64)}, axis=0),
                       {"x": rand(5, 4)}),
    "pad": lambda: (node_model("Pad", [("x", [2, 3])], inits={"pads": np.array([0, 1, 1, 2], np.int64),
                                                           "value": np.array(1.5, np.float32)}),
                    {"x": rand(2, 3)}),
    "reshape": lambda: (node_model("Reshape", [("x", [2, 12])], inits={"shape": np.array([4, 6], np.int64)}),
                        {"x": rand(2, 12)}),
    "flatten": lambda: (node_model("Flatten", [("x", X4)]), {"x": rand(*X4)}),
    "batchnorm": lambda: (node_model("BatchNormalization", [("x", X4)],
                                     inits={"s": rand(3, seed=2), "b": rand(3, seed=3), "m": rand(3, seed=4),
                                            "v": np.abs(rand(3, seed=5)) + 0.5}), {"x": rand(*X4)}),
    "leaky_relu": lambda: (node_model("LeakyRelu", [("x", [4, 5])], alpha=0.2), {"x": rand(4, 5)}),
    "elu": lambda: (node_model("Elu", [("x", [4, 5])]), {"x": rand(4, 5)}),
    "selu": lambda: (node_model("Selu", [("x", [4, 5])]), {"x": rand(4, 5)}),
    "pad_reflect": lambda: (node_model("Pad", [("x", [2, 5])], inits={"pads": np.array([1, 2, 0, 3], np.int64)},
                                       mode="reflect"), {"x": rand(2, 5)}),
    "clip": lambda: (node_model("Clip", [("x", [4, 5])], inits={"lo": np.array(-0.3, np.float32),
                                                               "hi": np.array(0.8, np.float32)}),
                     {"x": rand(4, 5)}),
    "clip_attributes": lambda: (node_model("Clip", [("x", [4, 5])], opset=6, min=-0.5, max=0.25), {"x": rand(4, 5)}),
    "average_pool": lambda: (node_model("AveragePool", [("x", X4)], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
                             {"x": rand(*X4)}),
    "maxpool_ceil": lambda: (node_model("MaxPool", [("x", [1, 2, 7, 7])], kernel_shape=[2, 2], strides=[2, 2],
                                        ceil_mode=1), {"x": rand(1, 2, 7, 7)}),
    "maxpool_dilations": lambda: (node_model("MaxPool", [("x", X4)], kernel_shape=[2, 2], dilations=[2, 2]),
                                  {"x": rand(*X4)}),
    "lrn": lambda: (node_model("LRN", [("x", X4)], size=3), {"x": rand(*X4)}),
    "reduce_mean": lambda: (node_model("ReduceMean", [("x", X4)], axes=[2, 3], opset=13), {"x": rand(*X4)}),
}

# The one op without a float16 kernel: Cast (it keeps its declared target type), so it runs fp32
# in an fp16 model, between conversions.
FALLBACK_CASES = {
    "cast_to_int": lambda: (make_model([helper.make_node("Cast", ["x"], ["y"], name="cast", to=TensorProto.INT32)],
                                       [("x", [4, 5])], [("y", None, TensorProto.INT32)]), {"x": 4 * rand(4, 5)}),
    "cast_to_float": lambda: (node_model("Cast", [("x", [4, 5])], to=TensorProto.FLOAT), {"x": rand(4, 5)}),
}



def layer(plan, op):
    # a window op runs channels-last in fp16 (Note [channels last]): "<op>@NHWC" between Transposes
    rows = [r for r in plan if r["op"] in (op, op + "@NHWC")]
    assert rows, f"no {op} layer in {[r['op'] for r in plan]}"
    return rows[0]


@pytest.mark.parametrize("case", list(CASES))
def test_op_in_fp16(case):
    model, feeds = CASES[case]()
    gpu = check_fp16(model, feeds)
    op = model.graph.node[0].op_type
    plan = gpu.plan()
    if op in ("Reshape", "Flatten"):
        assert layer(plan, op)["algorithm"] == "view (no copy)"
        return
    row = layer(plan, op)
    assert "fp16" in row["math"], row
    assert not row["math"].startswith("fp32"), row
    if op == "Conv":
        assert row["math"] in (HALF_CONV, HALF_CONV_FMA), row
        assert "direct" not in row["algorithm"], row  # the direct kernel is float32 only
    if op in ("Gemm", "MatMul"):
        assert row["math"] == HALF_BLAS, row
    # Float32 graph inputs are converted at entry, outputs back at exit.
    assert plan[0]["op"] == "Cast" and plan[0]["math"] == TO_HALF, plan[0]
    assert plan[-1]["op"] == "Cast" and plan[-1]["math"] == TO_FLOAT, plan[-1]


@pytest.mark.parametrize("case", list(FALLBACK_CASES))
def test_op_without_a_half_kernel_runs_fp32_visibly(case):
    model, feeds = FALLBACK_CASES[case]()
    gpu = check_fp16(model, feeds)
    op = model.graph.node[0].op_type
    row = layer(gpu.plan(), op)
    assert row["math"].startswith("fp32") and "no fp16 kernel" in row["math"], row


def test_fallback_between_half_layers_is_bracketed_by_conversions():
    """Conv (half) -> Cast to INT32 -> Cast to FLOAT (both fp32: Cast has no half kernel) -> Relu
    (half). The conv output is scaled to about +-1000 so that the half rounding (a spacing of 0.5
    there) and the truncation move a value by about 1 at most: a relative 1e-3."""
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Cast", ["c"], ["i"], name="to_int", to=TensorProto.INT32),
             helper.make_node("Cast", ["i"], ["f"], name="to_float", to=TensorProto.FLOAT),
             helper.make_node("Relu", ["f"], ["y"], name="relu")]
    model = make_model(nodes, [("x", [2, 4, 6, 6])], [("y", None)], {"w": 1000 * weights(4, 4, 3, 3)})
    gpu = check_fp16(model, {"x": rand(2, 4, 6, 6)}, MODEL_RTOL, MODEL_ATOL, MODEL_L2,
                     passes={"channels_last": False})  # no Transposes around the conv: the conversions alone
    plan = gpu.plan()
    assert [r["op"] for r in plan] == ["Cast", "Conv", "Cast", "Cast", "Cast", "Cast", "Relu", "Cast"], plan
    by_name = {r["name"]: r for r in plan}
    for name in ("to_int", "to_float"):
        assert by_name[name]["math"].startswith("fp32 (no fp16 kernel"), by_name[name]
    converts = [r["math"] for r in plan if r["op"] == "Cast" and r["name"] not in ("to_int", "to_float")]
    assert converts == [TO_HALF, TO_FLOAT, TO_HALF, TO_FLOAT], plan
    assert "fp16" in by_name["conv"]["math"] and "fp16" in by_name["relu"]["math"]


@pytest.mark.parametrize("search", ["heuristic", "exhaustive"])
def test_lenet_in_fp16(search):
    model = build("lenet")
    x = rand(64, 1, 28, 28)
    gpu = dnnx.load(model, device="cuda", precision="fp16", measure_precision=False,
                    algo_search=search, batch_size=64, plan_cache=False)
    plan = gpu.plan()
    assert plan[0]["op"] == "Cast" and plan[0]["math"] == TO_HALF
    assert plan[-1]["op"] == "Cast" and plan[-1]["math"] == TO_FLOAT
    for row in plan:
        if row["op"].startswith("Conv"):
            assert row["math"] in (HALF_CONV, HALF_CONV_FMA), row
        if row["op"].startswith("Gemm") or row["op"] == "MatMul":
            assert row["math"] == HALF_BLAS, row
    want = dnnx.load(model, batch_size=64).run(x)
    assert_fp16_close(gpu.run(x), want, f"lenet fp16 ({search}) vs cpu", MODEL_RTOL, MODEL_ATOL, MODEL_L2)


def test_fp16_is_visibly_less_precise_than_fp32():
    model = node_model("Conv", [("x", [8, 64, 16, 16])], inits={"w": weights(64, 64, 3, 3)}, pads=[1, 1, 1, 1])
    x = rand(8, 64, 16, 16)
    want = dnnx.load(model).run(x)
    half = dnnx.load(model, device="cuda", precision="fp16", measure_precision=False).run(x)
    assert_fp16_close(half, want, "conv fp16 vs cpu")
    # Inputs and weights rounded to 11 bits leave an error far above fp32's: half storage ran.
    assert relative_l2(half, want) > FP32_L2, relative_l2(half, want)


def test_lstm_example_in_fp16():
    model = build("lstm")
    x = rand(16, 4, 8)
    gpu = dnnx.load(model, device="cuda", precision="fp16", measure_precision=False)
    plan = gpu.plan()
    assert layer(plan, "LSTM")["math"] == HALF_CONV, plan  # cuDNN RNN: the same math words as a conv
    assert not [r for r in plan if r["math"].startswith("fp32")], plan
    assert_fp16_close(gpu.run(x), dnnx.load(model).run(x), "lstm fp16 vs cpu", MODEL_RTOL, MODEL_ATOL, MODEL_L2)


def check_lstm_fp16(model, feeds):
    """LSTM in fp16 against the CPU backend (onnxruntime has no layout-1 LSTM; the CPU backend is
    checked against it in tests/test_lstm.py). A recurrence compounds the rounding step by step:
    the model tolerances."""
    gpu = dnnx.load(model, device="cuda", precision="fp16", measure_precision=False)
    got, want = gpu.run_dict(feeds), dnnx.load(model).run_dict(feeds)
    assert set(got) == set(want)
    for name, w in want.items():
        assert_fp16_close(got[name], w, f"{name} fp16 vs cpu", MODEL_RTOL, MODEL_ATOL, MODEL_L2)
    assert layer(gpu.plan(), "LSTM")["math"] == HALF_CONV
    return got


@pytest.mark.parametrize("layout", [0, 1])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_lstm_in_fp16(layout, direction):
    model, feeds = lstm_case(6, 4, 8, 16, direction=direction, layout=layout, lens=[6, 1, 4, 0], initial_h=True,
                             initial_c=True)
    got = check_lstm_fp16(model, feeds)
    y = got["Y"] if layout == 0 else got["Y"].transpose(1, 2, 0, 3)  # [seq, D, batch, H]
    assert np.all(y[1:, :, 1] == 0.0) and np.all(y[:, :, 3] == 0.0)  # past each length: zeros


def test_lstm_weights_as_graph_inputs_in_fp16():
    model, feeds = lstm_case(5, 3, 8, 8, direction="bidirectional")
    for name in ("W", "R", "B"):
        model, feeds = to_graph_input(model, feeds, name)
    check_lstm_fp16(model, feeds)


@pytest.mark.parametrize("batch", [1, 8])
@pytest.mark.parametrize("family", list(FAMILIES))
def test_family_in_fp16(family, batch):
    make, x_shape = FAMILIES[family]
    feeds = {"x": rand(batch, *x_shape, seed=batch)}
    gpu = dnnx.load(make(), device="cuda", precision="fp16", measure_precision=False, batch_size=batch).run_dict(feeds)
    for name, want in run_ort(make(), feeds).items():
        assert_fp16_close(gpu[name], want, f"{family} {name} fp16", MODEL_RTOL, MODEL_ATOL, MODEL_L2)


def test_outputs_on_the_device_are_float32():
    model = build("lenet")
    x = rand(4, 1, 28, 28)
    gpu = dnnx.load(model, device="cuda", precision="fp16", measure_precision=False, batch_size=4)
    host = gpu.run(x)
    device = gpu.run(x, output="device")
    assert device.dtype == np.float32 and device.__cuda_array_interface__["typestr"] == "<f4"
    np.testing.assert_array_equal(device.numpy(), host)


def test_finetune_is_refused_in_fp16():
    gpu = dnnx.load(build("lenet"), device="cuda", precision="fp16", measure_precision=False)
    with pytest.raises(ValueError, match="fp16"):
        gpu.finetune()


def _resnet50_builder():
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "bench",
                        "resnet50.py")
    spec = importlib.util.spec_from_file_location("bench_resnet50", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.build_resnet50


def test_resnet50_in_fp16():
    model = _resnet50_builder()(seed=0)
    x = rand(2, 3, 224, 224)
    gpu = dnnx.load(model, device="cuda", precision="fp16", measure_precision=False, batch_size=2)
    plan = gpu.plan()
    fp32_layers = [r for r in plan if r["math"].startswith("fp32")]
    assert not fp32_layers, fp32_layers  # every ResNet-50 layer has a half kernel
    assert sum(r["op"].startswith("Conv") for r in plan) == 53
    want = dnnx.load(model, batch_size=2).run(x)
    # 53 layers compound the per-layer rounding (module docstring): a looser L2 bound.
    assert_fp16_close(gpu.run(x), want, "resnet50 fp16 vs cpu", 0.1, 6e-2, 6e-2)
