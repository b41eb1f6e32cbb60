// com.microsoft's DynamicQuantizeLSTM, as onnxruntime's quantize_dynamic writes it for an LSTM:
// LSTM's attributes and its inputs 0 and 3-7 (X, B, sequence_lens, initial_h, initial_c, P), with
//   W  int8/uint8 [num_dir, input, 4H] (transposed from LSTM's [num_dir, 4H, input])
//   R  int8/uint8 [num_dir, H, 4H]
//   W_scale, R_scale float32 [num_dir] or [num_dir, 4H] (per tensor or per gate column),
//   W_zero_point, R_zero_point (W's and R's type, the scale's shape)
// and LSTM's outputs. Meaning (onnxruntime's kernel): X, and at each step H_{t-1}, quantized to
// uint8 as DynamicQuantizeLinear does, each over the whole matrix its product reads (X over every
// step and batch row at once, H_{t-1} over the batch); the products in int32; then
// float(sum) * (x_scale * w_scale) as X·W^T of LSTM, and likewise for H·R^T; LSTM's gates after.
// The kernel: backends/cpu/rnn/dynamic_quantize_lstm_cpu.cc.
#include "ops/quant/int_matmul.h"
#include "ops/rnn/dynamic_quantize_lstm.h"
#include "ops/rnn/rnn_common.h"

namespace dnnx {

namespace {

bool present(const std::vector<ValueInfo>& inputs, size_t i) { return i < inputs.size() && inputs[i].present; }

void expect(const Node& node, const TensorInfo& t, const Shape& want, const char* what) {
  if (t.shape != want) {
    node_fail<InvalidModelError>(node, std::string(what) + " has shape " + shape_str(t.shape) + ", expected " +
                                           shape_str(want));
  }
}

// A weight's scale and zero point: [num_dir] or [num_dir, 4H], float32 and the weight's type.
void check_params(const Node& node, const std::vector<ValueInfo>& inputs, size_t scale, size_t zp, DType weight,
                  const LstmDims& d, const char* what) {
  const TensorInfo& s = require_input(node, inputs, scale, (std::string(what) + "_scale").c_str());
  if (s.dtype != DType::Float32) node_fail<InvalidModelError>(node, std::string(what) + "_scale must be float32");
  const Shape per_tensor{d.num_dir}, per_column{d.num_dir, kDqLstmGates * d.hidden};
  if (s.shape != per_tensor && s.shape != per_column) {
    node_fail<InvalidModelError>(node, std::string(what) + "_scale has shape " + shape_str(s.shape) + ", expected " +
                                           shape_str(per_tensor) + " or " + shape_str(per_column));
  }
  if (!present(inputs, zp)) return;
  const TensorInfo& z = inputs[zp].info;
  if (z.dtype != weight) {
    node_fail<InvalidModelError>(node, std::string(what) + "_zero_point must have " + what + "'s type " +
                                           dtype_name(weight) + ", got " + dtype_name(z.dtype));
  }
  expect(node, z, s.shape, (std::string(what) + "_zero_point").c_str());
}

}  // namespace

LstmDims dynamic_quantize_lstm_dims(const Node& node, const LstmAttributes& attrs, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, kLstmX, "X");
  const TensorInfo& w = require_input(node, inputs, kLstmW, "W");
  const TensorInfo& r = require_input(node, inputs, kLstmR, "R");
  if (x.dtype != DType::Float32) node_fail<UnsupportedModelError>(node, std::string("X must be float32, got ") + dtype_name(x.dtype));
  require_int8_type(node, w, "W");
  require_int8_type(node, r, "R");
  if (x.shape.size() != 3) node_fail<InvalidModelError>(node, "X must have rank 3, got shape " + shape_str(x.shape));
  if (r.shape.size() != 3) node_fail<InvalidModelError>(node, "R must have rank 3, got shape " + shape_str(r.shape));
  if (attrs.layout != RnnLayout::SeqMajor) node_fail<InvalidModelError>(node, "DynamicQuantizeLSTM has no layout attribute");
  LstmDims d;
  d.seq = x.shape[0];
  d.batch = x.shape[1];
  d.input = x.shape[2];
  d.num_dir = attrs.num_directions();
  d.hidden = attrs.hidden_size > 0 ? attrs.hidden_size : r.shape[1];
  if (d.hidden <= 0) node_fail<InvalidModelError>(node, "hidden size must be positive, got " + std::to_string(d.hidden));
  const int64_t four_h = kDqLstmGates * d.hidden;
  expect(node, w, {d.num_dir, d.input, four_h}, "W");
  expect(node, r, {d.num_dir, d.hidden, four_h}, "R");
  const Shape state = rnn_state_shape(d, RnnLayout::SeqMajor);
  check_optional_rnn_input(node, inputs, kLstmB, {d.num_dir, 2 * four_h}, "input B");
  check_optional_rnn_input(node, inputs, kLstmInitialH, state, "input initial_h");
  check_optional_rnn_input(node, inputs, kLstmInitialC, state, "input initial_c");
  check_optional_rnn_input(node, inputs, kLstmP, {d.num_dir, 3 * d.hidden}, "input P");
  if (present(inputs, kLstmSequenceLens)) {
    const TensorInfo& lens = inputs[kLstmSequenceLens].info;
    if (lens.dtype != DType::Int32) node_fail<InvalidModelError>(node, "input sequence_lens must be int32");
    expect(node, lens, {d.batch}, "input sequence_lens");
  }
  check_params(node, inputs, kDqLstmWScale, kDqLstmWZeroPoint, w.dtype, d, "W");
  check_params(node, inputs, kDqLstmRScale, kDqLstmRZeroPoint, r.dtype, d, "R");
  return d;
}

void register_dynamic_quantize_lstm_ops(OpRegistry& r) {
  OpDef def;
  def.validate = [](const Node& node) { parse_lstm_attributes(node); };
  def.infer = [](const Node& node, const std::vector<ValueInfo>& inputs) {
    const LstmAttributes attrs = parse_lstm_attributes(node);
    const LstmDims d = dynamic_quantize_lstm_dims(node, attrs, inputs);
    const Shape state = rnn_state_shape(d, RnnLayout::SeqMajor);
    return std::vector<TensorInfo>{{rnn_y_shape(d, RnnLayout::SeqMajor), DType::Float32},
                                   {state, DType::Float32},
                                   {state, DType::Float32}};
  };
  def.min_opset = 1;
  r.add(op_key(kMicrosoftDomain, "DynamicQuantizeLSTM"), std::move(def));
}

}  // namespace dnnx
