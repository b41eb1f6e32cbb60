"""MatMul and Gemm with a constant B on the CPU's packed tiles (Note [packed product] in
engine/backends/cpu/conv/conv_nhwc_cpu.cc) against onnxruntime at the fp32 tolerance
(tests/ort_check.py): B [K, N] and Gemm's transB [N, K], a bias C of [N] and [1, N], Gemm+Relu,
filter counts off the tile's 16-wide columns, batched A folded into rows; and what keeps OpenBLAS
(few rows, a non-constant B, alpha, a 2-D C), named in the plan."""
import numpy as np
import pytest
from onnx import helper

import dnnx
from dnnx.threads import get_num_threads, set_num_threads
from ort_check import assert_matches_ort, make_model, rand

PACKED = "packed gemm"


def packed_on() -> bool:
    model = make_model([helper.make_node("MatMul", ["a", "b"], ["y"])], [("a", [64, 32])], [("y", None)],
                       {"b": rand(32, 32, seed=1)})
    return dnnx.load(model).plan()[0]["algorithm"].startswith(PACKED)


needs_packed = pytest.mark.skipif(not packed_on(), reason="no AVX-512 or AVX2: the packed tiles' path is off")


def algorithm(model):
    return dnnx.load(model).plan()[0]["algorithm"]


@needs_packed
@pytest.mark.parametrize("a_shape,n", [([64, 96], 384), ([1, 56, 56, 24], 100), ([33, 17], 5 + 16), ([128, 300], 48)])
def test_matmul_with_a_constant_b(a_shape, n):
    k = a_shape[-1]
    model = make_model([helper.make_node("MatMul", ["a", "b"], ["y"])], [("a", a_shape)], [("y", None)],
                       {"b": (rand(k, n, seed=2) / np.sqrt(k)).astype(np.float32)})
    assert algorithm(model).startswith(PACKED)
    assert_matches_ort(model, {"a": rand(*a_shape, seed=3)})


@needs_packed
@pytest.mark.parametrize("trans_b", [0, 1])
@pytest.mark.parametrize("c_shape", [None, [70], [1, 70]])
@pytest.mark.parametrize("op", ["Gemm", "Gemm+Relu"])
def test_gemm_with_a_constant_b(trans_b, c_shape, op):
    m, k, n = 40, 50, 70
    inits = {"b": (rand(*([n, k] if trans_b else [k, n]), seed=4) / np.sqrt(k)).astype(np.float32)}
    inputs = ["a", "b"]
    if c_shape:
        inits["c"] = rand(*c_shape, seed=5)
        inputs.append("c")
    nodes = [helper.make_node("Gemm", inputs, ["g" if op == "Gemm+Relu" else "y"], transB=trans_b)]
    if op == "Gemm+Relu":
        nodes.append(helper.make_node("Relu", ["g"], ["y"]))
    model = make_model(nodes, [("a", [m, k])], [("y", None)], inits)
    row = dnnx.load(model).plan()[0]
    assert row["op"] == op and row["algorithm"].startswith(PACKED), row
    assert_matches_ort(model, {"a": rand(m, k, seed=6)})


@needs_packed
@pytest.mark.parametrize("case", ["few rows", "b is an input", "alpha", "2-D c"])
def test_what_keeps_openblas(case):
    m = 1 if case == "few rows" else 64  # under kPackedProductMinRows (2)
    k, n = 32, 48
    inits, inputs = {}, [("a", [m, k])]
    if case == "b is an input":
        inputs.append(("b", [k, n]))
    else:
        inits["b"] = rand(k, n, seed=7)
    names = ["a", "b"]
    attrs = {"alpha": 0.5} if case == "alpha" else {}
    if case == "2-D c":
        inits["c"] = rand(m, n, seed=8)
        names.append("c")
    op = "MatMul" if case in ("few rows", "b is an input") else "Gemm"
    model = make_model([helper.make_node(op, names, ["y"], **attrs)], inputs, [("y", None)], inits)
    assert not algorithm(model).startswith(PACKED)
    feeds = {"a": rand(m, k, seed=9)}
    if case == "b is an input":
        feeds["b"] = rand(k, n, seed=10)
    assert_matches_ort(model, feeds)


@needs_packed
def test_same_bits_on_one_and_two_threads():
    model = make_model([helper.make_node("MatMul", ["a", "b"], ["y"])], [("a", [300, 200])], [("y", None)],
                       {"b": rand(200, 130, seed=11)})
    before = get_num_threads()
    try:
        out = []
        for threads in (1, 2):
            set_num_threads(threads)
            out.append(dnnx.load(model).run(rand(300, 200, seed=12)))
    finally:
        set_num_threads(before)
    assert np.array_equal(out[0], out[1])


def test_fine_tuning_reads_the_updated_weights():
    """Note [mutable constants]: the trainer's tail plans its Gemm weights as constants that SGD
    changes in place, so its forward must not keep a plan-time copy. Each step's loss is the loss
    of the weights the previous step left, which the tuned model's own forward recomputes."""
    rng = np.random.default_rng(0)
    k, n, batch = 48, 40, 64
    nodes = [helper.make_node("Gemm", ["x", "w", "b"], ["h"], transB=1),
             helper.make_node("Relu", ["h"], ["r"]),
             helper.make_node("Gemm", ["r", "w2", "b2"], ["y"], transB=1)]
    model = make_model(nodes, [("x", ["N", k])], [("y", None)],
                       {"w": (rng.standard_normal((n, k)) / np.sqrt(k)).astype(np.float32), "b": rand(n, seed=1),
                        "w2": (rng.standard_normal((10, n)) / np.sqrt(n)).astype(np.float32), "b2": rand(10, seed=2)})
    m = dnnx.load(model)
    x = rand(batch, k, seed=3)
    labels = rng.integers(0, 10, batch)
    tuner = m.finetune(trainable="all", lr=0.5, momentum=0.0)
    tuner.step(x, labels)
    logits = m.run(x)  # the tuned weights, through the inference engine (rebuilt with them)
    shifted = logits - logits.max(axis=1, keepdims=True)
    expected = float(np.mean(np.log(np.exp(shifted).sum(axis=1)) - shifted[np.arange(batch), labels]))
    assert tuner.step(x, labels) == pytest.approx(expected, rel=1e-4)
