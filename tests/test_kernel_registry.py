"""The CPU backend's kernel registrations as Model.kernels() shows them (runtime/kernel_registry.h,
KernelEntry): every op dnnx supports has a CPU kernel or is a view, and the capabilities are the
registered ones (the CPU kernels store float32; the bool-only ops no float type)."""
import pathlib

import pytest

import dnnx
from dnnx._native import core
from dnnx import support
from dnnx.examples import build

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_every_supported_op_has_a_cpu_kernel_or_is_a_view():
    kernels = dnnx.load(build("lenet")).kernels()
    views = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Dropout"}
    # Note [staged plans]: the engine runs the value-shaped ops (NonZero, Compress, If, Loop, Scan) itself
    staged = {op for op, d in core.op_definitions().items() if d["value_shaped"]}
    missing = [op for op in dnnx.supported_ops() if op not in kernels and op not in views and op not in staged]
    assert not missing, missing
    assert "Conv" in kernels and "Gemm+Relu" in kernels  # fused types register like the rest


def test_cpu_capabilities():
    kernels = dnnx.load(build("lenet")).kernels()
    bool_only = {"Not", "And", "Or", "Xor"}
    integer_only = {"BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot"}
    # Note [cpu dtypes]: the types beyond float32, int32, int64 and bool that a kernel takes
    string_only = {"StringConcat", "RegexFullMatch", "StringNormalizer"}
    assert all(caps["dtypes"] == [] if op in bool_only else caps["dtypes"] == ["string"] if op in string_only
               else ("float32" in caps["dtypes"]) != (op in integer_only) for op, caps in kernels.items())
    assert kernels["Conv"]["dtypes"] == ["float32"]  # float64/float16 Convs run it between conversions
    assert {"float64", "uint64", "int8"} <= set(kernels["Add"]["dtypes"])
    assert {"float8_e4m3fn", "int4", "bfloat16", "float16"} <= set(kernels["Transpose"]["dtypes"])
    assert set(kernels["Cast"]["dtypes"]) == set(kernels["Concat"]["dtypes"])  # every type
    # the CPU refuses two node forms, so the channels_last pass leaves those nodes as they are: a
    # training-mode BatchNormalization in its channels-last form (the batch statistics run in ONNX's
    # layout), and a channels-last Int8Conv of several groups or on a CPU without AVX-512 VNNI
    # (Note [int8 nhwc conv])
    assert sorted(op for op, caps in kernels.items() if caps["checks_nodes"]) == ["BatchNormalization@NHWC",
                                                                                 "Int8Conv@NHWC"]


def test_threads_module_is_reachable_from_the_package():
    assert dnnx.threads.get_num_threads() >= 1  # as the README shows: import dnnx; dnnx.threads...


# --- the gradient in the same registration, and the support matrix generated from it -----------

def test_gradients_are_registered_with_their_kernels():
    table = dnnx.support.kernel_table("cpu")
    for op in ["Conv", "Gemm", "Gemm+Relu", "MaxPool", "LSTM", "BatchNormalization", "Neg", "Concat"]:
        assert table[op]["gradient"], op
    for op in ["LpPool", "Round", "Cast"]:  # no gradient yet: a tail through them is refused
        assert not table[op]["gradient"], op


def test_trainability_checks_live_in_the_op_definitions():
    defs = dnnx._core.op_definitions()
    assert defs["BatchNormalization"]["trainability_check"] and defs["LSTM"]["trainability_check"]
    assert not defs["Conv"]["trainability_check"]
    assert defs["Reshape"]["view"] and not defs["Conv"]["view"]


def test_kernel_table_names_an_unknown_device():
    with pytest.raises(dnnx.DeviceError, match="tpu"):
        dnnx.support.kernel_table("tpu")


def test_docs_support_matrix_matches_the_cpu_registrations():
    """docs/operators.md's generated block says what the registrations say (CPU columns; the CUDA
    columns are checked on the GPU machine by tests/cuda/test_cuda_support_matrix.py). Stale:
    run python scripts/gen_operators.py."""
    text = (ROOT / "docs" / "operators.md").read_text()
    _, block, _ = support.split_document(text)
    documented = support.block_rows(block)
    expected = {row[0]: row for row in support.matrix_rows({"cpu": support.kernel_table("cpu")})}
    assert sorted(documented) == sorted(expected), "ops added or removed: regenerate docs/operators.md"
    for op, row in expected.items():
        assert documented[op]["opsets"] == row[1], op
        assert (documented[op]["CPU float types"], documented[op]["CPU gradient"]) == (row[2], row[3]), op
