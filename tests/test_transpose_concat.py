"""Transpose and Concat: dtype-agnostic data movement, checked against onnxruntime (float32,
int32 and int64 tensors)."""
import itertools

import numpy as np
import pytest
from onnx import TensorProto, helper

import dnnx
from ort_check import assert_matches_ort, make_model, rand
from thread_check import assert_same_bits_on_one_and_two_threads

DTYPES = {np.float32: TensorProto.FLOAT, np.int32: TensorProto.INT32, np.int64: TensorProto.INT64}


def tensor(shape, dtype, seed=0):
    if dtype == np.float32:
        return rand(*shape, seed=seed)
    return np.random.default_rng(seed).integers(-1000, 1000, size=shape).astype(dtype)


def transpose_model(shape, perm, dtype=np.float32):
    attrs = {} if perm is None else {"perm": list(perm)}
    node = helper.make_node("Transpose", ["x"], ["y"], name="tr", **attrs)
    out = [shape[p] for p in (perm if perm is not None else reversed(range(len(shape))))]
    return make_model([node], [("x", shape, DTYPES[dtype])], [("y", out, DTYPES[dtype])])


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("perm", list(itertools.permutations(range(3))))
def test_transpose_rank3_every_perm(perm, dtype):
    x = tensor([2, 3, 4], dtype)
    got = assert_matches_ort(transpose_model([2, 3, 4], perm, dtype), {"x": x})
    np.testing.assert_array_equal(got["y"], np.transpose(x, perm))


@pytest.mark.parametrize("dtype", [np.float32, np.int64])
@pytest.mark.parametrize("shape,perm", [
    ([2, 3, 4, 5], (0, 2, 3, 1)),   # NCHW -> NHWC
    ([2, 4, 5, 3], (0, 3, 1, 2)),   # NHWC -> NCHW
    ([2, 3, 4, 5], (3, 2, 1, 0)),
    ([2, 3, 4, 5], (1, 0, 2, 3)),   # the trailing block stays contiguous
    ([2, 3, 4, 5], (0, 1, 2, 3)),   # identity: one copy
    ([1, 3, 1, 5], (2, 0, 1, 3)),   # moves only size-1 dims: one copy
    ([1, 3, 1, 5], (2, 3, 0, 1)),
    ([2, 1, 3, 1, 4], (4, 3, 2, 1, 0)),
    ([64, 48], (1, 0)),
    ([70, 33], (1, 0)),             # tiles that do not divide the dims
    ([3, 40, 37], (0, 2, 1)),
    ([5, 33, 2, 65], (3, 1, 2, 0)),
    ([7], (0,)),
])
def test_transpose_shapes(shape, perm, dtype):
    x = tensor(shape, dtype, seed=2)
    got = assert_matches_ort(transpose_model(shape, perm, dtype), {"x": x})
    np.testing.assert_array_equal(got["y"], np.transpose(x, perm))


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("shape,perm", [
    ([2, 3, 17, 19], (0, 2, 3, 1)),    # an image's NCHW -> NHWC: 3 interleaved columns
    ([1, 4, 9, 7], (0, 2, 3, 1)),      # 4
    ([2, 2, 5, 3], (0, 2, 3, 1)),      # 2
    ([2, 3, 4, 5, 6], (0, 2, 4, 3, 1)),  # 3, under counter dims
    ([3, 70], (1, 0)),                 # 3 columns of 70 rows
    ([1, 3, 3, 5], (0, 2, 3, 1)),      # 3 columns of 15 rows: fewer than one 16-pixel vector
    ([1, 3, 224, 224], (0, 2, 3, 1)),  # an RGB image: whole vectors only
])
def test_transpose_to_a_few_columns(shape, perm, dtype):
    """Note [narrow transpose] (engine/backends/cpu/layout/transpose_cpu.cc): 4-byte elements into
    at most 4 innermost output columns, interleaved row by row; 3 of them 16 rows at a time where
    the CPU has AVX-512 (Note [narrow transpose in avx512])."""
    x = tensor(shape, dtype, seed=3)
    got = assert_matches_ort(transpose_model(shape, perm, dtype), {"x": x})
    np.testing.assert_array_equal(got["y"], np.transpose(x, perm))


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("shape,perm", [
    ([1, 116, 28, 28], (0, 2, 3, 1)),  # whole 16 x 16 tiles along H*W, 4 columns left over
    ([1, 28, 28, 116], (0, 3, 1, 2)),  # and back
    ([2, 37, 5, 7], (0, 2, 3, 1)),     # rows and columns past the whole tiles, batch 2
    ([16, 16], (1, 0)),                # one tile
    ([3, 17, 50, 6], (0, 2, 1, 3)),    # a counter dim inside: the innermost block stays contiguous
    ([4, 33, 40], (2, 1, 0)),
    ([8, 8], (1, 0)),                  # one AVX2 tile
    ([9, 15], (1, 0)),                 # one AVX2 tile and its edges
])
def test_transpose_tiles_in_registers(shape, perm, dtype):
    """Note [transpose tiles in registers] (engine/backends/cpu/layout/transpose_cpu.cc): 4-byte
    elements in 16 x 16 tiles where the CPU has AVX-512, the edges masked; in 8 x 8 tiles where it
    has AVX2 only, the edges element by element (Note [transpose tiles in avx2])."""
    x = tensor(shape, dtype, seed=4)
    got = assert_matches_ort(transpose_model(shape, perm, dtype), {"x": x})
    np.testing.assert_array_equal(got["y"], np.transpose(x, perm))


