// "LSTMStack": a chain of single-layer, forward, seq-major LSTMs with the direction axis dropped
// between them, made by the fuse_lstm_stack pass (runtime/passes) for a backend that runs the whole
// stack in one call (cuDNN: one cudnnRNNForward with numLayers = layers).
//
// Inputs: X [seq, batch, I], then per layer l the LSTM's W, R, B at lstm_stack_input(l, ...):
//   W_l [1, 4H, I] for l = 0 and [1, 4H, H] after, R_l [1, 4H, H], B_l [1, 8H] ("" when absent).
// Outputs: the last layer's Y [seq, 1, batch, H], Y_h and Y_c [1, batch, H] (ops/rnn/lstm_attrs.h).
// Attributes: hidden_size (H) and layer_names (the fused LSTM nodes, first to last, for the plan).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "ops/rnn/lstm_attrs.h"

namespace dnnx {

constexpr const char* kLstmStackOp = "LSTMStack";
constexpr size_t kLstmStackInputsPerLayer = 3;  // W, R, B

// Where layer `layer`'s input `which` (kLstmW, kLstmR or kLstmB) is among the node's inputs.
constexpr size_t lstm_stack_input(size_t layer, LstmInput which) {
  return 1 + layer * kLstmStackInputsPerLayer + (which - kLstmW);
}

struct LstmStackShape {
  int64_t layers = 0;
  LstmDims dims;  // seq, batch, hidden and num_dir (1) of every layer; `input` is layer 0's
};

// The fused LSTM nodes' names, checked to be one per layer (InvalidModelError otherwise).
std::vector<std::string> lstm_stack_layer_names(const Node& node);

// Checks every layer's inputs as its own LSTM node would (the layer named in the message).
LstmStackShape lstm_stack_shape(const Node& node, const std::vector<ValueInfo>& inputs);

}  // namespace dnnx
