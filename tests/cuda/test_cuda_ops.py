"""Every op the CUDA backend runs, fp32, against the CPU backend and onnxruntime (tolerances in
cuda_check.py): activations, broadcast arithmetic, Gemm, MatMul, Softmax, Transpose, Concat,
views, Conv (cuDNN, with the pad kernel for asymmetric pads) and MaxPool (cuDNN or the direct
kernel)."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import dnnx
from cuda_check import check_cuda
from ort_check import make_model, rand


def unary(op, shape, **attrs):
    node = helper.make_node(op, ["x"], ["y"], name=op.lower(), **attrs)
    return make_model([node], [("x", list(shape))], [("y", None)])


@pytest.mark.parametrize("op", ["Relu", "Sigmoid", "Tanh"])
@pytest.mark.parametrize("shape", [[7], [2, 3, 5, 4], [64, 500]])
def test_activation(op, shape):
    check_cuda(unary(op, shape), {"x": 3 * rand(*shape)})


BINARY_SHAPES = {
    "elementwise": ([2, 3, 4], [2, 3, 4]),
    "bias_per_channel": ([2, 5, 3, 4], [5, 1, 1]),
    "scalar_b": ([3, 4], []),
    "scalar_a": ([], [6]),
    "row": ([8, 10], [10]),
    "column": ([8, 10], [8, 1]),
    "both_broadcast": ([4, 1, 3], [1, 5, 1]),
    "strided_mix": ([2, 1, 4, 5], [3, 1, 5]),
    "ones_everywhere": ([1, 1], [1, 1]),
    # Note [binary by vectors] (binary_kernels.cu): 4 outputs a thread where the innermost merged
    # dim is a multiple of 4 (the cases above: "elementwise", "bias_per_channel"), else 1
    "odd_elementwise": ([3, 5], [3, 5]),
    "se_gate": ([2, 6, 4, 4], [2, 6, 1, 1]),
    "se_gate_first": ([2, 6, 1, 1], [2, 6, 4, 4]),
    "row_of_8": ([3, 8], [8]),
    "both_contiguous_inner": ([2, 1, 8], [1, 3, 8]),
}


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div"])
@pytest.mark.parametrize("case", list(BINARY_SHAPES))
def test_binary(op, case):
    a_shape, b_shape = BINARY_SHAPES[case]
    node = helper.make_node(op, ["a", "b"], ["y"], name=op.lower())
    model = make_model([node], [("a", a_shape), ("b", b_shape)], [("y", None)])
    b = rand(*b_shape, seed=2)
    if op == "Div":
        b = np.where(np.abs(b) < 0.5, 0.5, b).astype(np.float32)  # no division by near-zero
    check_cuda(model, {"a": rand(*a_shape, seed=1), "b": b})


GEMM_CASES = {
    "plain": ([4, 6], [6, 5], None, {}),
    "bias_row": ([4, 6], [6, 5], [5], {}),
    "bias_full": ([4, 6], [6, 5], [4, 5], {}),
    "bias_column": ([4, 6], [6, 5], [4, 1], {}),
    "bias_scalar": ([4, 6], [6, 5], [], {}),
    "trans_a": ([6, 4], [6, 5], [5], {"transA": 1}),
    "trans_b": ([4, 6], [5, 6], [5], {"transB": 1}),
    "trans_both_alpha_beta": ([6, 4], [5, 6], [1, 5], {"transA": 1, "transB": 1, "alpha": 0.5, "beta": 2.0}),
    "beta_zero": ([4, 6], [6, 5], [5], {"beta": 0.0}),
    "lenet_fc1": ([64, 800], [500, 800], [500], {"transB": 1}),
}


@pytest.mark.parametrize("case", list(GEMM_CASES))
def test_gemm(case):
    a_shape, b_shape, c_shape, attrs = GEMM_CASES[case]
    inits = {"b": rand(*b_shape, seed=2)}
    inputs = ["a", "b"]
    if c_shape is not None:
        inits["c"] = rand(*c_shape, seed=3)
        inputs.append("c")
    node = helper.make_node("Gemm", inputs, ["y"], name="gemm", **attrs)
    model = make_model([node], [("a", a_shape)], [("y", None)], inits)
    check_cuda(model, {"a": rand(*a_shape, seed=1)})


MATMUL_CASES = {
    "2d": ([5, 7], [7, 3]),
    "batched_a_only": ([2, 4, 5, 7], [7, 3]),
    "batched_same": ([3, 5, 7], [3, 7, 4]),
    "batched_b_only": ([5, 7], [2, 7, 4]),
    "broadcast_uneven": ([2, 1, 5, 7], [1, 3, 7, 4]),
    "vector_a": ([7], [2, 7, 3]),
    "vector_b": ([2, 5, 7], [7]),
    "empty_k": ([3, 0], [0, 4]),
}


@pytest.mark.parametrize("case", list(MATMUL_CASES))
def test_matmul(case):
    a_shape, b_shape = MATMUL_CASES[case]
    node = helper.make_node("MatMul", ["a", "b"], ["y"], name="matmul")
    model = make_model([node], [("a", a_shape), ("b", b_shape)], [("y", None)])
    check_cuda(model, {"a": rand(*a_shape, seed=1), "b": rand(*b_shape, seed=2)})


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
@pytest.mark.parametrize("shape,axis,opset", [([64, 10], -1, 13), ([2, 3, 4, 5], 1, 13), ([2, 3, 4], 1, 11),
                                              ([3, 1000], 1, 13)])
def test_softmax(op, shape, axis, opset):
    node = helper.make_node(op, ["x"], ["y"], name=op.lower(), axis=axis)
    model = make_model([node], [("x", shape)], [("y", None)], opset=opset)
    check_cuda(model, {"x": 4 * rand(*shape)})


@pytest.mark.parametrize("shape,perm", [([2, 3, 4, 5], [0, 2, 3, 1]), ([2, 3, 4, 5], [3, 2, 1, 0]),
                                        ([6, 7], [1, 0]), ([1, 3, 1, 4], [2, 0, 3, 1]), ([2, 3, 4], [0, 1, 2])])
def test_transpose(shape, perm):
    node = helper.make_node("Transpose", ["x"], ["y"], name="transpose", perm=perm)
    model = make_model([node], [("x", shape)], [("y", None)])
    check_cuda(model, {"x": rand(*shape)})


def test_transpose_int64():
    node = helper.make_node("Transpose", ["x"], ["y"], name="transpose", perm=[1, 0, 2])
    model = make_model([node], [("x", [3, 4, 2], TensorProto.INT64)], [("y", None, TensorProto.INT64)])
    check_cuda(model, {"x": np.arange(24, dtype=np.int64).reshape(3, 4, 2) * (1 << 40)})


# Note [transposed by tiles] (gather_kernels.cu): a batch of 2-D transposes, both sides 16 or more,
# moves by 32x32 tiles: NCHW -> NHWC and back with partial tiles at both edges, one matrix (rank 2),
# a batch of 70, the half type's 2-byte elements as well as float32's 4
@pytest.mark.parametrize("shape,perm", [([2, 40, 7, 9], [0, 2, 3, 1]), ([3, 5, 6, 50], [0, 3, 1, 2]),
                                        ([33, 70], [1, 0]), ([70, 16, 17], [0, 2, 1]), ([2, 15, 40, 3], [0, 2, 3, 1])])
@pytest.mark.parametrize("elem", [TensorProto.FLOAT, TensorProto.FLOAT16])
def test_transpose_by_tiles(shape, perm, elem):
    node = helper.make_node("Transpose", ["x"], ["y"], name="transpose", perm=perm)
    model = make_model([node], [("x", shape, elem)], [("y", None, elem)])
    dtype = np.float32 if elem == TensorProto.FLOAT else np.float16
    x = (np.arange(np.prod(shape)).reshape(shape) % 1000).astype(dtype)  # exact in both types
    m = dnnx.load(model, device="cuda")
    assert [r["algorithm"] for r in m.plan()] == ["gather kernel"], m.plan()
    np.testing.assert_array_equal(m.run(x), np.transpose(x, perm))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concat(axis):
    shapes = {0: ([2, 3, 4], [5, 3, 4]), 1: ([2, 3, 4], [2, 1, 4]), -1: ([2, 3, 4], [2, 3, 7])}[axis]
    node = helper.make_node("Concat", ["a", "b", "c"], ["y"], name="concat", axis=axis)
    model = make_model([node], [("a", shapes[0]), ("b", shapes[1]), ("c", shapes[0])], [("y", None)])
    check_cuda(model, {"a": rand(*shapes[0], seed=1), "b": rand(*shapes[1], seed=2), "c": rand(*shapes[0], seed=3)})


# Note [concat in one launch] (concat_cuda.cc): one kernel for up to 64 inputs, in 16-, 4- or 2-byte
# units (rows of 16 float32 / 8 float16 multiples, of odd float32 counts, of odd float16 counts), a
# batch-1 row longer than one block's segment, and 70 inputs (the copies). (An empty input runs on
# the host: Note [empty tensors].)
@pytest.mark.parametrize("widths,rows,elem", [([16, 32, 48], 3, TensorProto.FLOAT), ([3, 5, 1], 4, TensorProto.FLOAT),
                                               ([8, 24], 2, TensorProto.FLOAT16), ([3, 5], 3, TensorProto.FLOAT16),
                                               ([2000, 1500], 1, TensorProto.FLOAT), ([4] * 70, 2, TensorProto.FLOAT)])
def test_concat_kernel(widths, rows, elem):
    names = [f"x{i}" for i in range(len(widths))]
    node = helper.make_node("Concat", names, ["y"], name="concat", axis=1)
    model = make_model([node], [(n, [rows, w], elem) for n, w in zip(names, widths)], [("y", None, elem)])
    dtype = np.float32 if elem == TensorProto.FLOAT else np.float16
    feeds = {n: (np.arange(rows * w).reshape(rows, w) % 1000 + 1000 * i).astype(dtype)
             for i, (n, w) in enumerate(zip(names, widths))}
    m = dnnx.load(model, device="cuda")
    assert [r["algorithm"] for r in m.plan()] == ["one kernel" if len(widths) <= 64 else "cudaMemcpy2DAsync per input"]
    np.testing.assert_array_equal(m.run_dict(feeds)["y"], np.concatenate(list(feeds.values()), axis=1))


def test_views_between_kernels():
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Flatten", ["r"], ["f"], name="flatten", axis=1),
             helper.make_node("Reshape", ["f", "shape"], ["s"], name="reshape"),
             helper.make_node("Sigmoid", ["s"], ["y"], name="sigmoid")]
    model = make_model(nodes, [("x", [2, 3, 4, 5])], [("y", None)], {"shape": np.array([6, 20], dtype=np.int64)})
    check_cuda(model, {"x": rand(2, 3, 4, 5)})


CONV_CASES = {
    "lenet_conv1_batch1": ([1, 1, 28, 28], [20, 1, 5, 5], {}),
    "lenet_conv2": ([3, 20, 12, 12], [50, 20, 5, 5], {}),
    "symmetric_pads": ([2, 3, 9, 7], [4, 3, 3, 3], {"pads": [1, 1, 1, 1]}),
    "asymmetric_pads": ([2, 3, 9, 7], [4, 3, 3, 2], {"pads": [1, 0, 2, 1]}),
    "same_upper_stride": ([1, 3, 10, 10], [4, 3, 3, 3], {"auto_pad": "SAME_UPPER", "strides": [2, 2]}),
    "same_lower": ([1, 3, 8, 8], [4, 3, 2, 2], {"auto_pad": "SAME_LOWER"}),
    "strides_and_pads": ([2, 4, 10, 9], [6, 4, 4, 3], {"strides": [3, 2], "pads": [2, 1, 0, 2]}),
    "dilations": ([1, 2, 10, 9], [3, 2, 3, 3], {"dilations": [2, 3], "pads": [2, 1, 1, 3]}),
    "groups": ([2, 8, 7, 7], [6, 4, 3, 3], {"group": 2, "pads": [1, 1, 1, 1]}),
    "depthwise": ([1, 16, 9, 9], [16, 1, 3, 3], {"group": 16, "pads": [1, 1, 1, 1]}),
    "large_channels": ([1, 256, 6, 6], [128, 256, 3, 3], {"pads": [1, 1, 1, 1]}),
    "pointwise": ([2, 32, 5, 7], [16, 32, 1, 1], {}),
    "no_bias": ([2, 3, 8, 8], [4, 3, 3, 3], {"bias": False}),
    "conv1d": ([2, 3, 17], [4, 3, 5], {"strides": [2], "pads": [2, 1], "dilations": [2]}),
    "conv3d": ([1, 2, 5, 6, 7], [3, 2, 3, 2, 3], {"pads": [1, 0, 1, 0, 1, 1], "strides": [1, 2, 1]}),
}


def conv_model(x_shape, w_shape, bias=True, **attrs):
    fan_in = int(np.prod(w_shape[1:]))
    inits = {"w": (rand(*w_shape, seed=1) / np.sqrt(fan_in)).astype(np.float32)}
    inputs = ["x", "w"]
    if bias:
        inits["b"] = rand(w_shape[0], seed=2)
        inputs.append("b")
    node = helper.make_node("Conv", inputs, ["y"], name="conv", **attrs)
    return make_model([node], [("x", list(x_shape))], [("y", None)], inits)


@pytest.mark.parametrize("case", list(CONV_CASES))
def test_conv(case):
    x_shape, w_shape, attrs = CONV_CASES[case]
    check_cuda(conv_model(x_shape, w_shape, **attrs), {"x": rand(*x_shape)})


POOL_CASES = {
    "lenet_pool": ([2, 20, 24, 24], {"kernel_shape": [2, 2], "strides": [2, 2]}),
    "overlapping": ([1, 3, 9, 9], {"kernel_shape": [3, 3], "strides": [2, 2]}),
    "symmetric_pads": ([1, 3, 8, 8], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}),
    "asymmetric_pads": ([1, 3, 8, 7], {"kernel_shape": [3, 2], "pads": [1, 0, 0, 1]}),
    "dilations": ([1, 2, 10, 10], {"kernel_shape": [2, 2], "dilations": [2, 2]}),
    "ceil_mode": ([1, 2, 7, 7], {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1}),
    "same_upper": ([1, 2, 7, 6], {"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "SAME_UPPER"}),
    "pool1d": ([2, 3, 11], {"kernel_shape": [3], "strides": [2]}),
    "pool3d": ([1, 2, 4, 6, 5], {"kernel_shape": [2, 3, 2], "strides": [2, 2, 1]}),
}


@pytest.mark.parametrize("case", list(POOL_CASES))
def test_max_pool(case):
    x_shape, attrs = POOL_CASES[case]
    node = helper.make_node("MaxPool", ["x"], ["y"], name="pool", **attrs)
    model = make_model([node], [("x", x_shape)], [("y", None)])
    check_cuda(model, {"x": rand(*x_shape)})
