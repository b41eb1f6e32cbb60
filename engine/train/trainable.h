// Which parameters a fine-tuning run trains: "last:N" (the parameters of the last N
// parameterised layers), "all" (of every parameterised layer) or an explicit list of names.
// A parameterised layer is a Conv, ConvTranspose, Gemm, MatMul, LSTM, GRU or RNN whose weight is a constant: its
// parameters are its constant float inputs (and, for a MatMul, the constant bias of the Add
// that alone reads its output: the two nodes PyTorch exports for a Linear layer).
#pragma once
#include <string>
#include <vector>

#include "ir/graph.h"

namespace dnnx {

struct ParamLayer {
  std::string node;                 // the layer's node name
  std::vector<std::string> params;  // its constants, in input order
};

// Every parameterised layer, in graph order.
std::vector<ParamLayer> parameterised_layers(const Graph& graph);

// The parameter names `spec` selects ("last:N" or "all"), or InputError naming `trainable`.
std::vector<std::string> select_parameters(const Graph& graph, const std::string& spec);

// Checks an explicit list: every name a float32 constant that some node reads (InputError
// naming `trainable` and the name otherwise); returns the names without duplicates.
std::vector<std::string> check_parameters(const Graph& graph, const std::vector<std::string>& names);

}  // namespace dnnx
