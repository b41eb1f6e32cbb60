// GRU and RNN (ONNX opsets 7 and later; `layout` from opset 14): attributes, input checks and
// output shapes. The backends' kernels read the parsed form (ops/rnn/recurrent_attrs.h).
#include "ops/op.h"
#include "ops/rnn/recurrent_attrs.h"
#include "ops/rnn/rnn_common.h"

namespace dnnx {

namespace {

// GRU: the only activations dnnx runs are f = Sigmoid, g = Tanh for every direction.
void check_gru_activations(const Node& node, int64_t num_dir) {
  const std::vector<std::string> acts = node.attr_strings("activations", {});
  bool defaults = acts.empty() || static_cast<int64_t>(acts.size()) == 2 * num_dir;
  for (size_t i = 0; defaults && i < acts.size(); ++i) {
    defaults = same_activation_name(acts[i], i % 2 ? "Tanh" : "Sigmoid");
  }
  if (!defaults) {
    node_fail<UnsupportedModelError>(node, "activations [" + joined_names(acts) +
                                               "] are not supported (supported: the defaults Sigmoid, Tanh "
                                               "for each direction)");
  }
}

// RNN: one activation per direction (one given for a bidirectional node serves both), each
// Tanh, Relu or Sigmoid; Tanh when the attribute is absent.
std::vector<RecurrentActivation> parse_rnn_activations(const Node& node, int64_t num_dir) {
  const std::vector<std::string> acts = node.attr_strings("activations", {"Tanh"});
  if (static_cast<int64_t>(acts.size()) != num_dir && acts.size() != 1) {
    node_fail<InvalidModelError>(node, "activations has " + std::to_string(acts.size()) +
                                           " entries, expected " + std::to_string(num_dir) +
                                           " (one per direction)");
  }
  std::vector<RecurrentActivation> out;
  for (int64_t dir = 0; dir < num_dir; ++dir) {
    const std::string& a = acts[acts.size() == 1 ? 0 : dir];
    if (same_activation_name(a, "Tanh")) out.push_back(RecurrentActivation::Tanh);
    else if (same_activation_name(a, "Relu")) out.push_back(RecurrentActivation::Relu);
    else if (same_activation_name(a, "Sigmoid")) out.push_back(RecurrentActivation::Sigmoid);
    else node_fail<UnsupportedModelError>(node, "activation '" + a + "' is not supported (supported: Tanh, Relu, "
                                                                     "Sigmoid)");
  }
  return out;
}

const char* cell_name(const RecurrentAttributes& a) { return a.cell == RecurrentCell::Gru ? "a GRU" : "an RNN"; }

}  // namespace

RecurrentAttributes parse_recurrent_attributes(const Node& node) {
  RecurrentAttributes a;
  a.cell = node.op_type == "GRU" ? RecurrentCell::Gru : RecurrentCell::Rnn;
  if (a.cell == RecurrentCell::Gru) {
    node.expect_only_attrs({"activation_alpha", "activation_beta", "activations", "clip", "direction",
                            "hidden_size", "layout", "linear_before_reset"});
  } else {
    node.expect_only_attrs({"activation_alpha", "activation_beta", "activations", "clip", "direction",
                            "hidden_size", "layout"});
  }
  a.direction = parse_rnn_direction(node);
  if (a.cell == RecurrentCell::Gru) {
    check_gru_activations(node, a.num_directions());
  } else {
    a.activations = parse_rnn_activations(node, a.num_directions());
  }
  refuse_activation_parameters(node);
  a.hidden_size = parse_rnn_hidden_size(node);
  a.layout = parse_rnn_layout(node);
  parse_rnn_clip(node, &a.has_clip, &a.clip);

  const int64_t lbr = node.attr_int("linear_before_reset", 0);
  if (lbr != 0 && lbr != 1) {
    node_fail<InvalidModelError>(node, "linear_before_reset must be 0 or 1, got " + std::to_string(lbr));
  }
  a.linear_before_reset = lbr == 1;
  return a;
}

LstmDims recurrent_dims(const Node& node, const RecurrentAttributes& attrs, const std::vector<ValueInfo>& inputs) {
  return rnn_dims(node, attrs.layout, attrs.num_directions(), attrs.hidden_size, attrs.gates(), inputs);
}

void register_recurrent_ops(OpRegistry& r) {
  OpDef def;
  def.validate = [](const Node& node) { parse_recurrent_attributes(node); };
  def.infer = [](const Node& node, const std::vector<ValueInfo>& inputs) {
    const RecurrentAttributes attrs = parse_recurrent_attributes(node);
    const LstmDims d = recurrent_dims(node, attrs, inputs);
    const Shape y = rnn_y_shape(d, attrs.layout);
    const Shape state = rnn_state_shape(d, attrs.layout);
    const DType t = inputs[kRecX].info.dtype;  // float32, or float16 under precision="fp16"
    return std::vector<TensorInfo>{{y, t}, {state, t}};
  };
  def.min_opset = 7;
  // Backpropagation through time, as the backends run it, has no clip and one sequence length.
  def.untrainable = [](const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<bool>&) {
    const RecurrentAttributes attrs = parse_recurrent_attributes(node);
    if (attrs.has_clip) return std::string("training ") + cell_name(attrs) + " with clip is not supported";
    if (kRecSequenceLens < inputs.size() && inputs[kRecSequenceLens].present) {
      return std::string("training ") + cell_name(attrs) +
             " with sequence_lens is not supported (pad the sequences to one length, or drop the input)";
    }
    return std::string();
  };
  r.add("GRU", def);
  r.add("RNN", std::move(def));
}

}  // namespace dnnx
