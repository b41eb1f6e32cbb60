"""The dense rows kernel (engine/backends/cuda/dense/dense_rows.h) on CUDA, against the CPU backend and
onnxruntime (fp32 tolerances of cuda_check.py, which also rule out TF32):
  - Gemm and Gemm+Relu of up to 4 rows (batch 1 to 4): one warp per output column, bias and Relu
    applied, for every C shape, transA/transB, alpha and beta; 5 rows and more stay on cuBLAS
  - narrow Gemms (up to 64 columns: a classifier head, Note [narrow Gemms] in gemm_cuda.cc) of up
    to 2^24 multiply-adds at any batch; wider or heavier ones stay on cuBLAS
  - Gemm+Softmax (the fuse_gemm_softmax pass): the softmax over each row in the same kernel for
    small layers at any batch, the cuBLAS GEMM + cudnnSoftmaxForward pair for wide rows, in fp16,
    or when the kernel is forced to fail (DNNX_TEST_FAIL_ALGO)"""
import numpy as np
import pytest
from onnx import helper

import dnnx
from cuda_check import check_cuda
from dnnx.examples import build
from ort_check import make_model, rand

DENSE = "dense rows kernel"
PAIR_GEMMS = ("cublasLtMatmul", "cublasSgemm", DENSE)


def gemm_model(m, k, n, c_shape=(-1,), then=None, axis=None, opset=17, **attrs):
    """Gemm of a [m, k] input (or [k, m] with transA) and a [k, n] weight ([n, k] with transB), then
    `then` ("Relu", "Softmax" or None). c_shape (-1,) means [n]; None: no C."""
    trans_a, trans_b = attrs.get("transA", 0), attrs.get("transB", 0)
    inits = {"b": (rand(*((n, k) if trans_b else (k, n)), seed=2) / np.sqrt(max(k, 1))).astype(np.float32)}
    inputs = ["a", "b"]
    if c_shape is not None:
        inits["c"] = rand(*[n if d == -1 else d for d in c_shape], seed=3)
        inputs.append("c")
    out = "g" if then else "y"
    nodes = [helper.make_node("Gemm", inputs, [out], name="gemm", **attrs)]
    if then:
        extra = {} if axis is None else {"axis": axis}
        nodes.append(helper.make_node(then, [out], ["y"], name=then.lower(), **extra))
    a_shape = [k, m] if trans_a else [m, k]
    return make_model(nodes, [("a", a_shape)], [("y", None)], inits, opset=opset), a_shape


# m, k, n, C shape, attributes
GEMM_CASES = {
    "lenet_fc1_batch1": (1, 800, 500, (-1,), {"transB": 1}),
    "lenet_fc2_batch3": (3, 500, 10, (-1,), {"transB": 1}),
    "four_rows_no_c": (4, 37, 70, None, {}),
    "trans_a": (2, 19, 33, (1, -1), {"transA": 1}),
    "trans_both_alpha_beta": (3, 40, 21, (-1,), {"transA": 1, "transB": 1, "alpha": 0.5, "beta": 2.0}),
    "c_full": (4, 16, 9, (4, 9), {}),
    "c_column": (3, 16, 9, (3, 1), {}),
    "c_scalar": (2, 16, 9, (), {}),
    "beta_zero": (1, 16, 9, (-1,), {"beta": 0.0}),
}


@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("case", list(GEMM_CASES))
def test_gemm_of_few_rows(case, relu):
    m, k, n, c_shape, attrs = GEMM_CASES[case]
    model, a_shape = gemm_model(m, k, n, c_shape, then="Relu" if relu else None, **attrs)
    (row,) = dnnx.load(model, device="cuda").plan()
    assert row["op"] == ("Gemm+Relu" if relu else "Gemm"), row
    assert row["algorithm"].startswith(DENSE) and ("relu" in row["algorithm"]) == relu, row
    assert "no TF32" in row["math"] and row["workspace"] == 0, row
    check_cuda(model, {"a": rand(*a_shape, seed=1)})


