#include "backends/cuda/rnn/recurrent_cells.h"

namespace dnnx::cuda {

namespace {

const char* activation_name(RecurrentActivation a) {
  switch (a) {
    case RecurrentActivation::Sigmoid: return "Sigmoid";
    case RecurrentActivation::Tanh: return "Tanh";
    case RecurrentActivation::Relu: return "Relu";
  }
  return "?";
}

std::string unsupported_reason(const RecurrentAttributes& a) {
  const bool gru = a.cell == RecurrentCell::Gru;
  if (a.has_clip) {
    return std::string("attribute 'clip' is not supported on CUDA: cuDNN's ") + (gru ? "GRU" : "RNN") +
           " cannot clip";
  }
  if (gru) {
    if (!a.linear_before_reset) {
      return "linear_before_reset=0 is not supported on CUDA: cuDNN's GRU applies the reset gate after the "
             "recurrent matrix (linear_before_reset=1)";
    }
    return "";
  }
  for (RecurrentActivation f : a.activations) {
    if (f == RecurrentActivation::Sigmoid) {
      return "activation Sigmoid is not supported on CUDA: cuDNN's RNN cell is Tanh or Relu";
    }
  }
  if (a.activations.size() == 2 && a.activations[0] != a.activations[1]) {
    return std::string("different activations per direction (") + activation_name(a.activations[0]) + ", " +
           activation_name(a.activations[1]) + ") are not supported on CUDA: cuDNN's bidirectional RNN runs one cell "
           "both ways";
  }
  return "";
}

}  // namespace

std::string recurrent_unsupported_reason(const Node& node) {
  return unsupported_reason(parse_recurrent_attributes(node));
}

RnnNode recurrent_rnn_node(const Node& node, const std::vector<ValueInfo>& inputs, size_t outputs) {
  const RecurrentAttributes attrs = parse_recurrent_attributes(node);
  const std::string why = unsupported_reason(attrs);
  if (!why.empty()) node_fail<UnsupportedModelError>(node, why);
  RnnNode rnn;
  if (attrs.cell == RecurrentCell::Gru) {
    rnn.cell = kGruCell;
  } else {
    rnn.cell = attrs.activations.at(0) == RecurrentActivation::Relu ? kRnnReluCell : kRnnTanhCell;
  }
  rnn.form = RnnForm{attrs.direction, attrs.layout};
  rnn.dims = recurrent_dims(node, attrs, inputs);
  rnn.has = rnn_presence(node, inputs, outputs);
  return rnn;
}

}  // namespace dnnx::cuda
