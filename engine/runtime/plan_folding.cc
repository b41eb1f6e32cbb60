#include "runtime/plan_folding.h"

#include "runtime/mutable_constants.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "runtime/kernel_registry.h"
#include "runtime/planner.h"
#include "runtime/size_check.h"

namespace dnnx {

namespace {
std::shared_ptr<const Backend>& host_slot() {
  static std::shared_ptr<const Backend> host;
  return host;
}
}  // namespace

void set_folding_host(std::shared_ptr<const Backend> host) { host_slot() = std::move(host); }
const Backend* folding_host() { return host_slot().get(); }

namespace {

// Whether the host can evaluate this node (a view needs no kernel).
bool host_runs(const Backend& host, const Node& node, const OpDef* def) {
  return def && (def->aliases_input0 || host.kernels().find(node));
}

// The graph inputs that some value slot reaches back to (Note [value inputs]).
std::vector<int> reached_inputs(const Graph& graph, const Backend& host) {
  const OpRegistry& ops = op_registry();
  std::unordered_map<std::string, size_t> producer;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    for (const std::string& out : graph.nodes[i].outputs) {
      if (!out.empty()) producer[out] = i;
    }
  }
  std::unordered_map<std::string, int> input_position;
  for (size_t i = 0; i < graph.inputs.size(); ++i) input_position[graph.inputs[i].name] = static_cast<int>(i);
  std::vector<std::string> work;
  for (const Node& node : graph.nodes) {
    const OpDef* def = ops.find(node);
    if (!def) continue;
    for (int k : def->value_inputs) {
      if (k < static_cast<int>(node.inputs.size()) && !node.inputs[k].empty()) work.push_back(node.inputs[k]);
    }
  }
  std::unordered_set<std::string> seen;
  std::set<int> reached;  // sorted: the inputs in their order
  while (!work.empty()) {
    const std::string name = work.back();
    work.pop_back();
    if (!seen.insert(name).second) continue;
    auto in = input_position.find(name);
    if (in != input_position.end()) {
      reached.insert(in->second);
      continue;
    }
    auto p = producer.find(name);
    if (p == producer.end()) continue;  // a constant
    const Node& node = graph.nodes[p->second];
    const OpDef* def = ops.find(node);
    if ((def && def->reads_input0_shape_only) || !host_runs(host, node, def)) continue;
    for (const std::string& i : node.inputs) {
      if (!i.empty()) work.push_back(i);
    }
  }
  return std::vector<int>(reached.begin(), reached.end());
}

}  // namespace

GraphFolding graph_folding(const Graph& graph, const Backend* host) {
  GraphFolding folding;
  folding.nodes.assign(graph.nodes.size(), false);
  if (!host) return folding;
  folding.value_inputs = reached_inputs(graph, *host);
  std::unordered_set<std::string> known;  // values known once the input shapes (and value inputs) are
  for (const auto& kv : graph.constants) {
    if (!constant_changes(kv.first)) known.insert(kv.first);  // a parameter in training never folds
  }
  for (const GraphInput& in : graph.inputs) known.erase(in.name);  // an input shadows a default
  for (int i : folding.value_inputs) known.insert(graph.inputs[i].name);
  const OpRegistry& ops = op_registry();
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& node = graph.nodes[i];
    const OpDef* def = ops.find(node);
    if (!host_runs(*host, node, def)) continue;
    bool all_known = true;
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      const std::string& name = node.inputs[k];
      const bool shape_only = def->reads_input0_shape_only && k == 0;  // its value follows from the input's shape
      if (!name.empty() && !shape_only && !known.count(name)) all_known = false;
    }
    if (!all_known) continue;
    folding.nodes[i] = true;
    for (const std::string& out : node.outputs) {
      if (!out.empty()) known.insert(out);
    }
  }
  return folding;
}

