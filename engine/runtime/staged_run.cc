// Engine's staged runs (Note [staged plans] in runtime/stages.h): host tensors through a plan,
// the value-shaped node it stops at, and the continuation's engine; the stage and body engines.
#include <cstring>

#include "runtime/control/dynamic_node.h"
#include "runtime/engine.h"
#include "runtime/stages.h"

namespace dnnx {

PlanKey Engine::key_of_values(const std::vector<HostValue>& inputs) const {
  PlanKey key;
  key.values.resize(inputs.size());
  bool any_other = false;
  for (const HostValue& v : inputs) {
    if (v.is_tensor() && !v.tensor) throw InvalidModelError((path_.empty() ? std::string("the model") : path_) + ": an input has no value");
    any_other = any_other || !v.is_tensor();
    key.shapes.push_back(v.is_tensor() ? v.tensor->info.shape : Shape{0});  // Note [sequences]: a 0-byte placeholder
    key.dtypes.push_back(v.is_tensor() ? v.tensor->info.dtype : v.elem);
    key.kinds.push_back(v.kind);
  }
  if (!any_other) key.kinds.clear();  // all tensors: the key a tensor run makes
  for (int i : value_inputs_) {
    if (inputs[i].is_tensor()) key.values[i] = inputs[i].tensor;
  }
  return key;
}

std::vector<HostValue> Engine::run_values(const std::vector<HostValue>& inputs) {
  if (inputs.size() != graph_.inputs.size()) {
    throw InvalidModelError((path_.empty() ? std::string("the model") : path_) + " takes " +
                            std::to_string(graph_.inputs.size()) + " inputs, got " + std::to_string(inputs.size()));
  }
  return run_values(*find_or_build(key_of_values(inputs)), inputs);
}

std::vector<ConstTensorPtr> Engine::run_tensors(const std::vector<ConstTensorPtr>& inputs) {
  const std::vector<HostValue> outs = run_values(std::vector<HostValue>(inputs.begin(), inputs.end()));
  std::vector<ConstTensorPtr> tensors;
  for (size_t o = 0; o < outs.size(); ++o) {
    if (!outs[o].is_tensor()) {
      throw InvalidModelError((path_.empty() ? std::string("the model") : path_) + ": output '" + graph_.outputs.at(o) +
                              "' is " + outs[o].str() + " where a tensor is expected");
    }
    tensors.push_back(outs[o].tensor);
  }
  return tensors;
}

std::vector<HostValue> Engine::run_values(const Plan& plan, const std::vector<HostValue>& inputs) {
  std::vector<HostValue> outputs;
  std::vector<const void*> in_ptrs;
  std::vector<void*> out_ptrs;
  // Note [string tensors]: the strings this stage makes live in a store its string outputs share,
  // which keeps the inputs' stores alive too (an output may point into them).
  std::shared_ptr<StringStore> strings;
  if (plan.has_strings) {
    strings = std::make_shared<StringStore>();
    for (const HostValue& v : inputs) {
      if (v.is_tensor() && v.tensor && v.tensor->strings) strings->keep(v.tensor->strings);
    }
  }
  // Note [sequences]: a sequence or optional input is a 0-byte placeholder in the plan.
  for (const HostValue& v : inputs) in_ptrs.push_back(v.is_tensor() ? v.tensor->data.data() : nullptr);
  // The values the rest reads by name: the graph inputs, what the plan carried, the node's outputs.
  std::map<std::string, HostValue> env;
  for (size_t i = 0; i < graph_.inputs.size(); ++i) env[graph_.inputs[i].name] = inputs[i];
  for (int id : plan.outputs) {
    if (plan.values[id].kind != ValueKind::Tensor) {  // a graph output that is a non-tensor input, passed on
      outputs.push_back(env.at(plan.values[id].name));
      out_ptrs.push_back(nullptr);
      continue;
    }
    auto t = std::make_shared<ConstTensor>();
    t->info = plan.values[id].info;
    t->data.resize(t->info.bytes());
    if (t->info.dtype == DType::String) t->strings = strings;
    out_ptrs.push_back(t->data.data());
    outputs.emplace_back(std::move(t));
  }
  RunIO io = RunIO::host(in_ptrs.size(), in_ptrs.data(), out_ptrs.size(), out_ptrs.data());
  io.strings = strings.get();
  run(plan, io);
  if (plan.stage_node < 0) return outputs;

  for (size_t o = 0; o < plan.carried.size(); ++o) env[plan.carried[o]] = outputs[o];
  const Node& node = graph_.nodes[static_cast<size_t>(plan.stage_node)];
  std::vector<HostValue> node_inputs;
  for (const std::string& name : node.inputs) {
    if (name.empty()) {
      node_inputs.emplace_back();  // omitted: a tensor value with no tensor
      continue;
    }
    auto it = env.find(name);
    if (it != env.end()) {
      node_inputs.push_back(it->second);
    } else {
      auto c = graph_.constants.find(name);
      if (c == graph_.constants.end()) node_fail<InvalidModelError>(node, "input '" + name + "' is not produced by any node");
      node_inputs.emplace_back(c->second);
    }
  }
  const std::vector<HostValue> results = run_dynamic_node(*this, node, node_inputs);
  for (size_t o = 0; o < node.outputs.size() && o < results.size(); ++o) {
    if (!node.outputs[o].empty()) env[node.outputs[o]] = results[o];
  }
  if (static_cast<size_t>(plan.stage_node) + 1 == graph_.nodes.size()) {
    // The node was the last: the outputs are at hand (no continuation to plan).
    std::vector<HostValue> results;
    for (const std::string& name : graph_.outputs) {
      auto it = env.find(name);
      auto c = graph_.constants.find(name);
      if (it == env.end() && c == graph_.constants.end()) {
        throw InvalidModelError("graph output '" + name + "' is not produced by any node");
      }
      results.push_back(it != env.end() ? it->second : HostValue(c->second));
    }
    return results;
  }
  Engine& rest = continuation(plan.stage_node);
  std::vector<HostValue> rest_inputs;
  for (const GraphInput& in : rest.graph().inputs) {
    auto it = env.find(in.name);
    if (it == env.end() || !it->second.present()) {
      node_fail<InvalidModelError>(node, "output '" + in.name + "' is read later but was not produced");
    }
    rest_inputs.push_back(it->second);
  }
  return rest.run_values(rest_inputs);
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
