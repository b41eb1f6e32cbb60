// LSTM (ONNX opsets 7 and later; `layout` from opset 14): attributes, input checks and output
// shapes. The backends' kernels read the parsed form (ops/rnn/lstm_attrs.h).
#include "ops/op.h"
#include "ops/rnn/lstm_attrs.h"
#include "ops/rnn/rnn_common.h"

namespace dnnx {

namespace {

constexpr int64_t kGates = 4;     // i, o, f, c
constexpr int64_t kPeepholes = 3; // i, o, f

// The only activations dnnx runs: f = Sigmoid, g = Tanh, h = Tanh, for every direction.
const char* const kDefaultActivations[] = {"Sigmoid", "Tanh", "Tanh"};

void check_activations(const Node& node, int64_t num_dir) {
  const std::vector<std::string> acts = node.attr_strings("activations", {});
  bool defaults = acts.empty() || static_cast<int64_t>(acts.size()) == 3 * num_dir;
  for (size_t i = 0; defaults && i < acts.size(); ++i) {
    defaults = same_activation_name(acts[i], kDefaultActivations[i % 3]);
  }
  if (!defaults) {
    node_fail<UnsupportedModelError>(node, "activations [" + joined_names(acts) +
                                               "] are not supported (supported: the defaults "
                                               "Sigmoid, Tanh, Tanh for each direction)");
  }
  refuse_activation_parameters(node);
}

}  // namespace

LstmAttributes parse_lstm_attributes(const Node& node) {
  node.expect_only_attrs({"activation_alpha", "activation_beta", "activations", "clip", "direction",
                          "hidden_size", "input_forget", "layout"});
  LstmAttributes a;
  a.direction = parse_rnn_direction(node);
  check_activations(node, a.num_directions());

  a.hidden_size = parse_rnn_hidden_size(node);
  a.layout = parse_rnn_layout(node);
  parse_rnn_clip(node, &a.has_clip, &a.clip);

  const int64_t input_forget = node.attr_int("input_forget", 0);
  if (input_forget != 0 && input_forget != 1) {
    node_fail<InvalidModelError>(node, "input_forget must be 0 or 1, got " +
                                           std::to_string(input_forget));
  }
  a.input_forget = input_forget == 1;
  return a;
}

LstmDims lstm_dims(const Node& node, const LstmAttributes& attrs, const std::vector<ValueInfo>& inputs) {
  const LstmDims d = rnn_dims(node, attrs.layout, attrs.num_directions(), attrs.hidden_size, kGates, inputs);
  check_optional_rnn_input(node, inputs, kLstmInitialC, rnn_state_shape(d, attrs.layout), "input initial_c");
  check_optional_rnn_input(node, inputs, kLstmP, {d.num_dir, kPeepholes * d.hidden}, "input P");
  return d;
}

void register_lstm_ops(OpRegistry& r) {
  OpDef def;
  def.validate = [](const Node& node) { parse_lstm_attributes(node); };
  def.infer = [](const Node& node, const std::vector<ValueInfo>& inputs) {
    const LstmAttributes attrs = parse_lstm_attributes(node);
    const LstmDims d = lstm_dims(node, attrs, inputs);
    const Shape y = rnn_y_shape(d, attrs.layout);
    const Shape state = rnn_state_shape(d, attrs.layout);
    const DType t = inputs[kLstmX].info.dtype;  // float32, or float16 under precision="fp16"
    return std::vector<TensorInfo>{{y, t}, {state, t}, {state, t}};
  };
  def.min_opset = 7;
  // Backpropagation through time, as both backends run it, has no clip, no coupled input and
  // forget gates and one sequence length.
  def.untrainable = [](const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<bool>&) {
    const LstmAttributes attrs = parse_lstm_attributes(node);
    if (attrs.has_clip) return std::string("training an LSTM with clip is not supported");
    if (attrs.input_forget) return std::string("training an LSTM with input_forget is not supported");
    if (kLstmSequenceLens < inputs.size() && inputs[kLstmSequenceLens].present) {
      return std::string("training an LSTM with sequence_lens is not supported (pad the sequences to one length, "
                         "or drop the input)");
    }
    return std::string();
  };
  r.add("LSTM", std::move(def));
}

}  // namespace dnnx