int fold_graph_constants(Graph& graph, const Backend* host) {
  if (!host) return 0;
  std::unordered_set<std::string> inputs;
  for (const GraphInput& in : graph.inputs) inputs.insert(in.name);  // an input shadows a default
  const OpRegistry& ops = op_registry();
  std::vector<Node> kept;
  int folded = 0;
  for (Node& node : graph.nodes) {
    const OpDef* def = ops.find(node);
    std::vector<ValueInfo> in_infos;
    bool all_constant = host_runs(*host, node, def);
    for (const std::string& name : node.inputs) {
      if (!all_constant) break;
      if (name.empty()) {
        in_infos.push_back(ValueInfo{{}, nullptr, false});
        continue;
      }
      auto c = graph.constants.find(name);
      all_constant = c != graph.constants.end() && !inputs.count(name);
      if (all_constant) in_infos.push_back(ValueInfo{c->second->info, c->second.get(), true});
    }
    if (!all_constant) {
      kept.push_back(std::move(node));
      continue;
    }
    std::vector<TensorInfo> out_infos = def->infer(node, in_infos);
    out_infos.resize(node.outputs.size());
    if (!host_can_fold(*def, in_infos, out_infos)) {
      kept.push_back(std::move(node));
      continue;
    }
    std::vector<std::shared_ptr<ConstTensor>> results = fold_node(*host, node, *def, in_infos, out_infos);
    for (size_t o = 0; o < results.size(); ++o) {
      if (results[o]) graph.constants[node.outputs[o]] = std::move(results[o]);
    }
    ++folded;
  }
  graph.nodes = std::move(kept);
  return folded;
}

bool host_can_fold(const OpDef& def, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>& outputs) {
  for (size_t k = 0; k < inputs.size(); ++k) {
    const ValueInfo& v = inputs[k];
    if (!v.present || (def.reads_input0_shape_only && k == 0)) continue;
    if (!v.constant || is_half(v.info.dtype)) return false;
  }
  for (const TensorInfo& t : outputs) {
    if (is_half(t.dtype)) return false;
  }
  return true;
}

std::vector<std::shared_ptr<ConstTensor>> fold_node(const Backend& host, const Node& node, const OpDef& def,
                                                    const std::vector<ValueInfo>& inputs,
                                                    const std::vector<TensorInfo>& outputs) {
  std::vector<std::shared_ptr<ConstTensor>> results(outputs.size());
  for (size_t o = 0; o < outputs.size(); ++o) {
    if (node.outputs[o].empty()) continue;
    // Note [absurd sizes]: a folded value is host memory, whatever the model's backend.
    check_fits(outputs[o], host.memory_bytes(), node.where() + " output '" + node.outputs[o] + "' (folded)",
               host.memory_name());
    results[o] = std::make_shared<ConstTensor>();
    results[o]->info = outputs[o];
    results[o]->data.resize(outputs[o].bytes());
  }
  if (def.aliases_input0) {  // a view: the same bytes under the new shape
    const ConstTensor& src = *inputs.at(0).constant;
    std::memcpy(results[0]->data.data(), src.data.data(), std::min(src.data.size(), results[0]->data.size()));
    results[0]->strings = src.strings;  // Note [string tensors]: the same elements, the same store
    // Its further outputs (Dropout's mask) come from its kernel (Note [views with more outputs]).
    if (std::none_of(results.begin() + 1, results.end(), [](const auto& r) { return r != nullptr; })) return results;
  }
  if (outputs_empty(node, outputs)) return results;  // Note [empty tensors] in planner.cc: nothing to compute
  KernelChoice choice = host.plan_node(node, inputs, outputs);
  std::vector<const void*> in_ptrs;
  for (const ValueInfo& v : inputs) in_ptrs.push_back(v.present && v.constant ? v.constant->data.data() : nullptr);
  std::vector<void*> out_ptrs;
  for (auto& r : results) out_ptrs.push_back(r ? r->data.data() : nullptr);
  std::vector<uint8_t> workspace(choice.scratch_bytes + choice.workspace_bytes);
  // Note [string tensors]: folded strings live in the results' store, which keeps the inputs'
  // stores alive too (a moved element still points into them).
  std::shared_ptr<StringStore> strings;
  if (std::any_of(outputs.begin(), outputs.end(), [](const TensorInfo& t) { return t.dtype == DType::String; })) {
    strings = std::make_shared<StringStore>();
    for (const ValueInfo& v : inputs) {
      if (v.present && v.constant && v.constant->strings) strings->keep(v.constant->strings);
    }
    for (auto& r : results) {
      if (r) r->strings = strings;
    }
  }
  choice.kernel->run(KernelArgs{in_ptrs.data(), out_ptrs.data(), workspace.data(), strings.get()});
  return results;
}

}  // namespace dnnx