@pytest.mark.parametrize("dtype, onnx_type", [(np.uint8, TensorProto.UINT8), (np.int8, TensorProto.INT8)])
@pytest.mark.parametrize("shape,perm", [
    ([1, 64, 56, 56], (0, 2, 3, 1)),   # int8 ResNet-50's region entry: whole 16 x 16 byte tiles
    ([1, 56, 56, 64], (0, 3, 1, 2)),   # and its way back
    ([2, 37, 5, 7], (0, 2, 3, 1)),     # rows and columns past the whole tiles, batch 2
    ([1, 2048, 7, 7], (0, 2, 3, 1)),   # 49 rows: three whole tiles and one byte row each
    ([16, 16], (1, 0)),                # one tile
    ([3, 17, 50, 6], (0, 2, 1, 3)),
])
def test_transpose_byte_tiles(shape, perm, dtype, onnx_type):
    """Note [byte transpose tiles] (engine/backends/cpu/layout/transpose_cpu.cc): 1-byte elements
    in 16 x 16 SSE2 tiles, the edges byte by byte, on one and two threads."""
    x = np.random.default_rng(8).integers(0, 256, size=shape).astype(np.uint8).view(dtype)
    out = [shape[p] for p in perm]
    node = helper.make_node("Transpose", ["x"], ["y"], perm=list(perm))
    model = make_model([node], [("x", shape, onnx_type)], [("y", out, onnx_type)])
    got = assert_same_bits_on_one_and_two_threads(model, {"x": x})
    np.testing.assert_array_equal(got["y"], np.transpose(x, perm))


def test_the_three_column_interleave_moves_nan_payloads_as_they_are():
    bits = np.random.default_rng(9).integers(0, 2**32, size=(2, 3, 7, 9), dtype=np.uint64).astype(np.uint32)
    bits[:, :, 0, :] = 0x7FC00001 + np.arange(9, dtype=np.uint32)  # quiet NaNs with payloads
    bits[:, 1, 3, :] = 0xFF800003  # signalling-pattern NaNs, sign set
    x = bits.view(np.float32)
    got = dnnx.load(transpose_model(list(x.shape), (0, 2, 3, 1))).run(x)
    np.testing.assert_array_equal(got.view(np.uint32), np.transpose(bits, (0, 2, 3, 1)))


def test_transpose_tiles_move_nan_payloads_as_they_are():
    bits = np.random.default_rng(5).integers(0, 2**32, size=(1, 40, 18, 19), dtype=np.uint64).astype(np.uint32)
    bits[0, :, 0, :] = 0x7FC00001 + np.arange(19, dtype=np.uint32)  # quiet NaNs with payloads
    x = bits.view(np.float32)
    got = dnnx.load(transpose_model(list(x.shape), (0, 2, 3, 1))).run(x)
    np.testing.assert_array_equal(got.view(np.uint32), np.transpose(bits, (0, 2, 3, 1)))


@pytest.mark.parametrize("dtype", [np.float32, np.int64])
@pytest.mark.parametrize("shape,perm", [
    ([1, 116, 28, 28], (0, 2, 3, 1)),  # one block: bands of its rows across the pool
    ([1, 28, 28, 116], (0, 3, 1, 2)),
    ([1, 3, 200, 210], (0, 2, 3, 1)),  # one block of 3 interleaved columns, in bands
    ([6, 40, 300], (0, 2, 1)),         # 6 blocks: counter positions across the pool
    ([4, 8, 64, 90], (0, 2, 1, 3)),    # rows copied whole, positions across the pool
])
def test_transposes_across_the_pool_same_bits_on_one_and_two_threads(shape, perm, dtype):
    """Note [transposes across the pool] (engine/backends/cpu/layout/transpose_cpu.cc)."""
    x = tensor(shape, dtype, seed=6)
    out = assert_same_bits_on_one_and_two_threads(transpose_model(shape, perm, dtype), {"x": x})
    np.testing.assert_array_equal(out["y"], np.transpose(x, perm))