def test_five_rows_and_more_stay_on_cublas():
    model, a_shape = gemm_model(5, 800, 500, then="Relu", transB=1)
    (row,) = dnnx.load(model, device="cuda").plan()
    assert row["algorithm"].startswith("cublasLtMatmul"), row
    assert any(algo == DENSE and "over the small-batch bounds" in why for algo, why in row["rejected"]), row
    check_cuda(model, {"a": rand(*a_shape, seed=1)})


# m, k, n, C shape, attributes: narrow layers at training and inference batches
NARROW_CASES = {
    "lenet_fc2_batch256": (256, 500, 10, (-1,), {"transB": 1}),
    "lenet_fc2_batch1024": (1024, 500, 10, (-1,), {"transB": 1}),
    "odd_rows_64_columns": (257, 84, 64, (-1,), {}),
    "trans_a_full_c_alpha_beta": (33, 40, 21, (33, 21), {"transA": 1, "alpha": 0.5, "beta": 2.0}),
    "no_c": (100, 300, 7, None, {"transB": 1}),
}


@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("case", list(NARROW_CASES))
def test_narrow_gemm_at_any_batch(case, relu):
    m, k, n, c_shape, attrs = NARROW_CASES[case]
    model, a_shape = gemm_model(m, k, n, c_shape, then="Relu" if relu else None, **attrs)
    for search in ("heuristic", "exhaustive"):  # one rule for both: the same bits either way
        (row,) = dnnx.load(model, device="cuda", algo_search=search, plan_cache=False).plan()
        assert row["algorithm"].startswith(DENSE) and ("relu" in row["algorithm"]) == relu, row
        assert ("cublasLtMatmul", f"{n} columns: too narrow for cuBLAS's tiles") in row["rejected"], row
    check_cuda(model, {"a": 3 * rand(*a_shape, seed=1)})


@pytest.mark.parametrize("m, k, n", [(256, 500, 65), (4096, 500, 10), (8192, 256, 10)])
def test_wide_or_heavy_gemms_stay_on_cublas(m, k, n):
    # 65 columns: over the narrow bound; the others just over 2^24 multiply-adds, where the
    # dense rows kernel measured slower than cuBLASLt (Note [narrow Gemms])
    model, a_shape = gemm_model(m, k, n, transB=1)
    (row,) = dnnx.load(model, device="cuda").plan()
    assert row["algorithm"].startswith("cublasLtMatmul"), row
    assert any(algo == DENSE and "narrow-layer bounds" in why for algo, why in row["rejected"]), row
    check_cuda(model, {"a": rand(*a_shape, seed=1)})


def test_forced_failure_falls_back_to_cublas(monkeypatch):
    monkeypatch.setenv("DNNX_TEST_FAIL_ALGO", DENSE)
    model, a_shape = gemm_model(1, 800, 500, then="Relu", transB=1)
    (row,) = dnnx.load(model, device="cuda").plan()
    assert row["algorithm"] == "cublasLtMatmul (bias+relu epilogue)", row
    assert any(algo == DENSE and "forced" in why for algo, why in row["rejected"]), row
    check_cuda(model, {"a": rand(*a_shape, seed=1)})


# m, k, n, C shape, attributes, softmax axis, opset, whether the kernel takes it
SOFTMAX_CASES = {
    "lenet_fc2_batch1": (1, 500, 10, (-1,), {"transB": 1}, 1, 17, True),
    "lenet_fc2_batch1024": (1024, 500, 10, (-1,), {"transB": 1}, 1, 17, True),
    "odd_rows_default_axis": (7, 33, 65, (-1,), {}, None, 17, True),
    "opset11_axis1": (6, 20, 12, (1, -1), {"transA": 1}, 1, 11, True),
    "full_c_alpha": (5, 24, 40, (5, 40), {"alpha": 2.0, "beta": 0.5}, -1, 17, True),
    "no_c": (3, 64, 100, None, {"transB": 1}, -1, 17, True),
    "row_of_1024": (2, 64, 1024, (-1,), {"transB": 1}, -1, 17, True),
    "row_of_1500_pair": (2, 64, 1500, (-1,), {"transB": 1}, -1, 17, False),
    "classifier_pair": (256, 2048, 1000, (-1,), {"transB": 1}, -1, 17, False),
}


