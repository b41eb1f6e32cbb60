"""MaxPool against onnxruntime: 1-D, 2-D and 3-D; strides, asymmetric pads (padding is -inf),
dilations, ceil_mode and every auto_pad mode; the Indices output; load-time errors."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import dnnx
from ort_check import assert_matches_ort, make_model, rand


def pool_model(x_shape, name="pool", outputs=(("y", None),), **attrs):
    """outputs: (name, shape[, elem_type]) specs; shape None lets the importer infer it."""
    node = helper.make_node("MaxPool", ["x"], [o[0] for o in outputs], name=name, **attrs)
    return make_model([node], [("x", list(x_shape))], list(outputs))


def check_pool(x_shape, **attrs):
    x = rand(*x_shape)
    return assert_matches_ort(pool_model(x_shape, **attrs), {"x": x})


CASES = {
    "lenet_pool1_batch1": ([1, 20, 24, 24], {"kernel_shape": [2, 2], "strides": [2, 2]}),
    "lenet_pool2": ([4, 50, 8, 8], {"kernel_shape": [2, 2], "strides": [2, 2]}),
    "overlapping": ([2, 3, 9, 7], {"kernel_shape": [3, 3], "strides": [2, 2]}),
    "stride_1": ([1, 2, 6, 5], {"kernel_shape": [2, 3]}),
    "asymmetric_pads": ([2, 3, 9, 7], {"kernel_shape": [3, 2], "pads": [1, 0, 2, 1]}),
    "pads_strides": ([1, 4, 10, 11], {"kernel_shape": [3, 3], "strides": [2, 3], "pads": [1, 2, 0, 1]}),
    "dilations": ([1, 2, 11, 10], {"kernel_shape": [3, 2], "dilations": [2, 3], "pads": [1, 1, 2, 0]}),
    "dilation_stride": ([2, 3, 13, 12], {"kernel_shape": [2, 2], "dilations": [3, 2], "strides": [2, 3]}),
    "ceil_mode": ([1, 3, 7, 8], {"kernel_shape": [2, 3], "strides": [2, 2], "ceil_mode": 1}),
    "ceil_mode_pads": ([2, 2, 9, 6], {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 0, 1, 2],
                                      "ceil_mode": 1}),
    # The last window would start inside the end padding: ceil_mode drops it.
    "ceil_mode_drops_window": ([1, 1, 6, 6], {"kernel_shape": [3, 3], "strides": [3, 3],
                                              "pads": [0, 0, 1, 1], "ceil_mode": 1}),
    "ceil_mode_dilated": ([1, 2, 10, 9], {"kernel_shape": [2, 2], "strides": [3, 2], "dilations": [2, 2],
                                          "ceil_mode": 1}),
    "large_channels": ([1, 512, 5, 5], {"kernel_shape": [2, 2], "strides": [1, 1]}),
    "window_covers_input": ([2, 3, 4, 5], {"kernel_shape": [4, 5]}),
    "pool1d": ([2, 3, 17], {"kernel_shape": [3], "strides": [2], "pads": [1, 2], "dilations": [2]}),
    "pool1d_ceil": ([1, 4, 10], {"kernel_shape": [3], "strides": [4], "ceil_mode": 1}),
    "pool3d": ([1, 2, 5, 6, 7], {"kernel_shape": [2, 3, 2], "strides": [1, 2, 2], "pads": [1, 0, 1, 0, 1, 1]}),
    "pool3d_ceil_dilated": ([2, 2, 7, 6, 8], {"kernel_shape": [2, 2, 3], "strides": [2, 2, 2],
                                              "dilations": [1, 2, 1], "ceil_mode": 1}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_max_pool_matches_ort(case):
    x_shape, attrs = CASES[case]
    check_pool(x_shape, **attrs)


def test_padding_never_wins():
    # Every input is negative: a zero-padded pool would return 0 at the borders.
    x_shape = [1, 2, 5, 5]
    x = -np.abs(rand(*x_shape)) - 1.0
    model = pool_model(x_shape, kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    got = assert_matches_ort(model, {"x": x.astype(np.float32)})
    assert (got["y"] < 0).all()


@pytest.mark.parametrize("auto_pad", ["NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"])
@pytest.mark.parametrize("x_shape,kernel,strides,ceil_mode", [
    ([1, 3, 9, 8], [3, 3], [1, 1], 0),
    ([2, 3, 10, 7], [2, 3], [2, 3], 0),  # SAME pads are asymmetric
    ([1, 2, 11, 9], [3, 2], [2, 2], 1),
    ([1, 2, 13], [4], [3], 0),
])
def test_max_pool_auto_pad(auto_pad, x_shape, kernel, strides, ceil_mode):
    check_pool(x_shape, kernel_shape=kernel, strides=strides, auto_pad=auto_pad, ceil_mode=ceil_mode)


def random_pool_case(rng):
    """A random valid MaxPool: rank, kernel, strides, dilations, pads (< kernel) and ceil_mode."""
    spatial = int(rng.integers(1, 4))
    kernel = [int(k) for k in rng.integers(1, 4, spatial)]
    dilations = [int(d) for d in rng.integers(1, 3, spatial)]
    strides = [int(s) for s in rng.integers(1, 4, spatial)]
    pads = [int(rng.integers(0, k)) for k in kernel + kernel]
    size = [int(rng.integers((k - 1) * d + 1, (k - 1) * d + 9)) for k, d in zip(kernel, dilations)]
    x_shape = [int(rng.integers(1, 4)), int(rng.integers(1, 6))] + size
    attrs = {"kernel_shape": kernel, "dilations": dilations, "strides": strides, "pads": pads,
             "ceil_mode": int(rng.integers(0, 2))}
    return x_shape, attrs


@pytest.mark.parametrize("seed", range(16))
def test_max_pool_random(seed):
    x_shape, attrs = random_pool_case(np.random.default_rng(seed))
    check_pool(x_shape, **attrs)


INDICES_CASES = [
    ([2, 3, 6, 5], dict(kernel_shape=[2, 2], strides=[2, 2]), 0),
    ([2, 3, 6, 5], dict(kernel_shape=[3, 2], strides=[2, 1], pads=[1, 0, 0, 1]), 0),
    ([2, 3, 6, 5], dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]), 1),
    ([1, 2, 7, 7], dict(kernel_shape=[2, 2], dilations=[2, 2], ceil_mode=1), 1),
    ([2, 3, 9], dict(kernel_shape=[3], strides=[2], pads=[1, 1]), 0),
    ([1, 2, 4, 5, 4], dict(kernel_shape=[2, 2, 2], strides=[2, 1, 2]), 0),
]


@pytest.mark.parametrize("x_shape, attrs, storage_order", INDICES_CASES, ids=lambda c: str(c))
def test_max_pool_indices_output(x_shape, attrs, storage_order):
    """The Indices output (int64, ONNX's flattened index of each maximum, row- or column-major)
    against onnxruntime's, and Y with it."""
    outputs = (("y", None), ("idx", None, TensorProto.INT64))
    model = pool_model(x_shape, outputs=outputs, storage_order=storage_order, **attrs)
    assert_matches_ort(model, {"x": rand(*x_shape)})


def test_max_pool_storage_order_must_be_0_or_1():
    model = pool_model([1, 1, 4, 4], name="pool_bad_order", kernel_shape=[2, 2])
    model.graph.node[0].attribute.append(helper.make_attribute("storage_order", 2))
    with pytest.raises(dnnx.InvalidModelError, match="pool_bad_order.*storage_order 2"):
        dnnx.load(model)


def test_max_pool_pad_as_large_as_window():
    model = pool_model([1, 1, 6, 6], name="pool_big_pad", kernel_shape=[2, 2], pads=[2, 0, 0, 0])
    with pytest.raises(dnnx.InvalidModelError, match=r"pool_big_pad.*pads \[2,0,0,0\]"):
        dnnx.load(model)


def test_max_pool_kernel_rank_mismatch():
    model = pool_model([1, 1, 6, 6], name="pool_rank", outputs=(("y", [1, 1, 5, 5]),),
                       kernel_shape=[2, 2, 2])
    with pytest.raises(dnnx.InvalidModelError, match=r"pool_rank.*kernel_shape \[2,2,2\]"):
        dnnx.load(model)


def test_max_pool_plan_row():
    # (2x2 windows at stride 2 take their own path: tests/test_max_pool_2x2_cpu.py)
    (row,) = dnnx.load(pool_model([2, 3, 9, 9], kernel_shape=[3, 3], strides=[2, 2])).plan()
    assert row["algorithm"] == "direct"
    assert row["outputs"] == [[2, 3, 4, 4]]


@pytest.mark.parametrize("seed", range(24))
def test_8bit_strided_max_pool_matches_onnxruntime(seed):
    """Note [strided pool columns]: 8-bit windows at stride 2 or 3 (the max of k consecutive
    columns, then one read per output; the padded edges per tap), kernel widths 2-5, asymmetric
    pads, ceil_mode, rows narrower than a vector and wider: onnxruntime's values exactly."""
    rng = np.random.default_rng(seed)
    k, s = int(rng.integers(2, 6)), int(rng.integers(2, 4))
    w, h = int(rng.integers(k, 70)), int(rng.integers(2, 9))
    pads = [0, int(rng.integers(0, k)), 0, int(rng.integers(0, k))]
    signed = seed % 2 == 1
    elem, dtype = (TensorProto.INT8, np.int8) if signed else (TensorProto.UINT8, np.uint8)
    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, k], strides=[1, s], pads=pads,
                            ceil_mode=int(rng.integers(0, 2)))
    model = make_model([node], [("x", [2, 3, h, w], elem)], [("y", None, elem)], opset=12)
    lo, hi = (-128, 128) if signed else (0, 256)
    x = rng.integers(lo, hi, (2, 3, h, w)).astype(dtype)
    assert_matches_ort(model, {"x": x}, rtol=0, atol=0)


