"""com.microsoft's DynamicQuantizeLSTM, as onnxruntime's quantize_dynamic writes it for an LSTM
(engine/backends/cpu/rnn/dynamic_quantize_lstm_cpu.cc: X and each step's H quantized to uint8,
int32 sums, then LSTM's gates): LSTMs of every direction, with sequence lengths, initial states
and the outputs in any subset, quantized with int8 and uint8 weights, per tensor and per column,
against onnxruntime's kernel at one thread (Note [dynamic lstm as onnxruntime]: with more threads
onnxruntime quantizes row blocks of the batch apart). Tolerance: 2/127 of the largest output, two
int8 steps; these cases measured 0 (the same bits), the zoo's bidirectional LSTM classifier
0 to 0.001."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import dnnx
from ort_check import ort_int8_exact, unsigned_weights

TOLERANCE = 2.0 / 127.0


def lstm_model(direction, hidden, inputs, seq, batch, with_lens, outputs):
    num_dir = 2 if direction == "bidirectional" else 1
    rng = np.random.default_rng(hidden * 7 + inputs)
    inits = [numpy_helper.from_array((rng.normal(size=(num_dir, 4 * hidden, inputs)) * 0.3).astype(np.float32), "W"),
             numpy_helper.from_array((rng.normal(size=(num_dir, 4 * hidden, hidden)) * 0.3).astype(np.float32), "R"),
             numpy_helper.from_array((rng.normal(size=(num_dir, 8 * hidden)) * 0.1).astype(np.float32), "B")]
    graph_inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [seq, batch, inputs])]
    names = ["x", "W", "R", "B", "", "h0", "c0"]
    graph_inputs += [helper.make_tensor_value_info(n, TensorProto.FLOAT, [num_dir, batch, hidden]) for n in ("h0", "c0")]
    if with_lens:
        names[4] = "lens"
        graph_inputs.append(helper.make_tensor_value_info("lens", TensorProto.INT32, [batch]))
    out_names = [n if n in outputs else "" for n in ("y", "y_h", "y_c")]
    while out_names[-1] == "":
        out_names.pop()
    node = helper.make_node("LSTM", names, out_names, direction=direction, hidden_size=hidden)
    shapes = {"y": [seq, num_dir, batch, hidden], "y_h": [num_dir, batch, hidden], "y_c": [num_dir, batch, hidden]}
    graph = helper.make_graph([node], "g", graph_inputs,
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, shapes[n]) for n in out_names if n],
                              inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])


def quantized(model, tmp_path, weight_type, per_channel):
    from onnxruntime.quantization import QuantType, quantize_dynamic

    src, dst = str(tmp_path / "lstm.onnx"), str(tmp_path / "lstm_q.onnx")
    onnx.save(model, src)
    quantize_dynamic(src, dst, weight_type={"int8": QuantType.QInt8, "uint8": QuantType.QUInt8}[weight_type],
                     per_channel=per_channel)
    return onnx.load(dst)


CASES = [("forward", 16, 8, 6, 3, False, ("y", "y_h", "y_c"), "int8", False),
         ("bidirectional", 20, 12, 7, 2, True, ("y", "y_h"), "int8", False),
         ("reverse", 8, 5, 9, 4, True, ("y_h", "y_c"), "uint8", False),
         ("bidirectional", 24, 16, 5, 1, False, ("y",), "uint8", False),
         ("forward", 12, 6, 4, 5, True, ("y", "y_c"), "int8", True),
         ("bidirectional", 16, 10, 6, 3, False, ("y", "y_h", "y_c"), "uint8", True)]


@pytest.mark.parametrize("direction, hidden, inputs, seq, batch, with_lens, outputs, weight_type, per_channel", CASES)
def test_dynamic_quantize_lstm_matches_onnxruntime(direction, hidden, inputs, seq, batch, with_lens, outputs, weight_type,
                                                   per_channel, tmp_path):
    import onnxruntime as ort

    model = quantized(lstm_model(direction, hidden, inputs, seq, batch, with_lens, outputs), tmp_path, weight_type,
                      per_channel)
    assert [n.op_type for n in model.graph.node if n.domain == "com.microsoft"] == ["DynamicQuantizeLSTM"]
    num_dir = 2 if direction == "bidirectional" else 1
    rng = np.random.default_rng(batch)
    feeds = {"x": rng.normal(size=(seq, batch, inputs)).astype(np.float32),
             "h0": (rng.normal(size=(num_dir, batch, hidden)) * 0.5).astype(np.float32),
             "c0": (rng.normal(size=(num_dir, batch, hidden)) * 0.5).astype(np.float32)}
    if with_lens:
        feeds["lens"] = rng.integers(0, seq + 1, size=batch).astype(np.int32)
        feeds["lens"][0] = seq  # the longest sequence reaches the end
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    # where onnxruntime's uint8 x int8 products saturate, its exact uint8 x uint8 ones on the same weights
    reference = model if ort_int8_exact() else unsigned_weights(model)
    sess = ort.InferenceSession(reference.SerializeToString(), options, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    want = dict(zip(names, sess.run(names, feeds)))
    m = dnnx.load(model)
    assert "int32 accumulation" in str(m.plan())
    got = m.run_dict(feeds)
    for name in names:
        assert got[name].shape == want[name].shape
        scale = float(np.max(np.abs(want[name]))) or 1.0
        err = float(np.max(np.abs(got[name].astype(np.float64) - want[name]))) / scale
        assert err <= TOLERANCE, f"{name}: {err:.4f} of the largest output apart"


def test_bad_weight_scale_shape_is_named(tmp_path):
    model = quantized(lstm_model("forward", 8, 4, 3, 2, False, ("y",)), tmp_path, "int8", False)
    scale = next(i for i in model.graph.initializer if i.name.endswith("_scale"))
    scale.CopyFrom(numpy_helper.from_array(np.ones(3, np.float32), scale.name))
    with pytest.raises(dnnx.InvalidModelError, match="_scale has shape"):
        dnnx.load(model)


@pytest.mark.parametrize("seq, batch", [(0, 2), (3, 0), (0, 0)])
def test_empty_sequence_or_batch(seq, batch, tmp_path):
    # Note [empty tensors]: empty outputs of the right shapes; a sequence of no steps ends in a zero
    # state (as LSTM's does). onnxruntime aborts on LSTMs of an empty sequence or batch, so the
    # expected values are written here.
    hidden = 6
    model = quantized(lstm_model("bidirectional", hidden, 4, 1, 1, False, ("y", "y_h", "y_c")), tmp_path, "int8", False)
    for value in list(model.graph.input):  # the dims made symbolic: seq and batch of any size
        for i, dim in enumerate(value.type.tensor_type.shape.dim):
            if value.name == "x" and i < 2 or value.name in ("h0", "c0") and i == 1:
                dim.dim_param = "S" if value.name == "x" and i == 0 else "B"
    for value in list(model.graph.output):
        dims = value.type.tensor_type.shape.dim
        if value.name == "y":
            dims[0].dim_param, dims[2].dim_param = "S", "B"
        else:
            dims[1].dim_param = "B"
    feeds = {"x": np.ones((seq, batch, 4), np.float32), "h0": np.ones((2, batch, hidden), np.float32),
             "c0": np.ones((2, batch, hidden), np.float32)}
    got = dnnx.load(model).run_dict(feeds)
    assert got["y"].shape == (seq, 2, batch, hidden)
    assert got["y_h"].shape == got["y_c"].shape == (2, batch, hidden)
    if seq == 0:
        assert not np.any(got["y_h"]) and not np.any(got["y_c"])


def test_a_sequence_length_out_of_range_names_the_node(tmp_path):
    model = quantized(lstm_model("forward", 8, 4, 3, 2, True, ("y",)), tmp_path, "int8", False)
    feeds = {"x": np.zeros((3, 2, 4), np.float32), "h0": np.zeros((1, 2, 8), np.float32),
             "c0": np.zeros((1, 2, 8), np.float32), "lens": np.array([3, 4], np.int32)}
    with pytest.raises(ValueError, match=r"DynamicQuantizeLSTM.*sequence_lens\[1\] is 4, expected a value in \[0, 3\]"):
        dnnx.load(model).run_dict(feeds)
