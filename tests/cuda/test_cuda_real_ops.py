"""The real-world ops of issue #5 on CUDA (the per-family files in elementwise/, pool/ and layout/, Sum/Max/Min in binary_cuda.cc), fp32,
each against the CPU backend and onnxruntime on seeded random inputs (tolerances in
cuda_check.py): BatchNormalization, LeakyRelu/Elu/Clip, AveragePool, GlobalAverage/MaxPool, LRN,
Sum/Max/Min, ReduceMean, Pad, Slice, Split, Expand, Gather, Cast; then the CNN building blocks of
tests/test_model_families.py at batch 1 and 8, passes on and off."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import dnnx
from cuda_check import assert_close, check_cuda
from ort_check import make_model, rand, run_ort
from test_model_families import FAMILIES


def unary(op, shape, opset=17, **attrs):
    node = helper.make_node(op, ["x"], ["y"], name=op.lower(), **attrs)
    return make_model([node], [("x", list(shape))], [("y", None)], opset=opset)


# --- BatchNormalization ---
@pytest.mark.parametrize("shape", [[2, 3, 4, 5], [1, 8, 7], [4, 6], [2, 3, 2, 3, 4]])
@pytest.mark.parametrize("optimize", [True, False])
def test_batchnorm(shape, optimize):
    c = shape[1]
    params = {"scale": rand(c, seed=3), "bias": rand(c, seed=4), "mean": rand(c, seed=5),
              "var": np.abs(rand(c, seed=6)) + 0.5}
    node = helper.make_node("BatchNormalization", ["x", "scale", "bias", "mean", "var"], ["y"], name="bn",
                            epsilon=1e-3)
    model = make_model([node], [("x", shape)], [("y", None)], initializers=params)
    check_cuda(model, {"x": rand(*shape)}, optimize=optimize)


def test_batchnorm_statistics_as_inputs():
    c = 4
    node = helper.make_node("BatchNormalization", ["x", "scale", "bias", "mean", "var"], ["y"], name="bn")
    model = make_model([node], [("x", [2, c, 3, 3]), ("scale", [c]), ("bias", [c]), ("mean", [c]), ("var", [c])],
                       [("y", None)])
    feeds = {"x": rand(2, c, 3, 3), "scale": rand(c, seed=1), "bias": rand(c, seed=2), "mean": rand(c, seed=3),
             "var": np.abs(rand(c, seed=4)) + 0.1}
    check_cuda(model, feeds)


# --- LeakyRelu, Elu, Clip ---
@pytest.mark.parametrize("op,attrs", [("LeakyRelu", {}), ("LeakyRelu", {"alpha": 0.2}), ("Elu", {}),
                                      ("Elu", {"alpha": 0.5})])
@pytest.mark.parametrize("shape", [[7], [2, 3, 5, 4], [64, 500]])
def test_alpha_activation(op, attrs, shape):
    check_cuda(unary(op, shape, **attrs), {"x": 3 * rand(*shape)})


@pytest.mark.parametrize("attrs", [{"min": -0.5, "max": 0.5}, {"min": 0.0}, {"max": 1.0}, {}])
def test_clip_attributes(attrs):
    check_cuda(unary("Clip", [3, 4, 5], opset=6, **attrs), {"x": 2 * rand(3, 4, 5)})


@pytest.mark.parametrize("bounds", [("lo", "hi"), ("lo", ""), ("", "hi"), ("hi", "lo")])
def test_clip_inputs(bounds):
    values = {"lo": np.array(-0.3, np.float32), "hi": np.array(0.8, np.float32)}
    node = helper.make_node("Clip", ["x", *bounds], ["y"], name="clip")
    inits = {k: v for k, v in values.items() if k in bounds}
    model = make_model([node], [("x", [4, 9])], [("y", None)], initializers=inits, opset=13)
    check_cuda(model, {"x": 2 * rand(4, 9)})


def test_clip_computed_bounds():
    node = helper.make_node("Clip", ["x", "lo", "hi"], ["y"], name="clip")
    model = make_model([node], [("x", [5, 6]), ("lo", []), ("hi", [])], [("y", None)], opset=13)
    check_cuda(model, {"x": rand(5, 6), "lo": np.array(-0.2, np.float32), "hi": np.array(0.4, np.float32)})


# --- AveragePool, GlobalAveragePool, GlobalMaxPool ---
AVG_POOL_CASES = {
    "2x2_s2": ([2, 3, 8, 8], {"kernel_shape": [2, 2], "strides": [2, 2]}),
    "3x3_pad_exclude": ([2, 3, 7, 7], {"kernel_shape": [3, 3], "strides": [1, 1], "pads": [1, 1, 1, 1]}),
    "3x3_pad_include": ([2, 3, 7, 7], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "count_include_pad": 1}),
    "asymmetric_pads": ([1, 2, 6, 5], {"kernel_shape": [3, 2], "pads": [0, 1, 2, 0], "strides": [2, 1]}),
    "ceil_mode": ([1, 4, 7, 7], {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}),
    "ceil_mode_include_pad": ([1, 4, 8, 8], {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1],
                                             "ceil_mode": 1, "count_include_pad": 1}),
    "same_upper": ([2, 2, 5, 5], {"kernel_shape": [2, 2], "auto_pad": "SAME_UPPER"}),
    "1d": ([2, 3, 10], {"kernel_shape": [3], "strides": [2], "pads": [1, 1]}),
    "3d": ([1, 2, 4, 5, 6], {"kernel_shape": [2, 3, 2], "pads": [0, 1, 1, 1, 1, 0]}),
}


@pytest.mark.parametrize("case", list(AVG_POOL_CASES))
def test_average_pool(case):
    shape, attrs = AVG_POOL_CASES[case]
    check_cuda(unary("AveragePool", shape, **attrs), {"x": rand(*shape)})


def test_average_pool_dilations():
    shape = [1, 2, 9, 9]
    model = unary("AveragePool", shape, opset=19, kernel_shape=[3, 3], dilations=[2, 2], pads=[1, 1, 1, 1])
    check_cuda(model, {"x": rand(*shape)}, ort=False)


@pytest.mark.parametrize("op", ["GlobalAveragePool", "GlobalMaxPool"])
@pytest.mark.parametrize("shape", [[2, 3, 5, 5], [1, 4, 7], [1, 2, 64, 64], [3, 5, 1, 1], [1, 2, 3, 4, 5],
                                   # Note [pooled by warps]: a warp a plane where the planes are many or
                                   # small, else a block a plane
                                   [64, 40, 7, 7], [2, 1100, 20, 20], [1, 3, 40, 40], [2, 3, 9, 9]])
def test_global_pool(op, shape):
    check_cuda(unary(op, shape), {"x": rand(*shape)})


# --- LRN ---
@pytest.mark.parametrize("size", [1, 3, 4, 5])
@pytest.mark.parametrize("shape", [[2, 8, 5, 5], [1, 3, 4]])
def test_lrn(size, shape):
    model = unary("LRN", shape, size=size, alpha=1e-2, beta=0.75, bias=2.0)
    # onnxruntime runs odd windows over 4-D inputs only; the rest is checked against the CPU.
    check_cuda(model, {"x": 3 * rand(*shape)}, ort=size % 2 == 1 and len(shape) == 4)


# --- Sum, Max, Min, Mean ---
VARIADIC_SHAPES = {
    "one": [[2, 3]],
    "two_same": [[2, 3, 4], [2, 3, 4]],
    "two_broadcast": [[2, 3, 4], [4]],
    "three_broadcast": [[2, 1, 4], [3, 1], [1, 3, 4]],
    "four": [[5], [5], [1], [2, 5]],
}


@pytest.mark.parametrize("op", ["Sum", "Max", "Min", "Mean"])
@pytest.mark.parametrize("case", list(VARIADIC_SHAPES))
def test_variadic(op, case):
    shapes = VARIADIC_SHAPES[case]
    names = [f"x{i}" for i in range(len(shapes))]
    node = helper.make_node(op, names, ["y"], name=op.lower())
    model = make_model([node], list(zip(names, shapes)), [("y", None)])
    check_cuda(model, {n: rand(*s, seed=i) for i, (n, s) in enumerate(zip(names, shapes))})


# --- ReduceMean ---
@pytest.mark.parametrize("axes,keepdims", [([1], 1), ([1], 0), ([0, 2], 1), ([-1], 0), (None, 1), (None, 0),
                                           ([1, 2, 3], 1)])
def test_reduce_mean(axes, keepdims):
    attrs = {"keepdims": keepdims}
    if axes is not None:
        attrs["axes"] = axes
    shape = [2, 3, 4, 5]
    check_cuda(unary("ReduceMean", shape, opset=13, **attrs), {"x": rand(*shape)})


def test_reduce_mean_axes_input():
    node = helper.make_node("ReduceMean", ["x", "axes"], ["y"], name="mean", keepdims=1)
    model = make_model([node], [("x", [2, 3, 6, 6])], [("y", None)],
                       initializers={"axes": np.array([2, 3], np.int64)}, opset=18)
    check_cuda(model, {"x": rand(2, 3, 6, 6)})


# --- Pad ---
# the last: the last axis at its end alone, the channels_last pass's pad (Note [padded rows])
@pytest.mark.parametrize("pads", [[0, 0, 1, 1, 0, 0, 1, 1], [0, 1, 2, 0, 1, 0, 0, 3], [0, 0, -1, 1, 0, 0, 1, -2],
                                  [0, 0, 0, 0, 0, 0, 0, 3]])
@pytest.mark.parametrize("value", [None, 1.5])
def test_pad_constant(pads, value):
    inputs = ["x", "pads"] + (["value"] if value is not None else [])
    inits = {"pads": np.array(pads, np.int64)}
    if value is not None:
        inits["value"] = np.array(value, np.float32)
    node = helper.make_node("Pad", inputs, ["y"], name="pad", mode="constant")
    model = make_model([node], [("x", [2, 3, 4, 5])], [("y", None)], initializers=inits, opset=13)
    check_cuda(model, {"x": rand(2, 3, 4, 5)})


def test_pad_attributes_before_opset_11():
    model = unary("Pad", [3, 4], opset=10, pads=[1, 0, 0, 2], value=-1.0)
    check_cuda(model, {"x": rand(3, 4)})


# --- Slice, Split, Expand ---
SLICE_CASES = {
    "middle": ([1, 1], [3, 4], [1, 2], None),
    "negative_ends": ([0], [-1], [3], None),
    "step": ([0, 1], [100, 5], [2, 3], [2, 2]),
    "reverse": ([-1], [-100], [1], [-1]),
    "reverse_step": ([4, 5], [0, 0], [2, 3], [-2, -3]),
    "all_axes": ([0, 0, 0, 1], [2, 3, 5, 6], [0, 1, 2, 3], None),
    "single_element": ([1, 2, 3, 4], [2, 3, 4, 5], [0, 1, 2, 3], None),
}


@pytest.mark.parametrize("case", list(SLICE_CASES))
def test_slice(case):
    starts, ends, axes, steps = SLICE_CASES[case]
    inits = {"starts": np.array(starts, np.int64), "ends": np.array(ends, np.int64), "axes": np.array(axes, np.int64)}
    names = ["x", "starts", "ends", "axes"]
    if steps is not None:
        inits["steps"] = np.array(steps, np.int64)
        names.append("steps")
    node = helper.make_node("Slice", names, ["y"], name="slice")
    model = make_model([node], [("x", [2, 3, 5, 7])], [("y", None)], initializers=inits, opset=13)
    check_cuda(model, {"x": rand(2, 3, 5, 7)})


@pytest.mark.parametrize("axis,split", [(1, None), (0, [1, 3]), (2, [2, 1, 3]), (-1, None)])
def test_split(axis, split):
    shape = [4, 6, 6, 4]
    parts = 2 if split is None else len(split)
    outs = [f"y{i}" for i in range(parts)]
    inputs = ["x"] + (["split"] if split is not None else [])
    inits = {"split": np.array(split, np.int64)} if split is not None else {}
    node = helper.make_node("Split", inputs, outs, name="split", axis=axis)
    model = make_model([node], [("x", shape)], [(o, None) for o in outs], initializers=inits, opset=13)
    check_cuda(model, {"x": rand(*shape)})


@pytest.mark.parametrize("x_shape,target", [([3, 1], [2, 3, 4]), ([1], [5, 2]), ([2, 1, 3], [2, 4, 3]),
                                            ([4], [1, 4]), ([2, 3], [2, 3])])
def test_expand(x_shape, target):
    node = helper.make_node("Expand", ["x", "shape"], ["y"], name="expand")
    model = make_model([node], [("x", x_shape)], [("y", None)],
                       initializers={"shape": np.array(target, np.int64)}, opset=13)
    check_cuda(model, {"x": rand(*x_shape)})


# --- Gather, Cast ---
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("idx_type", [np.int64, np.int32])
def test_gather(axis, idx_type):
    shape = [4, 5, 6]
    indices = np.array([[0, -1], [2, 1]], idx_type)
    node = helper.make_node("Gather", ["x", "i"], ["y"], name="gather", axis=axis)
    model = make_model([node], [("x", shape)], [("y", None)], initializers={"i": indices}, opset=13)
    check_cuda(model, {"x": rand(*shape)})


def test_gather_computed_indices():
    elem = TensorProto.INT64
    node = helper.make_node("Gather", ["x", "i"], ["y"], name="gather", axis=1)
    model = make_model([node], [("x", [3, 7]), ("i", [4], elem)], [("y", None)], opset=13)
    check_cuda(model, {"x": rand(3, 7), "i": np.array([6, 0, -2, 3], np.int64)})


CAST_TYPES = {"float": (TensorProto.FLOAT, np.float32), "int32": (TensorProto.INT32, np.int32),
              "int64": (TensorProto.INT64, np.int64)}


@pytest.mark.parametrize("src", list(CAST_TYPES))
@pytest.mark.parametrize("dst", list(CAST_TYPES))
def test_cast(src, dst):
    src_proto, src_np = CAST_TYPES[src]
    node = helper.make_node("Cast", ["x"], ["y"], name="cast", to=CAST_TYPES[dst][0])
    model = make_model([node], [("x", [3, 8], src_proto)], [("y", None, CAST_TYPES[dst][0])], opset=13)
    x = (10 * rand(3, 8)).astype(src_np)
    check_cuda(model, {"x": x})


# --- the model families ---
@pytest.mark.parametrize("optimize", [True, False])
@pytest.mark.parametrize("batch", [1, 8])
@pytest.mark.parametrize("family", list(FAMILIES))
def test_family_on_cuda(family, batch, optimize):
    build, x_shape = FAMILIES[family]
    feeds = {"x": rand(batch, *x_shape, seed=batch)}
    # Both backends load with the batch (the PyTorch export's flatten folds only then).
    gpu = dnnx.load(build(), device="cuda", batch_size=batch, optimize=optimize).run_dict(feeds)
    cpu = dnnx.load(build(), batch_size=batch, optimize=optimize).run_dict(feeds)
    assert set(gpu) == set(cpu)
    for name in cpu:
        assert_close(gpu[name], cpu[name], f"{family} {name} (cuda vs cpu)")
    for name, want in run_ort(build(), feeds).items():
        assert_close(gpu[name], want, f"{family} {name} (cuda vs onnxruntime)")


# --- what the CUDA kernels do not take runs on the host (Note [host fallback]), naming the node ---
def test_int_clip_runs_on_the_host_naming_the_node():
    node = helper.make_node("Clip", ["x"], ["y"], name="int_clip")
    model = make_model([node], [("x", [2, 3], TensorProto.INT32)], [("y", None, TensorProto.INT32)], opset=13)
    with pytest.warns(dnnx.HostFallbackWarning, match="int_clip"):
        gpu = dnnx.load(model, device="cuda")
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    np.testing.assert_array_equal(gpu.run_dict({"x": x})["y"], dnnx.load(model).run_dict({"x": x})["y"])
