#include "train/trainable.h"

#include <algorithm>
#include <set>

namespace dnnx {

namespace {

constexpr char kLastPrefix[] = "last:";

// A float32 constant no graph input shadows (a graph input of that name is fed at run time).
bool is_float_constant(const Graph& graph, const std::string& name) {
  if (name.empty()) return false;
  for (const GraphInput& in : graph.inputs) {
    if (in.name == name) return false;
  }
  auto it = graph.constants.find(name);
  return it != graph.constants.end() && it->second->info.dtype == DType::Float32;
}

// The node index that alone reads `value`, or -1.
int sole_reader(const Graph& graph, const std::string& value) {
  int found = -1;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    for (const std::string& in : graph.nodes[i].inputs) {
      if (in != value) continue;
      if (found >= 0 && found != static_cast<int>(i)) return -1;
      found = static_cast<int>(i);
    }
  }
  return found;
}

// The weight input whose being constant makes the op a parameterised layer.
int weight_input(const Node& node) {
  static const std::set<std::string> kLayers = {"Conv", "ConvTranspose", "Gemm", "MatMul", "LSTM", "GRU", "RNN"};
  if (kLayers.count(node.op_type) != 0) {
    return 1;
  }
  return -1;
}

void add_unique(std::vector<std::string>& out, const std::string& name) {
  if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
}

}  // namespace

std::vector<ParamLayer> parameterised_layers(const Graph& graph) {
  std::vector<ParamLayer> layers;
  for (const Node& node : graph.nodes) {
    const int w = weight_input(node);
    if (w < 0 || !node.has_input(static_cast<size_t>(w)) || !is_float_constant(graph, node.inputs[w])) continue;
    ParamLayer layer{node.name, {}};
    for (const std::string& in : node.inputs) {
      if (is_float_constant(graph, in)) add_unique(layer.params, in);
    }
    if (node.op_type == "MatMul" && node.has_output(0)) {
      const int reader = sole_reader(graph, node.outputs[0]);
      if (reader >= 0 && graph.nodes[reader].op_type == "Add") {
        for (const std::string& in : graph.nodes[reader].inputs) {
          if (is_float_constant(graph, in)) add_unique(layer.params, in);
        }
      }
    }
    layers.push_back(std::move(layer));
  }
  return layers;
}

std::vector<std::string> select_parameters(const Graph& graph, const std::string& spec) {
  const std::vector<ParamLayer> layers = parameterised_layers(graph);
  int64_t last = 0;
  if (spec == "all") {
    last = static_cast<int64_t>(layers.size());
  } else if (spec.rfind(kLastPrefix, 0) == 0) {
    const std::string count = spec.substr(sizeof(kLastPrefix) - 1);
    const bool digits = !count.empty() && count.size() < 10 &&
                        std::all_of(count.begin(), count.end(), [](char c) { return c >= '0' && c <= '9'; });
    last = digits ? std::stoll(count) : 0;
    if (last < 1) throw InputError("trainable: expected 'last:N' with N >= 1, got '" + spec + "'");
  } else {
    throw InputError("trainable: expected 'last:N', 'all' or a list of parameter names, got '" + spec + "'");
  }
  if (layers.empty()) {
    throw InputError("trainable '" + spec +
                     "': the model has no parameterised layer (Conv, ConvTranspose, Gemm, MatMul, LSTM, GRU "
                     "or RNN with a constant weight)");
  }
  if (last > static_cast<int64_t>(layers.size())) {
    throw InputError("trainable '" + spec + "': the model has only " + std::to_string(layers.size()) +
                     " parameterised layer(s)");
  }
  std::vector<std::string> names;
  for (size_t i = layers.size() - static_cast<size_t>(last); i < layers.size(); ++i) {
    for (const std::string& p : layers[i].params) add_unique(names, p);
  }
  return names;
}

std::vector<std::string> check_parameters(const Graph& graph, const std::vector<std::string>& names) {
  if (names.empty()) throw InputError("trainable: the list of parameter names is empty");
  std::set<std::string> read;
  for (const Node& node : graph.nodes) read.insert(node.inputs.begin(), node.inputs.end());
  std::vector<std::string> out;
  for (const std::string& name : names) {
    if (!is_float_constant(graph, name) || !read.count(name)) {
      throw InputError("trainable: '" + name + "' is not a float32 initializer read by the model's nodes");
    }
    add_unique(out, name);
  }
  return out;
}

}  // namespace dnnx
