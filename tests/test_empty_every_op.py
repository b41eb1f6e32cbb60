"""Empty tensors through every op the CPU backend registers (Note [empty tensors] in
engine/runtime/planner.cc): each op's onnx node cases (tests/test_onnx_node_tests.py's selection)
run with an empty dim, as tests/empty_cases.py makes them, and must give onnxruntime's outputs
(empty ones, or a reduction's identity over an empty axis, MatMul's zeros for K = 0, ...). The op
list comes from the op registry and the CPU backend's registrations, so an op added later is tested here with no list
to edit; one with no node case, or none that onnxruntime runs empty, needs a reason below."""
import numpy as np
import pytest

import dnnx
from dnnx.examples import build
from empty_cases import cases_by_op, empty_variants

CASES = cases_by_op()

# Ops without an empty variant onnxruntime runs here, each with why and where empty tensors are
# covered instead.
NO_EMPTY_VARIANT = {
    **{op: "a fused op of the fuse_qdq_int8 pass, no ONNX op: an empty batch against onnxruntime is in "
           "tests/test_qdq_int8.py" for op in ("Int8Conv", "Int8Gemm", "Int8MatMul")},
    "NonMaxSuppression": "its cases' empty variants empty the one-value inputs (max_output_boxes_per_class, "
                         "iou_threshold, score_threshold), which onnxruntime reads past (undefined results) and dnnx "
                         "refuses by name; zero boxes against onnxruntime are in tests/test_value_shaped_ops.py",
    "Unique": "an empty variant of its cases aborts onnxruntime's process; tests/test_value_shaped_ops.py checks "
              "dnnx's empty results",
    "StringNormalizer": "onnxruntime refuses an empty input (\"Single dimension value must be greater than 0\"); "
                        "dnnx returns an empty output (tests/test_string_tensors.py)",
    "If": "its node cases read a scalar cond and constants: no dim to empty; branches giving empty values are in "
          "tests/test_control_flow.py",
    "Scan": "onnxruntime runs none of its cases with an empty dim; an empty sequence is in tests/test_control_flow.py",
    "ConstantOfShape": "its one input is a shape (a value input): an empty output from shape [0, 3] is in "
                       "tests/test_empty_tensors.py",
    "Range": "its inputs are scalars (value inputs): an empty range is in tests/test_empty_tensors.py",
    "GRU": "onnxruntime aborts on an empty sequence or batch (empty_cases.ORT_ABORTS); an empty batch and an "
           "empty sequence are checked in tests/test_empty_tensors.py without it",
    "LSTM": "onnxruntime is no oracle for an empty sequence or batch (empty_cases.ORT_ABORTS); checked in "
            "tests/test_empty_tensors.py without it",
    "RNN": "as LSTM",
    "com.microsoft::DynamicQuantizeLSTM": "a com.microsoft op with no onnx node case; as LSTM, onnxruntime is no "
                                          "oracle for an empty sequence or batch: checked in "
                                          "tests/test_dynamic_quantize_lstm.py without it",
    "GroupNormalization": "onnxruntime refuses every empty variant of its cases; an empty batch is in "
                          "tests/test_empty_tensors.py",
    **{op: "its inputs are scalars (a size, a bin count): no dim to empty" for op in
       ("BlackmanWindow", "HammingWindow", "HannWindow", "MelWeightMatrix")},
    **{op: "no single-node case of it that onnxruntime passes (the DFT and STFT cases need a signal of at least "
           "one frame); tests/test_nn_sampling_ops.py covers the op" for op in ("DFT", "STFT")},
    **{op: "onnxruntime refuses every empty variant of its cases" for op in
       ("AffineGrid", "DeformConv", "SoftmaxCrossEntropyLoss")},
    **{op: "onnxruntime passes none of its node cases; tests/test_quant_linear.py runs it with an empty dim against "
           "onnxruntime" for op in ("QuantizeLinear", "DequantizeLinear")},
    **{f"com.microsoft::{op}": "a contrib op: onnx has no node case of it; tests/test_quant_microsoft.py runs it "
                               "with an empty dim against onnxruntime"
       for op in ("QGemm", "QLinearAdd", "QLinearGlobalAveragePool", "QLinearLeakyRelu", "QLinearMul",
                  "QLinearSigmoid", "QLinearConcat", "MatMulIntegerToFloat", "DynamicQuantizeMatMul",
                  "QLinearAveragePool", "QLinearSoftmax")},
    "RoiAlign": "its node cases are opset 22, which onnxruntime lacks: an empty roi list and zero channels "
                "against onnxruntime are in tests/test_roi_ops.py",
    **{f"ai.onnx.ml::{op}": "onnx has no node case of it: tests/test_ml_ops.py runs it with an empty dim against "
                            "onnxruntime" for op in ("Scaler", "Normalizer")},
    "MaxRoiPool": "no onnx node case: an empty roi list and zero channels against onnxruntime are in "
                  "tests/test_roi_ops.py",
    **{op: "a sequence or optional op (Note [sequences]): its node cases' values are sequences or optionals, not "
           "arrays to cut; empty sequences and empty tensors in sequences against onnxruntime are in "
           "tests/test_sequences.py" for op in
       ("SequenceEmpty", "SequenceConstruct", "SequenceAt", "SequenceInsert", "SequenceErase", "SequenceLength",
        "SplitToSequence", "ConcatFromSequence", "SequenceMap", "Optional", "OptionalHasElement",
        "OptionalGetElement")},
}


def cpu_ops() -> list:
    """Every op of the registry (the views included) and every op the CPU backend registers."""
    kernels = dnnx.load(build("lenet")).kernels()
    return sorted(set(dnnx.supported_ops()) | {op for op in kernels if "+" not in op and "@" not in op})


def _compare(op, label, got, want):
    assert set(got) == set(want), f"{op} ({label}): outputs {sorted(got)} != {sorted(want)}"
    for name, ref in want.items():
        assert got[name].shape == ref.shape, f"{op} ({label}) {name}: shape {got[name].shape} != {ref.shape}"
        assert got[name].dtype == ref.dtype, f"{op} ({label}) {name}: dtype {got[name].dtype} != {ref.dtype}"
        if ref.dtype == object:  # strings
            assert got[name].tolist() == ref.tolist(), f"{op} ({label}) {name}"
            continue
        np.testing.assert_allclose(got[name], ref, rtol=1e-4, atol=1e-5, equal_nan=True,
                                   err_msg=f"{op} ({label}) {name}")


@pytest.mark.parametrize("op", [op for op in cpu_ops() if op not in NO_EMPTY_VARIANT])
def test_op_with_an_empty_dim_matches_onnxruntime(op):
    assert op in CASES, f"{op}: the CPU backend registers it, but no onnx node case covers it (add one to " \
                        f"tests/test_onnx_node_tests.py's IN_SCOPE, or a reason to NO_EMPTY_VARIANT)"
    ran = 0
    for case in CASES[op]:
        for label, model, names, feeds, want in empty_variants(case):
            got = dnnx.load(model).run_dict(dict(zip(names, feeds)))
            _compare(f"{op}: {case.name}", label, got, want)
            ran += 1
    assert ran, f"{op}: onnxruntime runs none of its node cases with an empty dim (give a reason in NO_EMPTY_VARIANT)"


def test_reasons_are_given():
    assert all(NO_EMPTY_VARIANT.values())
