// Attribute readers shared by the ai.onnx.ml ops (Note [op domains] in ir/graph.h), whose
// attributes come in two forms: a list (keys_floats, nodes_values) or, from LabelEncoder 4 and
// TreeEnsemble 5 on, a tensor (keys_tensor, nodes_splits) that carries its own element type.
#pragma once
#include <string>
#include <vector>

#include "ir/graph.h"

namespace dnnx {

constexpr const char kMlDomain[] = "ai.onnx.ml";

// The tensor attribute `name`, or nullptr when the node has none; InvalidModelError naming it
// when it is another kind of attribute.
const ConstTensor* attr_tensor(const Node& node, const std::string& name);

// A tensor attribute's elements as doubles (any floating or integer type; float32 and float16
// values convert exactly) or as strings; InvalidModelError naming the attribute for another type.
std::vector<double> tensor_doubles(const Node& node, const ConstTensor& t, const std::string& name);
std::vector<int64_t> tensor_ints(const Node& node, const ConstTensor& t, const std::string& name);
std::vector<std::string> tensor_strings(const Node& node, const ConstTensor& t, const std::string& name);

}  // namespace dnnx
