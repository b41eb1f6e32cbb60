"""MatMul with numpy.matmul semantics (1-D operands, batched, broadcast batch dims), checked
against onnxruntime, and the CPU path the planner picks."""
import numpy as np
import pytest
from onnx import helper

import dnnx
from ort_check import assert_matches_ort, make_model, rand
from thread_check import assert_same_bits_on_one_and_two_threads

# (A shape, B shape, the CPU algorithm)
CASES = [
    ([3, 4], [4, 5], "gemm"),
    ([1, 1], [1, 1], "gemm"),
    ([2, 3, 4], [4, 5], "gemm"),              # the batch folds into M
    ([2, 3, 3, 4], [1, 4, 5], "gemm"),        # B's batch dims are all 1
    ([4], [4, 5], "gemm"),                    # 1-D A: [1,4] then the 1 is dropped
    ([3, 4], [4], "gemm"),                    # 1-D B: [4,1] then the 1 is dropped
    ([4], [4], "gemm"),                       # dot product: a scalar
    ([2, 3, 4], [4], "gemm"),
    ([2, 3, 4], [2, 4, 5], "batched gemm"),
    ([3, 4], [2, 4, 5], "batched gemm"),      # A broadcast over B's batch
    ([4], [2, 4, 5], "batched gemm"),
    ([2, 1, 3, 4], [5, 4, 6], "batched gemm"),  # both batches broadcast
    ([1, 3, 3, 4], [2, 1, 4, 2], "batched gemm"),
    ([2, 3, 0], [0, 5], "gemm"),              # K = 0: zeros
]


def matmul_model(a_shape, b_shape, out_shape, initializers=()):
    node = helper.make_node("MatMul", ["a", "b"], ["y"], name="mm")
    inputs = [("a", a_shape)] + ([] if "b" in dict(initializers) else [("b", b_shape)])
    return make_model([node], inputs, [("y", out_shape)], initializers=initializers)


@pytest.mark.parametrize("a_shape,b_shape,algorithm", CASES)
def test_matmul_cases(a_shape, b_shape, algorithm):
    a, b = rand(*a_shape), rand(*b_shape, seed=1)
    want = np.matmul(a, b)
    model = matmul_model(a_shape, b_shape, list(want.shape))
    got = assert_matches_ort(model, {"a": a, "b": b})
    np.testing.assert_allclose(got["y"], want, rtol=1e-4, atol=1e-5)
    assert dnnx.load(model).plan()[0]["algorithm"] == algorithm


@pytest.mark.parametrize("seed", range(16))
def test_random_batched_shapes(seed):
    rng = np.random.default_rng(seed)
    m, k, n = (int(d) for d in rng.integers(1, 9, size=3))
    batch = [int(d) for d in rng.integers(1, 4, size=int(rng.integers(0, 4)))]

    def batch_of():
        dims = batch[len(batch) - int(rng.integers(0, len(batch) + 1)):]
        return [1 if rng.random() < 0.3 else d for d in dims]

    a_shape = batch_of() + [m, k]
    b_shape = batch_of() + [k, n]
    a, b = rand(*a_shape, seed=seed), rand(*b_shape, seed=seed + 100)
    model = matmul_model(a_shape, b_shape, list(np.matmul(a, b).shape))
    assert_matches_ort(model, {"a": a, "b": b})


@pytest.mark.parametrize("a_shape,b_shape", [
    ([4, 4, 64, 36], [4, 4, 36, 64]),  # attention-like: 16 batches, the AVX-512 product
    ([3, 40, 33], [3, 33, 70]),        # an odd batch count
    ([2, 1, 1, 8], [2, 8, 300]),       # one row: sgemv, batches across the pool
    ([5, 17, 9], [9, 5]),              # B without batch: one gemm
])
def test_batches_across_the_pool_same_bits_on_one_and_two_threads(a_shape, b_shape):
    """Note [batches across the pool] (engine/backends/cpu/dense/matmul_cpu.cc)."""
    a, b = rand(*a_shape), rand(*b_shape, seed=1)
    model = matmul_model(a_shape, b_shape, list(np.matmul(a, b).shape))
    out = assert_same_bits_on_one_and_two_threads(model, {"a": a, "b": b})
    np.testing.assert_allclose(out["y"], np.matmul(a, b), rtol=1e-4, atol=1e-5)


def test_weight_from_initializer_large():
    """A linear layer the size of a real one: [N, 256] x [256, 128] with the weight constant."""
    w = rand(256, 128, seed=7)
    model = matmul_model([8, 256], None, [8, 128], initializers={"b": w})
    assert_matches_ort(model, {"a": rand(8, 256)})


@pytest.mark.parametrize("a_shape,b_shape", [([3, 4], [5, 6]), ([2, 3, 4], [3, 4, 5]), ([4], [5])])
def test_incompatible_shapes_raise(a_shape, b_shape):
    model = matmul_model(a_shape, b_shape, ["d"])
    with pytest.raises((dnnx.InvalidModelError, dnnx.UnsupportedModelError)) as err:
        dnnx.load(model)
    assert "'mm'" in str(err.value)


@pytest.mark.parametrize("m,k,n", [
    (256, 40, 16),   # an attention's A V product: every panel narrow (Note [narrow panels])
    (50, 9, 7),      # a narrow panel of 7 columns, rows past the 24-row tile
    (30, 33, 48),    # a whole panel, then a narrow one of 16
    (25, 5, 49),     # a whole panel, then 17 columns on the wide tile
    (24, 3, 1),      # one column
    (13, 64, 32),    # whole panels, plain loads, a short last row tile
])
def test_narrow_and_whole_panels(m, k, n):
    """The AVX-512 product's narrow tile (16 columns or fewer) and its whole-panel loop
    (engine/backends/cpu/dense/gemm_avx512.cc): the same FMA chains, so onnxruntime's values and
    the same bits on one and two threads, over batches of 4."""
    a, b = rand(4, m, k, seed=m), rand(4, k, n, seed=n)
    model = matmul_model([4, m, k], [4, k, n], [4, m, n])
    assert dnnx.load(model).plan()[0]["algorithm"] == "batched gemm"
    assert_matches_ort(model, {"a": a, "b": b})
    out = assert_same_bits_on_one_and_two_threads(model, {"a": a, "b": b})
    np.testing.assert_allclose(out["y"], np.matmul(a, b), rtol=1e-4, atol=1e-5)
