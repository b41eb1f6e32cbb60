"""Empty tensors on CUDA (Note [empty tensors] in engine/runtime/planner.cc): every op the CUDA
backend registers, on the empty variants of its onnx node cases (tests/empty_cases.py; onnxruntime is not asked
here: the GPU machine's 1.30 dies on some cuts), at fp32 against the CPU backend (tests/test_empty_every_op.py checks
the CPU against onnxruntime); a layer whose outputs are all empty launches nothing, and one with
an empty input and a non-empty output runs on the host. Also an empty batch through LeNet and the
LSTM example, replayed from a CUDA graph, with host and device outputs."""
import numpy as np
import pytest

import dnnx
from dnnx.examples import build
from empty_cases import cases_by_op, empty_variants

CASES = cases_by_op()


@pytest.fixture(scope="module")
def cuda_ops():
    kernels = dnnx.load(build("lenet"), device="cuda").kernels()
    return sorted(op for op in kernels if "+" not in op and "@" not in op and op in CASES)


def test_every_cuda_op_with_an_empty_dim_matches_the_cpu(cuda_ops):
    ran = 0
    for op in cuda_ops:
        for case in CASES[op]:
            for label, model, names, feeds, _ in empty_variants(case, oracle=False):
                try:
                    want = dnnx.load(model).run_dict(dict(zip(names, feeds)))
                except (dnnx.DnnxError, ValueError):
                    continue  # an empty cut the CPU refuses, naming it (tests/test_empty_every_op.py)
                try:
                    gpu = dnnx.load(model, device="cuda", precision="fp32")
                except dnnx.UnsupportedModelError:
                    continue  # what CUDA refuses at load whatever the shapes (test_cuda_every_op.py)
                for _ in range(3):  # eager, captured, replayed
                    got = gpu.run_dict(dict(zip(names, feeds)))
                    for name, ref in want.items():
                        assert got[name].shape == ref.shape, f"{op} {case.name} ({label}) {name}"
                        np.testing.assert_allclose(got[name], ref, rtol=1e-4, atol=1e-5, equal_nan=True,
                                                   err_msg=f"{op} {case.name} ({label}) {name}")
                ran += 1
    assert ran


@pytest.mark.parametrize("precision", ["fp32", "tf32", "fp16", "bf16"])
def test_lenet_empty_batch_on_cuda(precision):
    m = dnnx.load(build("lenet"), device="cuda", precision=precision)
    x = np.zeros((0, 1, 28, 28), np.float32)
    for _ in range(3):
        assert m.run(x).shape == (0, 10)
    assert m.run(x, output="device").shape == (0, 10)
    assert m.memory(batch_size=0)["arena_bytes"] == 0
    assert all("nothing to run" in row["algorithm"] or "view" in row["algorithm"] for row in m.plan(batch_size=0))


def test_lstm_empty_batch_on_cuda():
    m = dnnx.load(build("lstm"), device="cuda")
    cpu = dnnx.load(build("lstm"))
    x = np.zeros((16, 0, 8), np.float32)
    for _ in range(3):
        np.testing.assert_array_equal(m.run(x), cpu.run(x))


def test_reduction_over_an_empty_axis_runs_on_the_host():
    from onnx import helper

    from ort_check import make_model

    model = make_model([helper.make_node("ReduceMax", ["x"], ["y"], axes=[1])], [("x", [2, "T", 3])], [("y", None)])
    m = dnnx.load(model, device="cuda")
    x = np.zeros((2, 0, 3), np.float32)
    assert np.all(m.run(x) == -np.inf)
    row = m.plan(inputs=x)[0]
    assert "empty input" in row["algorithm"], row
