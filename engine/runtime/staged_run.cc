// Engine's staged runs (Note [staged plans] in runtime/stages.h): host tensors through a plan,
// the value-shaped node it stops at, and the continuation's engine; the stage and body engines.
#include <algorithm>
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
  return run_stage(std::vector<StageValue>(inputs.begin(), inputs.end()));
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
  return run_stage(plan, std::vector<StageValue>(inputs.begin(), inputs.end()));
}

std::vector<HostValue> Engine::run_stage(std::vector<StageValue> inputs) {
  if (inputs.size() != graph_.inputs.size()) {
    throw InvalidModelError((path_.empty() ? std::string("the model") : path_) + " takes " +
                            std::to_string(graph_.inputs.size()) + " inputs, got " + std::to_string(inputs.size()));
  }
  if (std::shared_ptr<const Plan> last = last_plan_for(inputs)) return run_stage(*last, inputs);
  // The plan key reads the value inputs' bytes on the host, and the others' shapes and types
  // alone: a device tensor is seen as a tensor of its info with no bytes.
  for (int i : value_inputs_) {
    if (inputs[i].device) inputs[i] = StageValue(inputs[i].to_host());
  }
  std::vector<HostValue> keyed;
  for (const StageValue& v : inputs) {
    if (!v.device) {
      keyed.push_back(v.host);
      continue;
    }
    auto info_only = std::make_shared<ConstTensor>();
    info_only->info = v.device->info();
    keyed.emplace_back(std::move(info_only));
  }
  return run_stage(*find_or_build(key_of_values(keyed)), inputs);
}

// Note [last stage plan]: a staged model runs each stage once per run, mostly with the shapes of
// the run before (a detector's stages on images alike), and a continuation takes every value any
// later stage reads: up to ~270 inputs in torchvision's SSDlite. The plan key of so many inputs
// (a shape and a type each, copied into the key, then compared in the plan map) cost more host
// time per stage than its CUDA graph's launch. So a stage engine first compares the inputs with
// the key of the plan it used last, in place, and takes that plan when they match; the plan map,
// its recency and its counts are kept as a lookup would keep them. Sequences, optionals and
// value inputs (whose bytes are part of the key) take the lookup.
std::shared_ptr<const Plan> Engine::last_plan_for(const std::vector<StageValue>& inputs) {
  if (!value_inputs_.empty()) return nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  if (!last_plan_) return nullptr;
  const PlanKey& key = *last_recency_;
  if (!key.kinds.empty() || key.dtypes.size() != inputs.size() || key.shapes.size() != inputs.size()) return nullptr;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const StageValue& v = inputs[i];
    const TensorInfo* info = v.device ? &v.device->info()
                             : v.host.is_tensor() && v.host.tensor ? &v.host.tensor->info
                                                                   : nullptr;
    if (!info || info->dtype != key.dtypes[i] || info->shape != key.shapes[i]) return nullptr;
  }
  recency_.splice(recency_.begin(), recency_, last_recency_);
  ++stats_.reused;
  return last_plan_;
}

std::vector<HostValue> Engine::run_stage(const Plan& plan, const std::vector<StageValue>& inputs) {
  std::vector<StageValue> outputs;
  std::vector<void*> out_ptrs;
  RunIO io;
  // Note [string tensors]: the strings this stage makes live in a store its string outputs share,
  // which keeps the inputs' stores alive too (an output may point into them).
  std::shared_ptr<StringStore> strings;
  if (plan.has_strings) {
    strings = std::make_shared<StringStore>();
    for (const StageValue& v : inputs) {
      if (v.host.is_tensor() && v.host.tensor && v.host.tensor->strings) strings->keep(v.host.tensor->strings);
    }
  }
  // Note [sequences]: a sequence or optional input is a 0-byte placeholder in the plan.
  io.inputs.reserve(inputs.size());
  io.input_memory.reserve(inputs.size());
  outputs.reserve(plan.outputs.size());
  out_ptrs.reserve(plan.outputs.size());
  for (const StageValue& v : inputs) {
    io.inputs.push_back(v.device ? v.device->data() : v.host.is_tensor() ? v.host.tensor->data.data() : nullptr);
    io.input_memory.push_back(v.device ? Memory::Device : Memory::Host);
  }
  // Note [device-resident stages]: a device stage that hands values on writes them to device arrays.
  const bool device_outputs = device_ && plan.stage_node >= 0 && !plan.has_strings;
  for (int id : plan.outputs) {
    if (plan.values[id].kind != ValueKind::Tensor) {  // a graph output that is a non-tensor input, passed on
      outputs.push_back(input_named(plan.values[id].name, inputs));
      out_ptrs.push_back(nullptr);
      continue;
    }
    if (device_outputs) {
      auto d = std::make_shared<DeviceTensor>(*device_, plan.values[id].info);
      out_ptrs.push_back(d->data());
      outputs.emplace_back(std::move(d));
      continue;
    }
    auto t = std::make_shared<ConstTensor>();
    t->info = plan.values[id].info;
    t->data.resize(t->info.bytes());
    if (t->info.dtype == DType::String) t->strings = strings;
    out_ptrs.push_back(t->data.data());
    outputs.emplace_back(HostValue(std::move(t)));
  }
  io.outputs = out_ptrs;
  io.output_memory = device_outputs ? Memory::Device : Memory::Host;
  // Note [queued stage runs]: device arrays handed on are read in the stream's order (the staged
  // kernel's count, a continuation's edge copies); whatever reads one on the host waits for the
  // stream first (DeviceTensor::to_host). So such a stage returns once its work is queued, and
  // its host work (the next plan lookup, the staged kernel's launches) overlaps the device's.
  io.wait = !device_outputs;
  io.strings = strings.get();
  run(plan, io);
  if (plan.stage_node < 0) {
    std::vector<HostValue> results;
    for (const StageValue& v : outputs) results.push_back(v.to_host());
    return results;
  }

  // Note [stage slots]: the graph inputs, the carried values, then the node's outputs.
  const std::shared_ptr<const StageSlots> slots = slots_of(plan);
  std::vector<StageValue> values(static_cast<size_t>(slots->size));
  std::copy(inputs.begin(), inputs.end(), values.begin());
  std::move(outputs.begin(), outputs.begin() + static_cast<std::ptrdiff_t>(plan.carried.size()),
            values.begin() + static_cast<std::ptrdiff_t>(inputs.size()));
  const Node& node = graph_.nodes[static_cast<size_t>(plan.stage_node)];
  if (!(plan.stage_kernel && device_ && run_staged_on_device(plan, node, *slots, values))) {
    run_on_host(node, *slots, values);
  }
  return finish_stage(plan, node, *slots, values);
}

