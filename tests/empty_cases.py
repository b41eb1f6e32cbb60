"""Empty-tensor versions of the onnx package's node cases (Note [empty tensors] in
engine/runtime/planner.cc), shared by tests/test_empty_every_op.py (CPU against onnxruntime) and
tests/cuda/test_cuda_empty_every_op.py (CUDA against the CPU).

A case's data inputs are cut to an empty slice: all of them along axis 0 at once (an empty
batch), and each alone along its first and its last axis; the model then declares the cut shapes
(a fixed 0 dim, as an export at an empty batch has) and symbolic output dims. The inputs whose value
decides shapes (dnnx's ``Model.value_inputs``: a Reshape's shape, Slice's starts, ...) keep their
values. A variant counts where onnxruntime runs it; where onnxruntime refuses it (an op that needs
a non-empty axis: reflect padding, LayerNormalization over an empty axis), it is left out."""
from __future__ import annotations

import numpy as np
import onnx

import dnnx
from node_suite import as_array as _array
from node_suite import cases, ort_verdicts


def _selected_cases():
    """The node cases onnxruntime passes (dnnx's refusals among them are skipped per case)."""
    ort = ort_verdicts()
    return [c for c in cases() if ort.get(c.name) == "pass"]


def case_op(case):
    """The op key of a single-node case (Note [op domains]: "ai.onnx.ml::LabelEncoder" outside ai.onnx)."""
    if len(case.model.graph.node) != 1:
        return None
    node = case.model.graph.node[0]
    return node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}::{node.op_type}"


def cases_by_op() -> dict:
    """{op type: [single-node cases]} of the node suite that onnxruntime passes."""
    found = {}
    for case in _selected_cases():
        op = case_op(case)
        if op:
            found.setdefault(op, []).append(case)
    return found


def with_shapes(model, shapes: dict):
    """A copy of ``model`` whose graph inputs named in ``shapes`` declare those shapes (the empty
    ones' 0 dims fixed, as a model exported at an empty batch has them) and whose outputs keep
    their rank with symbolic dims (their sizes are the op's to say)."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    for vi in model.graph.input:
        if vi.name in shapes and vi.type.HasField("tensor_type"):
            vi.type.tensor_type.shape.ClearField("dim")
            for size in shapes[vi.name]:
                vi.type.tensor_type.shape.dim.add().dim_value = int(size)
    for vi in model.graph.output:
        if vi.type.HasField("tensor_type") and vi.type.tensor_type.HasField("shape"):
            for i, d in enumerate(vi.type.tensor_type.shape.dim):
                d.Clear()
                d.dim_param = f"{vi.name}_d{i}"
    del model.graph.value_info[:]
    return model


def _cut(array: np.ndarray, axis: int) -> np.ndarray:
    index = [slice(None)] * array.ndim
    index[axis] = slice(0, 0)
    return np.ascontiguousarray(array[tuple(index)])


def variants(feeds: list, data: list) -> list:
    """[(label, feeds)]: the empty versions of ``feeds``; ``data``: the indices of the inputs that
    may be cut (non-empty, rank >= 1, not value inputs)."""
    out = []
    if len(data) > 1:
        if len({feeds[i].shape[0] for i in data}) == 1:
            out.append(("all inputs, axis 0", [(_cut(f, 0) if i in data else f) for i, f in enumerate(feeds)]))
    for i in data:
        for axis in sorted({0, feeds[i].ndim - 1}):
            cut = list(feeds)
            cut[i] = _cut(feeds[i], axis)
            out.append((f"input {i}, axis {axis}", cut))
    return out


def ort_outputs(model, names, feeds):
    """onnxruntime's outputs for ``feeds`` ({name: array}), or None where it refuses them."""
    import onnxruntime as ort

    try:
        sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        return dict(zip([o.name for o in sess.get_outputs()], sess.run(None, dict(zip(names, feeds)))))
    except Exception:  # onnxruntime refuses this empty input (or this case at all): not a variant
        return None


# (op, input index): cuts where onnxruntime 1.32 is no oracle: the process aborts, or outputs are
# left uninitialized; tests/test_empty_tensors.py checks dnnx on them without it.
ORT_ABORTS = {
    ("GRU", 0): "a GRU over an empty sequence (X [0, N, I]) aborts onnxruntime's process",
    ("LSTM", 0): "an LSTM over an empty sequence: onnxruntime leaves Y_c uninitialized (reverse direction); over "
                 "an empty batch it aborts",
    ("RNN", 0): "an RNN over an empty sequence or batch: the same code paths as its LSTM's",
}


# Ops whose inputs share their batch: one input cut alone is an invalid model (dnnx refuses it,
# naming the shapes; onnxruntime does not check), so only the all-inputs cut applies.
SHARED_BATCH = {"Attention": "Q, K and V share the batch dim",
                "GatherND": "with batch_dims, data and indices share their leading dims"}


def empty_variants(case, oracle: bool = True) -> list:
    """[(label, model, input names, feeds, onnxruntime's outputs)] for ``case``: the variants that
    onnxruntime runs, each with a model that declares its inputs' shapes (the 0 dims included).
    ``oracle=False`` asks onnxruntime nothing (outputs None): every variant, for a test whose
    reference is dnnx's CPU backend. The GPU machine's onnxruntime (1.30) dies on some empty cuts
    that 1.32 runs, and a test must not die with it. A case with a sequence or optional input or
    output has none here (its values are not arrays to cut): tests/test_sequences.py runs empty
    sequences and empty tensors in sequences."""
    values = list(case.model.graph.input) + list(case.model.graph.output)
    if any(v.type.WhichOneof("value") not in (None, "tensor_type") for v in values):
        return []
    try:
        probe = dnnx.load(case.model)
        names = [spec.name for spec in probe.inputs]
        probe.run_dict({n: np.asarray(_array(v)) for n, v in zip(names, case.data_sets[0][0])})
    except dnnx.DnnxError:
        return []  # a case dnnx refuses whatever the shapes (tests/test_onnx_node_tests.py says why)
    found = []
    for inputs, _ in case.data_sets[:1]:
        feeds = [np.asarray(_array(v)) for v in inputs]
        data = [i for i, f in enumerate(feeds)
                if f.ndim >= 1 and f.size and names[i] not in probe.value_inputs]
        for label, cut in variants(feeds, data):
            if case_op(case) in SHARED_BATCH and not label.startswith("all inputs"):
                continue
            if any((case_op(case), i) in ORT_ABORTS and cut[i].size == 0 for i in range(len(cut))):
                continue
            model = with_shapes(case.model, {n: f.shape for n, f in zip(names, cut)})
            want = ort_outputs(model, names, cut) if oracle else None
            if want is not None or not oracle:
                found.append((label, model, names, cut, want))
    return found


__all__ = ["case_op", "cases_by_op", "empty_variants", "with_shapes"]
