#include "runtime/passes/rewrite.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "ops/op.h"
#include "runtime/plan_folding.h"

namespace dnnx {

int sole_consumer(const Graph& graph, const std::string& value) {
  if (std::find(graph.outputs.begin(), graph.outputs.end(), value) != graph.outputs.end()) return -1;
  int found = -1;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const auto& ins = graph.nodes[i].inputs;
    const auto uses = std::count(ins.begin(), ins.end(), value);
    if (uses == 0) continue;
    if (found >= 0 || uses > 1) return -1;
    found = static_cast<int>(i);
  }
  return found;
}

const ConstTensor* find_constant(const Graph& graph, const std::string& name) {
  for (const GraphInput& in : graph.inputs) {
    if (in.name == name) return nullptr;
  }
  auto it = graph.constants.find(name);
  return it == graph.constants.end() ? nullptr : it->second.get();
}

namespace {

bool name_taken(const Graph& graph, const std::string& name) {
  if (graph.constants.count(name)) return true;
  for (const GraphInput& in : graph.inputs) {
    if (in.name == name) return true;
  }
  for (const Node& node : graph.nodes) {
    if (std::find(node.outputs.begin(), node.outputs.end(), name) != node.outputs.end()) return true;
  }
  return false;
}

}  // namespace

std::string add_constant(Graph& graph, const std::string& base, const Shape& shape, std::vector<float> values) {
  std::string name = base;
  for (int i = 1; name_taken(graph, name); ++i) name = base + "_" + std::to_string(i);
  auto t = std::make_shared<ConstTensor>();
  t->info = TensorInfo{shape, DType::Float32};
  t->data.resize(values.size() * sizeof(float));
  if (!values.empty()) std::memcpy(t->data.data(), values.data(), t->data.size());
  graph.constants[name] = std::move(t);
  return name;
}

std::string add_int64_constant(Graph& graph, const std::string& base, const std::vector<int64_t>& values) {
  std::string name = base;
  for (int i = 1; name_taken(graph, name); ++i) name = base + "_" + std::to_string(i);
  auto t = std::make_shared<ConstTensor>();
  t->info = TensorInfo{Shape{static_cast<int64_t>(values.size())}, DType::Int64};
  t->data.resize(values.size() * sizeof(int64_t));
  if (!values.empty()) std::memcpy(t->data.data(), values.data(), t->data.size());
  graph.constants[name] = std::move(t);
  return name;
}

FreshNames::FreshNames(const Graph& graph) {
  for (const auto& kv : graph.constants) taken_.insert(kv.first);
  for (const GraphInput& in : graph.inputs) taken_.insert(in.name);
  for (const Node& node : graph.nodes) taken_.insert(node.outputs.begin(), node.outputs.end());
}

std::string FreshNames::operator()(const std::string& base) {
  std::string name = base;
  for (int i = 1; taken_.count(name); ++i) name = base + "_" + std::to_string(i);
  taken_.insert(name);
  return name;
}

void rename_output_inside(std::vector<Node>& nodes, const std::string& out, const std::string& inner) {
  for (Node& node : nodes) {
    for (std::string& in : node.inputs) {
      if (in == out) in = inner;
    }
    for (std::string& o : node.outputs) {
      if (o == out) o = inner;
    }
  }
}

