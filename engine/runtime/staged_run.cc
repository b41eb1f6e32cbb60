// Engine's staged runs (Note [staged plans] in runtime/stages.h): host tensors through a plan,
// the value-shaped node it stops at, and the continuation's engine; the stage and body engines.
#include <cstring>

#include "runtime/control/dynamic_node.h"
#include "runtime/engine.h"
#include "runtime/stages.h"

namespace dnnx {

std::vector<ConstTensorPtr> Engine::run_tensors(const std::vector<ConstTensorPtr>& inputs) {
  if (inputs.size() != graph_.inputs.size()) {
    throw InvalidModelError((path_.empty() ? std::string("the model") : path_) + " takes " +
                            std::to_string(graph_.inputs.size()) + " inputs, got " + std::to_string(inputs.size()));
  }
  PlanKey key;
  key.values.resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    key.shapes.push_back(inputs[i]->info.shape);
    key.dtypes.push_back(inputs[i]->info.dtype);
  }
  for (int i : value_inputs_) key.values[i] = inputs[i];
  return run_tensors(*find_or_build(key), inputs);
}

std::vector<ConstTensorPtr> Engine::run_tensors(const Plan& plan, const std::vector<ConstTensorPtr>& inputs) {
  std::vector<ConstTensorPtr> outputs;
  std::vector<const void*> in_ptrs;
  std::vector<void*> out_ptrs;
  // Note [string tensors]: the strings this stage makes live in a store its string outputs share,
  // which keeps the inputs' stores alive too (an output may point into them).
  std::shared_ptr<StringStore> strings;
  if (plan.has_strings) {
    strings = std::make_shared<StringStore>();
    for (const ConstTensorPtr& t : inputs) {
      if (t && t->strings) strings->keep(t->strings);
    }
  }
  for (const ConstTensorPtr& t : inputs) in_ptrs.push_back(t->data.data());
  for (int id : plan.outputs) {
    auto t = std::make_shared<ConstTensor>();
    t->info = plan.values[id].info;
    t->data.resize(t->info.bytes());
    if (t->info.dtype == DType::String) t->strings = strings;
    out_ptrs.push_back(t->data.data());
    outputs.push_back(std::move(t));
  }
  RunIO io = RunIO::host(in_ptrs.size(), in_ptrs.data(), out_ptrs.size(), out_ptrs.data());
  io.strings = strings.get();
  run(plan, io);
  if (plan.stage_node < 0) return outputs;

  // The values the rest reads by name: the graph inputs, what the plan carried, the node's outputs.
  std::map<std::string, ConstTensorPtr> env;
  for (size_t i = 0; i < graph_.inputs.size(); ++i) env[graph_.inputs[i].name] = inputs[i];
  for (size_t o = 0; o < plan.carried.size(); ++o) env[plan.carried[o]] = outputs[o];
  const Node& node = graph_.nodes[static_cast<size_t>(plan.stage_node)];
  std::vector<ConstTensorPtr> node_inputs;
  for (const std::string& name : node.inputs) {
    if (name.empty()) {
      node_inputs.push_back(nullptr);
      continue;
    }
    auto it = env.find(name);
    if (it != env.end()) {
      node_inputs.push_back(it->second);
    } else {
      auto c = graph_.constants.find(name);
      if (c == graph_.constants.end()) node_fail<InvalidModelError>(node, "input '" + name + "' is not produced by any node");
      node_inputs.push_back(c->second);
    }
  }
  const std::vector<ConstTensorPtr> results = run_dynamic_node(*this, node, node_inputs);
  for (size_t o = 0; o < node.outputs.size() && o < results.size(); ++o) {
    if (!node.outputs[o].empty()) env[node.outputs[o]] = results[o];
  }
  if (static_cast<size_t>(plan.stage_node) + 1 == graph_.nodes.size()) {
    // The node was the last: the outputs are at hand (no continuation to plan).
    std::vector<ConstTensorPtr> results;
    for (const std::string& name : graph_.outputs) {
      auto it = env.find(name);
      auto c = graph_.constants.find(name);
      if (it == env.end() && c == graph_.constants.end()) {
        throw InvalidModelError("graph output '" + name + "' is not produced by any node");
      }
      results.push_back(it != env.end() ? it->second : c->second);
    }
    return results;
  }
  Engine& rest = continuation(plan.stage_node);
  std::vector<ConstTensorPtr> rest_inputs;
  for (const GraphInput& in : rest.graph().inputs) {
    auto it = env.find(in.name);
    if (it == env.end() || !it->second) node_fail<InvalidModelError>(node, "output '" + in.name + "' is read later but was not produced");
    rest_inputs.push_back(it->second);
  }
  return rest.run_tensors(rest_inputs);
}

Engine& Engine::continuation(int cut) {
  std::lock_guard<std::mutex> lock(sub_mutex_);
  std::unique_ptr<Engine>& slot = continuations_[cut];
  if (!slot) {
    const Node& node = graph_.nodes[static_cast<size_t>(cut)];
    const std::string here = "after " + node.op_type + " '" + node.name + "'";
    slot = std::make_unique<Engine>(continuation_graph(graph_, static_cast<size_t>(cut)), backend_, options_,
                                    path_.empty() ? here : path_ + " / " + here, kept_total_);
  }
  return *slot;
}

Engine& Engine::body(const Node& node, const std::string& attr) {
  std::lock_guard<std::mutex> lock(sub_mutex_);
  std::unique_ptr<Engine>& slot = bodies_[{&node, attr}];
  if (!slot) {
    const std::string here = node.op_type + " '" + node.name + "' " + attr;
    slot = std::make_unique<Engine>(*node.attr_graph(attr), backend_, options_, path_.empty() ? here : path_ + " / " + here,
                                    kept_total_);
  }
  return *slot;
}

std::vector<StageStats> Engine::stage_stats() {
  std::vector<Engine*> subs;
  {
    std::lock_guard<std::mutex> lock(sub_mutex_);
    for (auto& kv : continuations_) subs.push_back(kv.second.get());
    for (auto& kv : bodies_) subs.push_back(kv.second.get());
  }
  std::vector<StageStats> out;
  for (Engine* e : subs) {
    out.push_back(StageStats{e->path_, e->plan_stats()});
    for (StageStats& s : e->stage_stats()) out.push_back(std::move(s));
  }
  return out;
}

}  // namespace dnnx
