// LabelEncoder's table, read once from a node's attributes (ops/ml/label_encoder.cc has the
// semantics) and handed to its kernel (backends/cpu/ml/label_encoder_cpu.cc).
#pragma once
#include <string>
#include <vector>

#include "ir/graph.h"

namespace dnnx {

// keys[i] -> values[i]; each side in the vector of its type: strings (String), ints (Int64; values
// also Int16) or
// numbers (Float32, Float64: float32 values held exactly as doubles).
struct LabelTable {
  DType key_type = DType::String;
  DType value_type = DType::Int64;
  std::vector<std::string> key_strings, value_strings;
  std::vector<int64_t> key_ints, value_ints;
  std::vector<double> key_numbers, value_numbers;
  // What an input that no key matches becomes, in the member of value_type.
  std::string default_string;
  int64_t default_int = 0;
  double default_number = 0;
  bool nan_matches_nan = false;  // opset 4: a NaN key matches a NaN input (before: nothing matches NaN)
  size_t size() const;
};

// The table of `node` for an input X of type `x_type`; InvalidModelError / UnsupportedModelError
// naming the attribute that does not fit.
LabelTable label_table(const Node& node, DType x_type);

}  // namespace dnnx