// A graph input by name (a plan output that is a non-tensor input, handed on as it came).
StageValue Engine::input_named(const std::string& name, const std::vector<StageValue>& inputs) const {
  for (size_t i = 0; i < graph_.inputs.size(); ++i) {
    if (graph_.inputs[i].name == name) return inputs.at(i);
  }
  throw InvalidModelError((path_.empty() ? std::string("the model") : path_) + ": output '" + name +
                          "' is neither a graph input nor produced by a node");
}

std::shared_ptr<const StageSlots> Engine::slots_of(const Plan& plan) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = stage_slots_.find(plan.id);
    if (it != stage_slots_.end()) return it->second;
  }
  const size_t cut = static_cast<size_t>(plan.stage_node);
  const Graph* rest = cut + 1 == graph_.nodes.size() ? nullptr : &continuation(plan.stage_node).graph();
  auto slots = std::make_shared<const StageSlots>(stage_slots(graph_, plan.carried, cut, rest));
  std::lock_guard<std::mutex> lock(mutex_);
  return stage_slots_.emplace(plan.id, std::move(slots)).first->second;
}

const ConstTensorPtr& Engine::node_constant(const Node& node, const std::string& name) const {
  auto c = graph_.constants.find(name);
  if (c == graph_.constants.end()) node_fail<InvalidModelError>(node, "input '" + name + "' is not produced by any node");
  return c->second;
}

// The node a plan stops at, on the host (Note [staged plans]): its inputs read back there.
void Engine::run_on_host(const Node& node, const StageSlots& slots, std::vector<StageValue>& values) {
  std::vector<HostValue> node_inputs;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const int slot = slots.node_inputs[i];
    if (node.inputs[i].empty()) {
      node_inputs.emplace_back();  // omitted: a tensor value with no tensor
    } else if (slot >= 0) {
      node_inputs.push_back(values[static_cast<size_t>(slot)].to_host());
    } else {
      node_inputs.emplace_back(node_constant(node, node.inputs[i]));
    }
  }
  const std::vector<HostValue> results = run_dynamic_node(*this, node, node_inputs);
  for (size_t o = 0; o < node.outputs.size() && o < results.size(); ++o) {
    const int slot = slots.node_outputs[o];
    if (slot >= 0) values[static_cast<size_t>(slot)] = results[o];
  }
}

// After the node a plan stops at: the graph's outputs when it was the last, else the
// continuation run on the values it reads.
std::vector<HostValue> Engine::finish_stage(const Plan& plan, const Node& node, const StageSlots& slots,
                                            std::vector<StageValue>& values) {
  if (static_cast<size_t>(plan.stage_node) + 1 == graph_.nodes.size()) {
    // The node was the last: the outputs are at hand (no continuation to plan).
    std::vector<HostValue> results;
    for (size_t o = 0; o < graph_.outputs.size(); ++o) {
      const std::string& name = graph_.outputs[o];
      const int slot = slots.results[o];
      if (slot >= 0) {
        results.push_back(values[static_cast<size_t>(slot)].to_host());
        continue;
      }
      auto c = graph_.constants.find(name);
      if (c == graph_.constants.end()) throw InvalidModelError("graph output '" + name + "' is not produced by any node");
      results.emplace_back(c->second);
    }
    return results;
  }
  Engine& rest = continuation(plan.stage_node);
  std::vector<StageValue> rest_inputs;
  rest_inputs.reserve(slots.rest_inputs.size());
  for (size_t j = 0; j < slots.rest_inputs.size(); ++j) {
    const int slot = slots.rest_inputs[j];
    if (slot < 0 || !values[static_cast<size_t>(slot)].present()) {
      node_fail<InvalidModelError>(node, "output '" + rest.graph().inputs[j].name + "' is read later but was not produced");
    }
    rest_inputs.push_back(values[static_cast<size_t>(slot)]);
  }
  values.clear();  // the continuation holds what it reads; the rest may go
  return rest.run_stage(std::move(rest_inputs));
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
