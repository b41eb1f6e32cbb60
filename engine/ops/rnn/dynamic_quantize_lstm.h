// com.microsoft's DynamicQuantizeLSTM (ops/rnn/dynamic_quantize_lstm.cc has its meaning): its
// input positions past LSTM's and its sizes, shared with the CPU kernel.
#pragma once
#include <cstddef>
#include <vector>

#include "ops/rnn/lstm_attrs.h"

namespace dnnx {

constexpr int64_t kDqLstmGates = 4;  // i, o, f, c
// Inputs 0-7 as LSTM's (LstmInput), W and R quantized; then the weights' parameters.
enum DqLstmInput : size_t {
  kDqLstmWScale = 8,
  kDqLstmWZeroPoint = 9,
  kDqLstmRScale = 10,
  kDqLstmRZeroPoint = 11,
};

// The sizes, every input checked (InvalidModelError naming the input and both shapes).
LstmDims dynamic_quantize_lstm_dims(const Node& node, const LstmAttributes& attrs, const std::vector<ValueInfo>& inputs);

}  // namespace dnnx
