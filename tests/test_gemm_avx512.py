"""The AVX-512 sgemm behind MatMul and Gemm (engine/backends/cpu/dense/gemm_avx512.cc, Note [avx512
gemm]) against onnxruntime: every row count of the 12-row micro-kernel's tail, column counts
around its 32-column panels, K from 1 up, both transposes, alpha and beta with a broadcast C, the
batched path, and the same bits at 1 and 2 threads. (On a CPU without AVX-512 the same cases run
OpenBLAS and check that.)"""
import numpy as np
import pytest
from onnx import helper

import dnnx
from ort_check import assert_matches_ort, make_model, rand, assert_same_bits_on_one_and_two_threads


def matmul_model(a_shape, b_shape, b_const=None):
    inits = {"b": b_const} if b_const is not None else {}
    inputs = [("a", list(a_shape))] + ([] if b_const is not None else [("b", list(b_shape))])
    return make_model([helper.make_node("MatMul", ["a", "b"], ["y"])], inputs, [("y", None)], initializers=inits)


@pytest.mark.parametrize("m", [2, 5, 6, 11, 12, 13, 25, 197])
@pytest.mark.parametrize("n, k", [(1, 1), (15, 7), (16, 3), (17, 64), (32, 9), (33, 128), (47, 5), (65, 300)])
def test_matmul_sizes(m, n, k):
    a, b = rand(m, k, seed=m), rand(k, n, seed=n + k)
    assert_matches_ort(matmul_model(a.shape, b.shape, b_const=b), {"a": a}, rtol=1e-4, atol=1e-4)


def test_batched_and_folded_batches():
    a, b = rand(3, 19, 40, seed=1), rand(3, 40, 37, seed=2)
    assert_matches_ort(matmul_model(a.shape, b.shape), {"a": a, "b": b}, rtol=1e-4, atol=1e-4)
    a2 = rand(2, 7, 40, seed=3)
    assert_matches_ort(matmul_model(a2.shape, (40, 37), b_const=rand(40, 37, seed=4)), {"a": a2}, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("trans_a", [0, 1])
@pytest.mark.parametrize("trans_b", [0, 1])
@pytest.mark.parametrize("c_shape", [None, (37,), (1, 37), (13, 1), (13, 37), ()])
def test_gemm_transposes_alpha_beta(trans_a, trans_b, c_shape):
    m, n, k = 13, 37, 29
    a = rand(*((k, m) if trans_a else (m, k)), seed=1)
    b = rand(*((n, k) if trans_b else (k, n)), seed=2)
    inits = {"b": b}
    ins = ["a", "b"]
    if c_shape is not None:
        inits["c"] = rand(*c_shape, seed=3) if c_shape else np.array(0.75, np.float32)
        ins.append("c")
    node = helper.make_node("Gemm", ins, ["y"], transA=trans_a, transB=trans_b, alpha=0.5, beta=1.5)
    model = make_model([node], [("a", list(a.shape))], [("y", [m, n])], initializers=inits)
    assert_matches_ort(model, {"a": a}, rtol=1e-4, atol=1e-4)


def test_gemm_relu_and_nan_free_output_with_beta_zero():
    # beta 0 ignores Y's old contents; the fused Relu runs after the product
    a, b = rand(9, 33, seed=5), rand(33, 40, seed=6)
    nodes = [helper.make_node("Gemm", ["a", "b", "c"], ["g"], beta=0.0), helper.make_node("Relu", ["g"], ["y"])]
    c = np.full((40,), np.nan, np.float32)
    model = make_model(nodes, [("a", [9, 33])], [("y", [9, 40])], initializers={"b": b, "c": c})
    got = assert_matches_ort(model, {"a": a}, rtol=1e-4, atol=1e-4)
    assert not np.isnan(got["y"]).any()


def test_large_k_falls_back_and_matches():
    a, b = rand(4, 5000, seed=7), rand(5000, 20, seed=8)
    assert_matches_ort(matmul_model(a.shape, b.shape, b_const=b), {"a": a}, rtol=1e-3, atol=1e-3)


def test_large_packed_b_falls_back_and_matches():
    # op(B) past 16 MB packed (a vocabulary projection): OpenBLAS's sgemm, same answer
    a, b = rand(3, 64, seed=11), rand(64, 70000, seed=12)
    assert_matches_ort(matmul_model(a.shape, b.shape, b_const=b), {"a": a}, rtol=1e-4, atol=1e-4)


def test_same_bits_at_one_and_two_threads():
    a, b = rand(197, 192, seed=9), rand(192, 768, seed=10)
    model = matmul_model(a.shape, b.shape, b_const=b)
    assert_same_bits_on_one_and_two_threads(model, a)
