// LSTMStack (ops/rnn/lstm_stack.h): its checks and output shapes, layer by layer through LSTM's own
// (ops/rnn/lstm.cc), so a stack accepts exactly what its LSTM nodes accepted.
#include "ops/rnn/lstm_stack.h"

#include "ops/op.h"

namespace dnnx {

std::vector<std::string> lstm_stack_layer_names(const Node& node) {
  node.expect_only_attrs({"hidden_size", "layer_names"});
  std::vector<std::string> names = node.attr_strings("layer_names", {});
  const size_t want_inputs = 1 + names.size() * kLstmStackInputsPerLayer;
  if (names.empty() || node.inputs.size() != want_inputs) {
    node_fail<InvalidModelError>(node, "expected X and W, R, B per layer (" + std::to_string(want_inputs) +
                                           " inputs for " + std::to_string(names.size()) + " layers), got " +
                                           std::to_string(node.inputs.size()) + " inputs");
  }
  if (node.attr_int("hidden_size", 0) <= 0) node_fail<InvalidModelError>(node, "hidden_size must be positive");
  return names;
}

LstmStackShape lstm_stack_shape(const Node& node, const std::vector<ValueInfo>& inputs) {
  const std::vector<std::string> names = lstm_stack_layer_names(node);
  LstmAttributes attrs;  // forward, layout 0, default activations: what the pass fuses
  attrs.hidden_size = node.attr_int("hidden_size", 0);
  LstmStackShape out;
  out.layers = static_cast<int64_t>(names.size());
  require_input(node, inputs, kLstmX, "X");
  ValueInfo x = inputs[kLstmX];
  for (size_t l = 0; l < names.size(); ++l) {
    // This layer's view: X, W, R, B in LSTM's positions, nothing else.
    std::vector<ValueInfo> layer(kLstmB + 1);
    layer[kLstmX] = x;
    for (LstmInput which : {kLstmW, kLstmR, kLstmB}) {
      const size_t i = lstm_stack_input(l, which);
      layer[which] = i < inputs.size() ? inputs[i] : ValueInfo{{}, nullptr, false};
    }
    LstmDims d;
    try {
      d = lstm_dims(node, attrs, layer);
    } catch (const InvalidModelError& e) {
      throw InvalidModelError(std::string(e.what()) + " (layer " + std::to_string(l) + ", from node '" + names[l] +
                              "')");
    }
    if (l == 0) out.dims = d;
    // The next layer reads this one's Y with the direction axis dropped: [seq, batch, H].
    x = ValueInfo{TensorInfo{{d.seq, d.batch, d.hidden}, DType::Float32}, nullptr, true};
  }
  return out;
}

void register_lstm_stack_ops(OpRegistry& r) {
  OpDef def;
  def.validate = [](const Node& node) { lstm_stack_layer_names(node); };
  def.infer = [](const Node& node, const std::vector<ValueInfo>& inputs) {
    const LstmDims d = lstm_stack_shape(node, inputs).dims;
    const Shape state{1, d.batch, d.hidden};
    return std::vector<TensorInfo>{
        {{d.seq, 1, d.batch, d.hidden}, DType::Float32}, {state, DType::Float32}, {state, DType::Float32}};
  };
  def.fused = true;
  r.add(kLstmStackOp, std::move(def));
}

}  // namespace dnnx