@pytest.mark.parametrize("shape", [[], [2, 3], [2, 3, 4], [2, 3, 4, 5]])
def test_transpose_default_perm_reverses(shape):
    x = tensor(shape, np.int64)
    got = assert_matches_ort(transpose_model(shape, None, np.int64), {"x": x})
    np.testing.assert_array_equal(got["y"], x.T)


@pytest.mark.parametrize("shape,perm,algorithm", [
    ([1, 3, 1, 5], (2, 0, 1, 3), "copy"),
    ([2, 3, 4], (1, 0, 2), "row copy"),
    ([2, 3, 4], (0, 2, 1), "tiled"),
    ([2, 3, 4, 5], (0, 2, 3, 1), "tiled"),
])
def test_transpose_algorithm(shape, perm, algorithm):
    assert dnnx.load(transpose_model(shape, perm)).plan()[0]["algorithm"] == algorithm


@pytest.mark.parametrize("perm", [(0, 1), (0, 0, 1), (0, 1, 3)])
def test_transpose_bad_perm_raises(perm):
    node = helper.make_node("Transpose", ["x"], ["y"], name="bad_tr", perm=list(perm))
    model = make_model([node], [("x", [2, 3, 4])], [("y", ["a", "b", "c"])])
    with pytest.raises((dnnx.InvalidModelError, dnnx.UnsupportedModelError)) as err:
        dnnx.load(model)
    assert "bad_tr" in str(err.value)


def concat_model(shapes, axis, dtype=np.float32):
    names = [f"x{i}" for i in range(len(shapes))]
    node = helper.make_node("Concat", names, ["y"], name="cat", axis=axis)
    out = list(shapes[0])
    out[axis] = sum(s[axis] for s in shapes)
    elem = DTYPES[dtype]
    return make_model([node], [(n, s, elem) for n, s in zip(names, shapes)], [("y", out, elem)])


def concat_shapes(base, axis, count, seed):
    """`count` shapes equal to `base` except along `axis`, where each gets 1..4."""
    sizes = np.random.default_rng(seed).integers(1, 5, size=count)
    return [base[:axis % len(base)] + [int(s)] + base[axis % len(base) + 1:] for s in sizes]


@pytest.mark.parametrize("count", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("axis", [0, 1, 2, 3, -1, -2, -3, -4])
def test_concat_inputs_on_each_axis(count, axis):
    shapes = concat_shapes([2, 3, 4, 5], axis, count, seed=count)
    feeds = {f"x{i}": tensor(s, np.float32, seed=i) for i, s in enumerate(shapes)}
    got = assert_matches_ort(concat_model(shapes, axis), feeds)
    np.testing.assert_array_equal(got["y"], np.concatenate(list(feeds.values()), axis=axis))


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concat_integers(dtype, axis):
    shapes = concat_shapes([3, 2, 4], axis, 3, seed=9)
    feeds = {f"x{i}": tensor(s, dtype, seed=i) for i, s in enumerate(shapes)}
    got = assert_matches_ort(concat_model(shapes, axis, dtype), feeds)
    np.testing.assert_array_equal(got["y"], np.concatenate(list(feeds.values()), axis=axis))


def test_concat_with_constant_input():
    node = helper.make_node("Concat", ["x", "c"], ["y"], name="cat", axis=1)
    model = make_model([node], [("x", [2, 3])], [("y", [2, 5])], initializers={"c": rand(2, 2, seed=5)})
    assert_matches_ort(model, {"x": rand(2, 3)})


def test_concat_mismatched_dims_raise():
    model = concat_model([[2, 3], [2, 3]], 0)
    model.graph.input[1].type.tensor_type.shape.dim[1].dim_value = 4
    with pytest.raises((dnnx.InvalidModelError, dnnx.UnsupportedModelError)) as err:
        dnnx.load(model)
    assert "'cat'" in str(err.value)


def test_concat_mixed_dtypes_raise():
    node = helper.make_node("Concat", ["a", "b"], ["y"], name="mixed_cat", axis=0)
    model = make_model([node], [("a", [2], TensorProto.INT64), ("b", [2], TensorProto.INT64)],
                       [("y", [4], TensorProto.INT64)])
    model.graph.input[1].type.tensor_type.elem_type = TensorProto.INT32
    with pytest.raises((dnnx.InvalidModelError, dnnx.UnsupportedModelError)) as err:
        dnnx.load(model)
    assert "mixed_cat" in str(err.value)