@pytest.mark.parametrize("seed", range(16))
def test_8bit_max_pool_rows_by_permutes_match_onnxruntime(seed):
    """Note [8-bit pool rows]: rows of at most 128 bytes with at most 64 outputs take one vpermt2b
    per window column (strides 1-3, dilations, pads wider than a tap reaches, ceil_mode); wider
    rows and longer outputs stay on the generic path: onnxruntime's values exactly either way."""
    rng = np.random.default_rng(100 + seed)
    k, s, d = int(rng.integers(1, 5)), int(rng.integers(1, 4)), int(rng.integers(1, 3))
    w = int(rng.choice([(k - 1) * d + 1, 17, 63, 64, 65, 112, 127, 128, 129, 140]))
    w = max(w, (k - 1) * d + 1)
    pads = [int(rng.integers(0, 2)), int(rng.integers(0, k)), int(rng.integers(0, 2)), int(rng.integers(0, k))]
    signed = seed % 2 == 1
    elem, dtype = (TensorProto.INT8, np.int8) if signed else (TensorProto.UINT8, np.uint8)
    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, k], strides=[2, s], dilations=[1, d],
                            pads=pads, ceil_mode=int(rng.integers(0, 2)))
    model = make_model([node], [("x", [1, 5, 7, w], elem)], [("y", None, elem)], opset=12)
    lo, hi = (-128, 128) if signed else (0, 256)
    x = rng.integers(lo, hi, (1, 5, 7, w)).astype(dtype)
    assert_matches_ort(model, {"x": x}, rtol=0, atol=0)


def test_8bit_resnet_stem_pool_matches_onnxruntime():
    """The QDQ ResNet stem's pool on its bytes: 3x3 at stride 2, padding 1, 112 -> 56 (Note [8-bit pool rows])."""
    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    model = make_model([node], [("x", [1, 64, 112, 112], TensorProto.UINT8)], [("y", None, TensorProto.UINT8)], opset=12)
    x = np.random.default_rng(7).integers(0, 256, (1, 64, 112, 112)).astype(np.uint8)
    assert_matches_ort(model, {"x": x}, rtol=0, atol=0)
