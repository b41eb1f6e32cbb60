#include "ir/graph.h"

#include <algorithm>

namespace dnnx {

std::string op_key(const std::string& domain, const std::string& op_type) {
  if (domain.empty() || domain == "ai.onnx") return op_type;
  return domain + "::" + op_type;
}

std::string Node::where() const { return "node '" + name + "' (" + op_key() + ")"; }

namespace {

template <class T>
const char* kind_name() {
  if constexpr (std::is_same_v<T, int64_t>) return "an int";
  else if constexpr (std::is_same_v<T, float>) return "a float";
  else if constexpr (std::is_same_v<T, std::string>) return "a string";
  else if constexpr (std::is_same_v<T, std::vector<int64_t>>) return "a list of ints";
  else if constexpr (std::is_same_v<T, std::vector<float>>) return "a list of floats";
  else if constexpr (std::is_same_v<T, std::vector<std::string>>) return "a list of strings";
  else if constexpr (std::is_same_v<T, ConstTensorPtr>) return "a tensor";
  else return "a graph";
}

template <class T>
T get_attr(const Node& node, const std::string& key, const T& fallback) {
  auto it = node.attrs.find(key);
  if (it == node.attrs.end()) return fallback;
  if (const T* v = std::get_if<T>(&it->second)) return *v;
  // ONNX writes an empty list without a type; accept an empty list of either kind.
  if constexpr (std::is_same_v<T, std::vector<float>>) {
    if (auto* ints = std::get_if<std::vector<int64_t>>(&it->second); ints && ints->empty()) return {};
  }
  if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
    if (auto* fl = std::get_if<std::vector<float>>(&it->second); fl && fl->empty()) return {};
  }
  node_fail<InvalidModelError>(node, "attribute '" + key + "' must be " + kind_name<T>());
}

}  // namespace

int64_t Node::attr_int(const std::string& key, int64_t fallback) const {
  return get_attr<int64_t>(*this, key, fallback);
}
float Node::attr_float(const std::string& key, float fallback) const {
  return get_attr<float>(*this, key, fallback);
}
std::string Node::attr_string(const std::string& key, const std::string& fallback) const {
  return get_attr<std::string>(*this, key, fallback);
}
std::vector<int64_t> Node::attr_ints(const std::string& key,
                                     const std::vector<int64_t>& fallback) const {
  return get_attr<std::vector<int64_t>>(*this, key, fallback);
}
std::vector<float> Node::attr_floats(const std::string& key,
                                     const std::vector<float>& fallback) const {
  return get_attr<std::vector<float>>(*this, key, fallback);
}
std::vector<std::string> Node::attr_strings(const std::string& key,
                                            const std::vector<std::string>& fallback) const {
  return get_attr<std::vector<std::string>>(*this, key, fallback);
}

const GraphPtr& Node::attr_graph(const std::string& key) const {
  auto it = attrs.find(key);
  if (it == attrs.end()) node_fail<InvalidModelError>(*this, "attribute '" + key + "' (a graph) is missing");
  if (const GraphPtr* g = std::get_if<GraphPtr>(&it->second); g && *g) return *g;
  node_fail<InvalidModelError>(*this, "attribute '" + key + "' must be a graph");
}

size_t Node::captured_inputs() const {
  const int64_t n = attr_int(kCapturedAttr, 0);
  if (n < 0 || static_cast<size_t>(n) > inputs.size()) {
    node_fail<InvalidModelError>(*this, "has " + std::to_string(n) + " outer-scope inputs but only " +
                                            std::to_string(inputs.size()) + " inputs");
  }
  return static_cast<size_t>(n);
}

void Node::expect_only_attrs(const std::vector<std::string>& known) const {
  for (const auto& kv : attrs) {
    if (std::find(known.begin(), known.end(), kv.first) == known.end()) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      node_fail<UnsupportedModelError>(
          *this, "attribute '" + kv.first + "' is not supported (supported: " +
                     (list.empty() ? std::string("none") : list) + ")");
    }
  }
}

std::string GraphInput::dims_str() const {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) out += ",";
    out += dims[i] >= 0 ? std::to_string(dims[i]) : (symbols[i].empty() ? "?" : symbols[i]);
  }
  return out + "]";
}

std::vector<Shape> default_input_shapes(const Graph& graph) {
  std::vector<Shape> shapes;
  for (const GraphInput& in : graph.inputs) {
    Shape s = in.dims;
    for (int64_t& d : s) d = d < 0 ? 1 : d;
    shapes.push_back(s);
  }
  return shapes;
}

}  // namespace dnnx
