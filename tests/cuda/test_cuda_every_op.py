"""Every op the CUDA backend registers, run against the CPU backend: the onnx package's node test
cases for that op (every case of tests/node_suite.py that the CPU runs), each loaded on both
backends at fp32 and compared. The op list comes from the CUDA backend's own registrations
(Model.kernels()), so a new CUDA op is tested here without a new test list; an op with no node
case fails test_every_registered_op_has_a_case until it gets one."""
import numpy as np
import onnx
import pytest

import dnnx
from dnnx.examples import build
from node_suite import as_array as _array
from node_suite import STORED_OUTPUT_DISPUTED, cases

CASES = cases()

# Registered op types no onnx node case covers, each with the test that does.
COVERED_ELSEWHERE = {
    "LSTMStack": "made by the fuse_lstm_stack pass, not an ONNX op: tests/cuda/test_cuda_lstm_stack.py",
    "MaxRoiPool": "onnx has no node case for it: tests/cuda/test_cuda_roi.py",
    "Int8Conv": "made by the fuse_qdq_int8 pass, not an ONNX op: tests/cuda/test_cuda_int8.py",
    "Int8Gemm": "made by the fuse_qdq_int8 pass, not an ONNX op: tests/cuda/test_cuda_int8.py",
    "Int8MatMul": "made by the fuse_qdq_int8 pass, not an ONNX op: tests/cuda/test_cuda_int8.py",
}


def case_op(case):
    return case.model.graph.node[0].op_type if len(case.model.graph.node) == 1 else None


@pytest.fixture(scope="module")
def cuda_ops():
    kernels = dnnx.load(build("lenet"), device="cuda").kernels()
    return {op for op in kernels if "+" not in op and "@" not in op}


def test_every_registered_op_has_a_case(cuda_ops):
    covered = {case_op(c) for c in CASES}
    missing = sorted(op for op in cuda_ops if op not in covered and op not in COVERED_ELSEWHERE)
    assert not missing, f"CUDA ops with no onnx node case here (add a case or a reason): {missing}"


@pytest.mark.parametrize("case", [c for c in CASES if case_op(c)], ids=lambda c: c.name)
def test_case_on_cuda_matches_cpu(case):
    # Every single-node case, the views and folded ops (no CUDA kernel) included: they must load
    # and give the CPU's outputs on a CUDA model too; shape-like inputs fed as graph inputs are
    # value inputs (their values join the plan key).
    for inputs, expected in case.data_sets:
        model, feeds = case.model, [_array(v) for v in inputs]
        try:
            cpu = dnnx.load(model)
        except dnnx.DnnxError as e:
            pytest.skip(f"the CPU refuses this case too (tests/test_onnx_node_tests.py lists why): {e}")
        try:
            gpu = dnnx.load(model, device="cuda", precision="fp32")
        except dnnx.UnsupportedModelError as e:
            # What CUDA refuses and the CPU runs (integer Max/Min, LSTM peepholes) waits for the
            # CPU fallback inside CUDA plans (the operators issue); the reason is reported.
            pytest.skip(f"CUDA refuses this case at load: {e}")
        names = [spec.name for spec in cpu.inputs]
        try:
            want = cpu.run_dict(dict(zip(names, feeds)))
        except dnnx.DnnxError as e:  # refused at run time on the CPU too (Dropout training at ratio > 0)
            pytest.skip(f"the CPU refuses this case's run too: {e}")
        got = gpu.run_dict(dict(zip(names, feeds)))
        assert want.keys() == got.keys()
        for name, ref in want.items():
            # fp32 on both; cuDNN may sum in another order (or by FFT / Winograd): the suite's own
            # tolerances against the expected data, and 1e-4 relative against the CPU.
            _assert_close(got[name], ref, 1e-4, 1e-5, f"{case.name}: {name}")
        if case.name in STORED_OUTPUT_DISPUTED:
            continue  # the stored outputs are disputed (tests/node_suite.py): the CPU's are the reference
        if not _matches(want.values(), expected, case):
            # This machine's onnx package stores other outputs than the pinned one (tests/requirements.txt)
            # that the CPU is checked against (tests/test_onnx_node_tests.py): CUDA matched the CPU above.
            pytest.skip(f"onnx {onnx.__version__} here stores outputs the CPU does not give; CUDA matches the CPU")
        for got_value, exp in zip(got.values(), expected):
            _assert_close(got_value, _array(exp), case.rtol, case.atol, case.name)


def _matches(values, expected, case) -> bool:
    try:
        for value, exp in zip(values, expected):
            _assert_close(value, _array(exp), case.rtol, case.atol, case.name)
    except AssertionError:
        return False
    return True


def _assert_close(got, want, rtol, atol, what):
    """Arrays, or sequences (lists of arrays of their own shapes: Note [sequences]) element by element."""
    if isinstance(want, (list, tuple)) or want is None:
        assert (got is None) == (want is None), what
        if want is not None:
            assert len(got) == len(want), what
            for g, w in zip(got, want):
                _assert_close(g, w, rtol, atol, what)
        return
    # An output declared float16 or bfloat16 is rounded to that type on both backends, from float32
    # on the device (python/dnnx/_edges.py) and from the CPU's own arithmetic in
    # that type: a value near a rounding boundary may land one unit apart, 2^-10 (float16) or 2^-7
    # (bfloat16) relative.
    want, got = np.asarray(want), np.asarray(got)
    if want.dtype.kind == "V" or want.dtype.name.startswith(("float8", "float4", "int4", "uint4")):
        # ml_dtypes' storage types: numpy's comparison does not take them; compare the values (as
        # tests/node_suite.py's assert_similar does)
        assert got.dtype == want.dtype, f"{what}: dtype {got.dtype}, expected {want.dtype}"
        got, want = got.astype(np.float32), want.astype(np.float32)
    # (the output's declared type decides: some onnx versions store a half case's expected data as float32)
    half_ulp = max({"float16": 2.0 ** -10, "bfloat16": 2.0 ** -7}.get(t.dtype.name, 0.0) for t in (want, got))
    np.testing.assert_allclose(np.asarray(got, np.float64) if half_ulp else got,
                               np.asarray(want, np.float64) if half_ulp else want,
                               rtol=max(rtol, 2 * half_ulp), atol=max(atol, half_ulp), err_msg=what)
