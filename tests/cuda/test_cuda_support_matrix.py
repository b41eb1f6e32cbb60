"""The CUDA columns of docs/operators.md's support matrix say what the CUDA backend registers
(the CPU columns: tests/test_kernel_registry.py). Stale: run python scripts/gen_operators.py on a
machine with a GPU."""
import pathlib

from dnnx import support

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent


def test_docs_support_matrix_matches_the_cuda_registrations():
    _, block, _ = support.split_document((ROOT / "docs" / "operators.md").read_text())
    documented = support.block_rows(block)
    cuda = support.kernel_table("cuda")
    for row in support.matrix_rows({"cuda": cuda}):
        op = row[0]
        assert (documented[op]["CUDA float types"], documented[op]["CUDA gradient"]) == (row[2], row[3]), op


def test_cuda_gradients_are_registered_with_their_kernels():
    cuda = support.kernel_table("cuda")
    for op in ["Conv", "Gemm", "MaxPool", "LSTM", "LSTMStack", "BatchNormalization", "Neg"]:
        assert cuda[op]["gradient"], op
    assert cuda["Neg"]["dtypes"] == ["float32", "float16", "bfloat16"]
    for op in ("LSTM", "GRU", "RNN"):  # cuDNN's RNNs take no bfloat16 (cuda_kernels.h)
        assert cuda[op]["dtypes"] == ["float32", "float16"], op