std::map<std::string, TensorInfo> value_types(const Graph& graph, int64_t symbolic_dim) {
  std::map<std::string, TensorInfo> types;
  for (const auto& kv : graph.constants) types[kv.first] = kv.second->info;
  for (const GraphInput& in : graph.inputs) {
    Shape dims = in.dims;
    for (int64_t& d : dims) d = d < 0 ? symbolic_dim : d;
    types[in.name] = TensorInfo{dims, in.dtype};
  }
  const OpRegistry& registry = op_registry();
  // Shape computations fold as the planner folds them (Note [plan-time folding]), so that what
  // reads their values (Reshape, ConstantOfShape) can be typed.
  // A value that follows from a value input's data (Note [value inputs]) is unknown here: what
  // reads it as a value, and what follows, stays untyped (the passes leave untyped values alone).
  const Backend* host = folding_host();
  const std::vector<bool> folds = graph_folding(graph, host).nodes;
  std::map<std::string, std::shared_ptr<ConstTensor>> folded;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const Node& node = graph.nodes[n];
    const OpDef& def = *registry.find(node);
    if (def.value_shaped) continue;  // known at run time only (Note [staged plans]): what follows stays untyped
    std::vector<ValueInfo> inputs;
    bool typed = true;
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      const std::string& name = node.inputs[k];
      if (name.empty()) {
        inputs.push_back(ValueInfo{{}, nullptr, false});
        continue;
      }
      auto it = types.find(name);
      if (it == types.end()) {
        typed = false;
        break;
      }
      auto f = folded.find(name);
      inputs.push_back(ValueInfo{it->second, f != folded.end() ? f->second.get() : find_constant(graph, name), true});
      const bool read_as_value = std::find(def.value_inputs.begin(), def.value_inputs.end(), static_cast<int>(k)) !=
                                 def.value_inputs.end();
      const bool data_needed = folds[n] && !(def.reads_input0_shape_only && k == 0);
      if ((read_as_value || data_needed) && !inputs.back().constant) typed = false;
    }
    if (!typed) continue;
    std::vector<TensorInfo> outs = def.infer(node, inputs);
    outs.resize(node.outputs.size());  // one per node output, as the planner keeps them
    if (folds[n] && host_can_fold(def, inputs, outs)) {
      const std::vector<std::shared_ptr<ConstTensor>> values = fold_node(*host, node, def, inputs, outs);
      for (size_t o = 0; o < values.size(); ++o) {
        if (values[o]) folded[node.outputs[o]] = values[o];
      }
    }
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      if (!node.outputs[o].empty()) types[node.outputs[o]] = outs[o];
    }
  }
  return types;
}

void erase_nodes(Graph& graph, const std::vector<bool>& dead) {
  std::vector<Node> kept;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (!dead[i]) kept.push_back(std::move(graph.nodes[i]));
  }
  graph.nodes = std::move(kept);
}

void drop_unused_constants(Graph& graph) {
  std::set<std::string> used(graph.outputs.begin(), graph.outputs.end());
  for (const Node& node : graph.nodes) used.insert(node.inputs.begin(), node.inputs.end());
  for (auto it = graph.constants.begin(); it != graph.constants.end();) {
    it = used.count(it->first) ? std::next(it) : graph.constants.erase(it);
  }
}

bool backend_can_run(const PassOptions& options, const Node& node) {
  return !options.can_run || options.can_run(node);
}

int fuse_with_sole_consumer(Graph& graph, const PassOptions& options, const NodeTest& is_producer,
                            const PairMerge& merge) {
  std::vector<bool> dead(graph.nodes.size(), false);
  int fused = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& producer = graph.nodes[i];
    if (!is_producer(producer) || producer.outputs.size() != 1 || !producer.has_output(0)) continue;
    const int c = sole_consumer(graph, producer.outputs[0]);
    if (c < 0 || dead[c]) continue;
    std::optional<Node> merged = merge(producer, graph.nodes[c]);
    if (!merged || !backend_can_run(options, *merged)) continue;
    graph.nodes[i] = std::move(*merged);
    dead[c] = true;
    ++fused;
  }
  erase_nodes(graph, dead);
  return fused;
}

int fuse_with_relu(Graph& graph, const PassOptions& options, const std::string& producer_op, const NodeTest& also) {
  return fuse_with_sole_consumer(
      graph, options, [&](const Node& n) { return n.op_type == producer_op && (!also || also(n)); },
      [&](const Node& producer, const Node& consumer) -> std::optional<Node> {
        if (consumer.op_type != "Relu" || !consumer.domain.empty()) return std::nullopt;
        Node merged = producer;
        merged.op_type = producer_op + "+Relu";
        merged.outputs = consumer.outputs;
        return merged;
      });
}

}  // namespace dnnx