@pytest.mark.parametrize("case", list(SOFTMAX_CASES))
def test_gemm_softmax(case):
    m, k, n, c_shape, attrs, axis, opset, fused = SOFTMAX_CASES[case]
    model, a_shape = gemm_model(m, k, n, c_shape, then="Softmax", axis=axis, opset=opset, **attrs)
    (row,) = dnnx.load(model, device="cuda").plan()
    assert row["op"] == "Gemm+Softmax" and row["name"] == "gemm", row
    if fused:
        assert row["algorithm"].startswith(DENSE) and "softmax fused" in row["algorithm"], row
        assert row["workspace"] == 0, row
    else:
        gemm, softmax = row["algorithm"].split(", then ")
        assert gemm.startswith(PAIR_GEMMS) and softmax == "cudnnSoftmaxForward (accurate)", row
        assert row["scratch"] >= m * n * 4, row  # the Gemm's output waits in the layer's scratch
        assert any(algo == DENSE for algo, _ in row["rejected"]), row
    check_cuda(model, {"a": 3 * rand(*a_shape, seed=1)})


def test_softmax_over_the_rows_axis_is_not_fused():
    model, a_shape = gemm_model(4, 16, 9, then="Softmax", axis=0)
    plan = dnnx.load(model, device="cuda").plan()
    assert [r["op"] for r in plan] == ["Gemm", "Softmax"], plan
    check_cuda(model, {"a": rand(*a_shape, seed=1)})


def test_gemm_softmax_pair_when_forced_or_switched_off(monkeypatch):
    model, a_shape = gemm_model(1, 500, 10, then="Softmax", axis=1, transB=1)
    unfused = dnnx.load(model, device="cuda", passes={"fuse_gemm_softmax": False}).plan()
    assert [r["op"] for r in unfused] == ["Gemm", "Softmax"], unfused
    monkeypatch.setenv("DNNX_TEST_FAIL_ALGO", DENSE)
    (row,) = dnnx.load(model, device="cuda").plan()
    assert row["op"] == "Gemm+Softmax" and row["algorithm"] == (
        "cublasLtMatmul (bias epilogue), then cudnnSoftmaxForward (accurate)"), row
    check_cuda(model, {"a": rand(*a_shape, seed=1)})


def test_lenet_plans_the_fused_tail_and_matches_at_batch_1_and_1024():
    model = build("lenet")
    for batch in (1, 1024):
        gpu = dnnx.load(model, device="cuda", batch_size=batch)
        rows = {r["name"]: r for r in gpu.plan(batch_size=batch)}
        assert rows["fc2"]["op"] == "Gemm+Softmax" and rows["fc2"]["algorithm"].startswith(DENSE), rows["fc2"]
        assert "softmax" not in rows
        fc1 = rows["fc1"]["algorithm"]
        assert fc1.startswith(DENSE) if batch == 1 else fc1.startswith("cublasLtMatmul"), rows["fc1"]
        x = rand(batch, 1, 28, 28, seed=batch)
        np.testing.assert_allclose(gpu.run(x), dnnx.load(model, batch_size=batch).run(x), rtol=1e-4, atol=1e-6)


def test_fp16_runs_the_gemm_softmax_pair_in_half():
    model, a_shape = gemm_model(4, 64, 10, then="Softmax", transB=1)
    (row,) = [r for r in dnnx.load(model, device="cuda", precision="fp16", measure_precision=False).plan() if r["op"] == "Gemm+Softmax"]
    assert ", then cudnnSoftmaxForward" in row["algorithm"] and "fp16" in row["math"], row
    assert any(algo == DENSE and "fp32 storage only" in why for algo, why in row["rejected"]), row
