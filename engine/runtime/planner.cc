#include "runtime/planner.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <set>

#include "runtime/arena.h"
#include "runtime/control/slices.h"
#include "ops/layout/channels_last.h"
#include "runtime/host_fallback.h"
#include "runtime/run_fallback.h"
#include "runtime/plan_folding.h"
#include "runtime/size_check.h"
#include "runtime/stages.h"

namespace dnnx {

bool PlanKey::operator<(const PlanKey& other) const {
  if (shapes != other.shapes) return shapes < other.shapes;
  if (dtypes != other.dtypes) return dtypes < other.dtypes;
  if (kinds != other.kinds) return kinds < other.kinds;
  if (values.size() != other.values.size()) return values.size() < other.values.size();
  for (size_t i = 0; i < values.size(); ++i) {
    const ConstTensor* a = values[i].get();
    const ConstTensor* b = other.values[i].get();
    if (!a || !b) {
      if (a != b) return !a;
      continue;
    }
    if (a->info.dtype != b->info.dtype) return a->info.dtype < b->info.dtype;
    if (a->data != b->data) return a->data < b->data;
  }
  return false;
}

void validate_graph(const Graph& graph, const Backend& backend, const Backend* host) {
  const OpRegistry& registry = op_registry();
  const std::vector<bool> folds = graph_folding(graph, host).nodes;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& node = graph.nodes[i];
    const OpDef* def = registry.find(node);
    if (!def) {
      node_fail<UnsupportedModelError>(
          node, "op " + node.op_type + " is not supported (supported ops: " + registry.names_joined() + ")");
    }
    if (node.opset < def->min_opset) {
      node_fail<UnsupportedModelError>(node, "opset " + std::to_string(node.opset) +
                                                 " is older than the oldest supported (" +
                                                 std::to_string(def->min_opset) + ")");
    }
    if (def->validate) def->validate(node);
    for (const auto& kv : node.attrs) {  // Note [subgraphs]: each body is checked as a graph too
      if (const GraphPtr* body = std::get_if<GraphPtr>(&kv.second)) validate_graph(**body, backend, host);
    }
    if (def->value_shaped) continue;  // the engine runs it (Note [staged plans])
    if (folds[i]) continue;  // the host computes it when a plan is built
    if (!host_fallback_reason(node, backend, host).empty()) continue;  // a host layer (Note [host fallback])
    const std::string why = backend.unsupported_reason(node);
    if (!why.empty()) node_fail<UnsupportedModelError>(node, why);
  }
}

namespace {

// Note [string tensors]: strings are host values; a device plan refuses the first one it meets.
[[noreturn]] void refuse_string_on_device(const std::string& tensor) {
  throw UnsupportedModelError("tensor '" + tensor + "' is a string tensor: string tensors run on the CPU only (load "
                              "the model with device='cpu')");
}


// "[1,3,32,32], [1,10]": the shapes a plan is for, in messages.
std::string shapes_str(const std::vector<Shape>& shapes) {
  std::string out;
  for (const Shape& s : shapes) out += (out.empty() ? "" : ", ") + shape_str(s);
  return out;
}

// Builds the table of values: graph inputs and constants first, then every node output.
class ValueTable {
 public:
  int find(const std::string& name) const {
    auto it = ids_.find(name);
    return it == ids_.end() ? -1 : it->second;
  }
  int add(PlannedValue value) {
    const int id = static_cast<int>(values_.size());
    ids_[value.name] = id;
    values_.push_back(std::move(value));
    return id;
  }
  PlannedValue& operator[](int id) { return values_[id]; }
  // Another name for a value (an inlined If's output: its branch's value, Note [inlined branches]).
  void alias(const std::string& name, int id) { ids_[name] = id; }
  std::vector<PlannedValue> take() { return std::move(values_); }

 private:
  std::map<std::string, int> ids_;
  std::vector<PlannedValue> values_;
};

// Makes `v` a constant of the plan holding `tensor` (uploaded on a device backend).
void constant_of_plan(Plan& plan, const Backend& backend, PlannedValue& v, ConstTensorPtr tensor) {
  v.storage = Storage::Constant;
  v.constant = tensor.get();
  v.data = tensor->data.data();
  if (plan.device && !tensor->data.empty()) {
    DeviceBuffer buffer;
    buffer.reserve(backend, tensor->data.size());
    device_services(backend, "a folded value").copy_to_device(buffer.data(), v.data, tensor->data.size());
    v.data = buffer.data();
    plan.folded_device.push_back(std::move(buffer));
  }
  plan.folded.push_back(std::move(tensor));
}

// Evaluates a folding node now (Note [plan-time folding]): its outputs become constants of the
// plan (uploaded on a device backend), and its layer runs nothing.
void fold_into_plan(Plan& plan, ValueTable& table, const Backend& backend, const Backend& host, const Node& node,
                    const OpDef& def, const std::vector<ValueInfo>& in_infos, const std::vector<TensorInfo>& out_infos,
                    PlannedLayer& layer) {
  std::vector<std::shared_ptr<ConstTensor>> results = fold_node(host, node, def, in_infos, out_infos);
  for (size_t o = 0; o < node.outputs.size(); ++o) {
    if (!results[o]) {
      layer.outputs.push_back(-1);
      continue;
    }
    PlannedValue v{node.outputs[o], out_infos[o]};
    constant_of_plan(plan, backend, v, std::move(results[o]));
    layer.outputs.push_back(table.add(v));
  }
  layer.algorithm = "folded at plan time (from the input shapes and value inputs)";
  ++plan.folded_nodes;
  plan.layers.push_back(std::move(layer));
}

// A value-shaped node whose inputs are all constants of the plan (Note [staged plans]): its
// outputs are computed now and become constants of the plan.
void evaluate_into_plan(Plan& plan, ValueTable& table, const Backend& backend, const Node& node, const OpDef& def,
                        const std::vector<ValueInfo>& in_infos, PlannedLayer& layer) {
  std::vector<ConstTensorPtr> inputs;
  for (const ValueInfo& v : in_infos) inputs.push_back(v.present ? std::make_shared<ConstTensor>(*v.constant) : nullptr);
  std::vector<ConstTensorPtr> results = def.evaluate(node, inputs);
  for (size_t o = 0; o < node.outputs.size(); ++o) {
    if (node.outputs[o].empty() || o >= results.size() || !results[o]) {
      layer.outputs.push_back(-1);
      continue;
    }
    PlannedValue v{node.outputs[o], results[o]->info};
    constant_of_plan(plan, backend, v, results[o]);
    layer.outputs.push_back(table.add(v));
  }
  layer.algorithm = "folded at plan time (its inputs are constants of the plan)";
  ++plan.folded_nodes;
  plan.layers.push_back(std::move(layer));
}

// Note [inlined branches]: an If whose cond is a constant of the plan (folded from shapes, as
// exports test sizes) does not stage the plan: its chosen branch's nodes are planned here, in
// place of the If, as copies (owned by the plan) whose names are scoped ("<if>/<branch>/<name>")
// and whose outer-scope inputs (Note [subgraphs]) are the If's inputs; the If's outputs are
// names of the branch's values. A branch holding a value-shaped node of its own, reading as a
// shape an outer value that is not a constant of the plan, or whose outputs the graph reads as a
// shape further on, stays staged (its own Engine, and a continuation keyed by those values).
// So a shape-tested If costs nothing per run, and on CUDA the plan stays one graph.
// Whether a later node of `graph` reads one of node `from`'s outputs as a shape (a value slot,
// Note [value inputs]), directly or through nodes the host runs: then those outputs must be
// plan constants, which an inlined branch's computed values are not.
bool outputs_read_as_shapes(const Graph& graph, size_t from, const Backend& host) {
  std::set<std::string> reached;
  for (const std::string& o : graph.nodes[from].outputs) {
    if (!o.empty()) reached.insert(o);
  }
  const OpRegistry& registry = op_registry();
  for (size_t n = from + 1; n < graph.nodes.size(); ++n) {
    const Node& node = graph.nodes[n];
    const OpDef& def = *registry.find(node);
    bool data = false;
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      if (!reached.count(node.inputs[k])) continue;
      if (std::find(def.value_inputs.begin(), def.value_inputs.end(), static_cast<int>(k)) != def.value_inputs.end()) {
        return true;
      }
      data = data || !(def.reads_input0_shape_only && k == 0);
    }
    if (data && (def.value_shaped || host.unsupported_reason(node).empty())) {
      for (const std::string& o : node.outputs) {
        if (!o.empty()) reached.insert(o);
      }
    }
  }
  return false;
}

bool inline_if(Plan& plan, ValueTable& table, const Backend& backend, const Graph& graph, const Node& node,
               const std::vector<ValueInfo>& in_infos, PlannedLayer& layer, const Backend* host,
               const std::function<bool(const Node&, bool)>& place) {
  if (node.op_type != "If" || in_infos.empty() || !in_infos[0].constant ||
      numel(in_infos[0].constant->info.shape) != 1 || !host) {
    return false;
  }
  // Only a node of the graph itself (inlined branches hold no If): its index for the check below.
  if (graph.nodes.empty() || &node < graph.nodes.data() || &node >= graph.nodes.data() + graph.nodes.size()) return false;
  if (outputs_read_as_shapes(graph, static_cast<size_t>(&node - graph.nodes.data()), *host)) return false;
  const ConstTensor& cond = *in_infos[0].constant;
  const std::string branch = truth_of(cond) ? "then_branch" : "else_branch";
  const Graph& g = *node.attr_graph(branch);
  const OpRegistry& registry = op_registry();
  for (const Node& inner : g.nodes) {
    if (registry.find(inner)->value_shaped) return false;
  }
  // What the branch reads as shapes (Note [value inputs]) must be constants here: its own
  // engine would take such an input's value into its key, a plan cannot.
  for (int k : graph_folding(g, host).value_inputs) {
    const int id = table.find(node.inputs.at(1 + static_cast<size_t>(k)));
    if (id < 0 || !table[id].constant) return false;
  }
  const std::string prefix = node.name + "/" + branch + "/";
  std::map<std::string, std::string> names;  // the branch's inputs: the If's outer-scope inputs
  for (size_t k = 0; k < g.inputs.size(); ++k) names[g.inputs[k].name] = node.inputs.at(1 + k);
  const auto scoped = [&](const std::string& name) {
    if (name.empty()) return name;
    auto it = names.find(name);
    return it != names.end() ? it->second : prefix + name;
  };
  for (const auto& [name, tensor] : g.constants) {
    if (names.count(name)) continue;
    PlannedValue v{prefix + name, tensor->info};
    constant_of_plan(plan, backend, v, tensor);
    table.add(v);
  }
  for (const Node& inner : g.nodes) {
    auto copy = std::make_unique<Node>(inner);
    copy->name = prefix + inner.name;
    for (std::string& in : copy->inputs) in = scoped(in);
    for (std::string& out : copy->outputs) out = scoped(out);
    const Node& placed = *copy;
    plan.inlined.push_back(std::move(copy));
    place(placed, host && host->unsupported_reason(placed).empty());
  }
  for (size_t o = 0; o < node.outputs.size() && o < g.outputs.size(); ++o) {
    if (node.outputs[o].empty()) continue;
    const int id = table.find(scoped(g.outputs[o]));
    if (id < 0) node_fail<InvalidModelError>(node, branch + " output '" + g.outputs[o] + "' is not produced by any node");
    table.alias(node.outputs[o], id);
  }
  layer.algorithm = "inlined: " + branch + " (cond known at plan time; Note [inlined branches])";
  plan.layers.push_back(std::move(layer));
  return true;
}

// Note [device staged kernels]: the device kernel of the node a device plan stops at, for its
// input types (the values before it are typed now); the node's host compute where the backend
// has none. Only the ops with a host compute (OpDef::evaluate) ask: If, Loop, Scan and the
// sequence ops are the engine's on every backend.
void plan_stage_kernel(Plan& plan, ValueTable& table, const Backend& backend, const Node& node) {
  const OpDef* def = op_registry().find(node);
  if (!def || !def->evaluate) return;
  std::vector<ValueInfo> inputs;
  for (const std::string& name : node.inputs) {
    const int id = name.empty() ? -1 : table.find(name);
    if (id >= 0 && table[id].kind != ValueKind::Tensor) return;  // a sequence or optional: the engine's
    inputs.push_back(id < 0 ? ValueInfo{{}, nullptr, false} : ValueInfo{table[id].info, table[id].constant, true});
  }
  StagedChoice choice;
  try {
    choice = backend.plan_staged_node(node, inputs);
  } catch (const UnsupportedModelError& e) {
    choice = StagedChoice{};
    choice.host_reason = e.what();
  }
  plan.stage_kernel = std::move(choice.kernel);
  plan.stage_algorithm = std::move(choice.algorithm);
  plan.stage_workspace = plan.stage_kernel ? choice.workspace_bytes : 0;
  plan.stage_host_reason = plan.stage_kernel ? "" : std::move(choice.host_reason);
}

// Note [output over an input]: a kernel may let its output 0 take an input's bytes
// (KernelChoice::overwrites_input: the CPU's Conv+Add+Relu on the packed tiles writes each output
// over the residual element it has just read, Note [residual in place] in conv_nhwc_cpu.cc).
// The planner grants it where that input's buffer is read by no later layer (nor by another
// input of this one), is no graph input or output, and has the output's size: the output's
// root becomes the input's, so the two are one arena block. Host plans only.
void outputs_over_inputs(Plan& plan, std::vector<int>& root) {
  auto root_of = [&](int id) { return id < static_cast<int>(root.size()) ? root[id] : id; };
  std::vector<int> last_read(plan.values.size(), -1);  // value id -> the last step reading it
  for (int step = 0; step < static_cast<int>(plan.layers.size()); ++step) {
    for (int id : plan.layers[step].inputs) {
      if (id >= 0) last_read[id] = step;
    }
  }
  std::vector<bool> kept(plan.values.size(), false);  // graph inputs and outputs
  for (int id : plan.inputs) kept[id] = true;
  for (int id : plan.outputs) kept[id] = true;
  for (int step = 0; step < static_cast<int>(plan.layers.size()); ++step) {
    const PlannedLayer& layer = plan.layers[step];
    const int k = layer.overwrites_input;  // (a reference: the algorithm's note below edits the layer)
    if (k < 0 || k >= static_cast<int>(layer.inputs.size()) || layer.outputs.empty()) continue;
    const int z = layer.inputs[k], y = layer.outputs[0];
    if (z < 0 || y < 0 || root_of(y) != y) continue;
    const PlannedValue &zv = plan.values[z], &yv = plan.values[y];
    const int rz = root_of(z);
    if (zv.storage != Storage::Arena || yv.storage != Storage::Arena || plan.values[rz].storage != Storage::Arena ||
        plan.values[rz].info.bytes() != yv.info.bytes() || zv.info.bytes() != yv.info.bytes()) {
      continue;
    }
    bool free = true;  // no other reader of rz's bytes now or later, and no graph input or output
    for (size_t v = 0; v < plan.values.size() && free; ++v) {
      if (root_of(static_cast<int>(v)) != rz) continue;
      if (kept[v] || last_read[v] > step) free = false;
    }
    for (size_t i = 0; i < layer.inputs.size() && free; ++i) {
      if (static_cast<int>(i) != k && layer.inputs[i] >= 0 && root_of(layer.inputs[i]) == rz) free = false;
    }
    if (!free) continue;
    while (static_cast<int>(root.size()) <= y) root.push_back(static_cast<int>(root.size()));
    root[y] = rz;
    plan.layers[step].algorithm += ", output over input " + std::to_string(k);  // plan() shows it
  }
}

}  // namespace

// Note [empty tensors]: ONNX allows a dim of 0 anywhere (an empty batch, an empty slice), and
// dnnx gives onnxruntime's results for it. One rule covers most of it: a layer whose outputs all
// hold 0 elements has nothing to compute, so the planner gives it no kernel (plan() says
// kEmptyOutput) and neither the host executor nor the device runner runs anything for it (on
// CUDA: no launch, so no zero-size grid); the backend is not even asked to plan it, so no
// kernel's sizing (conv blocks, thread splits, workspaces) ever divides by a zero dim. Folding
// follows the same rule (fold_node). What is left are the kernels whose output is not empty
// while an input is: a reduction over an empty axis (its identity: ReduceSum 0, ReduceProd 1,
// ReduceMax -inf, ReduceMean 0 as onnxruntime gives), MatMul and Gemm with K = 0 (zeros, plus
// Gemm's C), Concat and Pad of an empty input, ScatterND with no updates. The host backend's
// kernels handle these themselves. A device plan runs such a layer on the host (Note [host
// fallback]: kEmptyInputOnHost), so that no device kernel meets an empty input and the results
// are the host's by construction. The price is a copy of the layer's (non-empty) inputs and
// outputs through the host: fine for an empty batch's few such layers, a cost where a hot path
// has one (a Concat onto an empty cache), which a device kernel taking empty inputs would then
// remove. (A fused or channels-last node the host lacks keeps its device kernel, which must then
// handle it.) tests/test_empty_tensors.py runs every op family with an empty dim against
// onnxruntime, tests/test_empty_every_op.py every op of the registry and the CPU backend, and
// tests/cuda/test_cuda_empty_every_op.py the CUDA backend's against the CPU.
bool any_input_empty(const std::vector<ValueInfo>& inputs) {
  return std::any_of(inputs.begin(), inputs.end(),
                     [](const ValueInfo& v) { return v.present && !v.constant && numel(v.info.shape) == 0; });
}

bool outputs_empty(const Node& node, const std::vector<TensorInfo>& outputs) {
  bool any = false;
  for (size_t o = 0; o < node.outputs.size() && o < outputs.size(); ++o) {
    if (node.outputs[o].empty()) continue;
    if (numel(outputs[o].shape) != 0) return false;
    any = true;
  }
  return any;
}

std::shared_ptr<Plan> build_plan(const Graph& graph, const Backend& backend, const PlanKey& key,
                                 const DeviceConstants* device_constants, const Backend* host, bool stage) {
  static std::atomic<uint64_t> next_id{1};
  auto plan = std::make_shared<Plan>();
  plan->id = next_id++;
  plan->input_shapes = key.shapes;
  plan->input_values = key.values;
  plan->input_values.resize(graph.inputs.size());
  plan->device = !backend.uses_host_memory();
  const GraphFolding folding = graph_folding(graph, host);
  // Note [absurd sizes]: every tensor is checked against the device before anything is planned
  // or allocated for it.
  const size_t limit = backend.memory_bytes();
  const std::string device = backend.memory_name();
  ValueTable table;
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    const DType dtype = key.dtypes.empty() ? graph.inputs[i].dtype : key.dtypes.at(i);
    check_fits(TensorInfo{key.shapes[i], dtype}, limit, "input '" + graph.inputs[i].name + "'", device);
    PlannedValue v{graph.inputs[i].name, {key.shapes[i], dtype},
                   plan->device ? Storage::Arena : Storage::GraphInput};
    v.input_index = static_cast<int>(i);
    if (!key.kinds.empty() && key.kinds.at(i) != ValueKind::Tensor) {  // Note [sequences]: no bytes, no copy
      v.kind = key.kinds[i];
      v.storage = Storage::Absent;
    }
    plan->inputs.push_back(table.add(v));
  }
  for (int i : folding.value_inputs) {  // Note [value inputs]: a constant of this plan
    const ConstTensorPtr& value = plan->input_values[i];
    if (!value) {
      throw InputError("input '" + graph.inputs[i].name + "': its value decides shapes (a shape, axes or sizes), "
                       "so a plan needs it: pass the input's data, not only its shape");
    }
    constant_of_plan(*plan, backend, table[plan->inputs[i]], value);
  }
  for (const auto& kv : graph.constants) {
    if (table.find(kv.first) >= 0) continue;  // a graph input shadows an initializer default
    PlannedValue v{kv.first, kv.second->info, Storage::Constant};
    v.constant = kv.second.get();
    v.data = device_constants ? device_constants->find(*v.constant) : v.constant->data.data();
    table.add(v);
  }

  // Pass 1: types, kernels and views, node by node.
  std::vector<int> root;  // value id -> the arena value whose bytes it uses (itself unless a view)
  auto root_of = [&](int id) {
    while (static_cast<int>(root.size()) <= id) root.push_back(static_cast<int>(root.size()));
    return root[id];
  };
  const OpRegistry& registry = op_registry();
  const std::vector<bool>& folds = folding.nodes;
  // Places one node: its layer, its outputs' values. false: the plan stops before it (Note [staged plans]).
  std::function<bool(const Node&, bool)> place;
  place = [&](const Node& node, bool may_fold) -> bool {
    const OpDef& def = *registry.find(node);
    PlannedLayer layer;
    layer.node = &node;
    std::vector<ValueInfo> in_infos;
    for (const std::string& name : node.inputs) {
      if (name.empty()) {
        layer.inputs.push_back(-1);
        in_infos.push_back(ValueInfo{{}, nullptr, false});
        continue;
      }
      const int id = table.find(name);
      if (id < 0) node_fail<InvalidModelError>(node, "input '" + name + "' is not produced by any node");
      layer.inputs.push_back(id);
      in_infos.push_back(ValueInfo{table[id].info, table[id].constant, true});
    }
    // Note [sequences]: a node that reads a sequence or optional ends the plan; the engine runs it.
    for (int id : layer.inputs) {
      if (id >= 0 && table[id].kind != ValueKind::Tensor) return false;
    }
    if (plan->device) {  // Note [string tensors]: refused before any string reaches a device buffer or fold
      for (size_t i = 0; i < in_infos.size(); ++i) {
        if (in_infos[i].present && in_infos[i].info.dtype == DType::String) refuse_string_on_device(node.inputs[i]);
      }
    }
    if (def.value_shaped) {  // Note [staged plans]: folds with constant inputs, else the plan stops here
      const bool known = def.evaluate && std::all_of(in_infos.begin(), in_infos.end(), [](const ValueInfo& v) {
                           return !v.present || v.constant;
                         });
      if (!known && inline_if(*plan, table, backend, graph, node, in_infos, layer, host, place)) return true;
      if (!known) return false;
      evaluate_into_plan(*plan, table, backend, node, def, in_infos, layer);
      return true;
    }
    std::vector<TensorInfo> out_infos = def.infer(node, in_infos);
    if (out_infos.size() < node.outputs.size()) {
      node_fail<InvalidModelError>(node, "has " + std::to_string(node.outputs.size()) +
                                             " outputs, at most " + std::to_string(out_infos.size()) +
                                             " expected");
    }
    out_infos.resize(node.outputs.size());
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      if (plan->device && !node.outputs[o].empty() && out_infos[o].dtype == DType::String) {
        refuse_string_on_device(node.outputs[o]);
      }
      if (!node.outputs[o].empty()) {
        check_fits(out_infos[o], limit, node.where() + " output '" + node.outputs[o] + "'", device);
      }
    }
    if (may_fold && host_can_fold(def, in_infos, out_infos)) {
      fold_into_plan(*plan, table, backend, *host, node, def, in_infos, out_infos, layer);
      return true;
    }
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      if (node.outputs[o].empty()) {
        layer.outputs.push_back(-1);
        continue;
      }
      PlannedValue v{node.outputs[o], out_infos[o], Storage::Arena};
      if (def.aliases_input0 && o == 0) {
        const PlannedValue& src = table[layer.inputs.at(0)];
        v.storage = src.storage;
        v.input_index = src.input_index;
        v.constant = src.constant;
        v.data = src.data;
      }
      const int id = table.add(v);
      layer.outputs.push_back(id);
      root_of(id);
      if (def.aliases_input0 && o == 0) root[id] = root_of(layer.inputs[0]);
    }
    // Note [views with more outputs]: a view's output 0 is its input's bytes, but a view op may
    // have further outputs that hold values of their own (Dropout's mask): such a node also gets
    // the backend's kernel, which writes those outputs and leaves output 0 alone. A plain view
    // runs nothing.
    const bool further_outputs = std::any_of(node.outputs.begin() + std::min<size_t>(1, node.outputs.size()),
                                             node.outputs.end(), [](const std::string& o) { return !o.empty(); });
    if (def.aliases_input0 && !further_outputs) {
      layer.algorithm = "view (no copy)";
    } else if (outputs_empty(node, out_infos)) {  // Note [empty tensors]
      layer.algorithm = def.aliases_input0 ? "view (no copy), " + std::string(kEmptyOutput) : kEmptyOutput;
    } else {
      std::string fallback = plan->device ? host_fallback_reason(node, backend, host) : "";
      if (fallback.empty() && plan->device && host && any_input_empty(in_infos) &&
          host->unsupported_reason(node).empty()) {
        fallback = kEmptyInputOnHost;  // Note [empty tensors]
      }
      KernelChoice choice;
      if (fallback.empty()) {
        try {
          choice = backend.plan_node(node, in_infos, out_infos);
        } catch (const UnsupportedModelError& e) {
          // What the device refuses only for these types or values (integer Max, LSTM peepholes).
          fallback = host_fallback_reason(node, e.what(), backend, host);
          if (fallback.empty()) throw;
        }
      }
      if (!fallback.empty()) {
        choice = plan_on_host(backend, *host, node, in_infos, out_infos, fallback);
        plan->host_layers.push_back(node.where() + ": " + fallback);
      } else if (plan->device && choice.kernel) {  // Note [run-time fallback]
        choice.kernel = std::make_unique<FallbackKernel>(backend, host, node, in_infos, out_infos, choice);
      }
      layer.kernel = std::move(choice.kernel);
      layer.algorithm = def.aliases_input0 ? "view (no copy), " + choice.algorithm : std::move(choice.algorithm);
      layer.math = std::move(choice.math);
      layer.time_ms = choice.time_ms;
      layer.workspace_bytes = choice.workspace_bytes;
      layer.scratch_bytes = choice.scratch_bytes;
      layer.rejected = std::move(choice.rejected);
      layer.overwrites_input = choice.overwrites_input;
      if (!node.layout_reason.empty()) {  // Note [narrow regions]
        layer.rejected.push_back({"channels-last (" + node.op_type + kChannelsLastSuffix + ")", node.layout_reason});
      }
      const size_t needs = add_sat(layer.scratch_bytes, layer.workspace_bytes);
      check_fits(needs, limit, node.where(), "its workspace (" + layer.algorithm + ")", device);
      plan->workspace_bytes = std::max(plan->workspace_bytes, needs);
    }
    plan->layers.push_back(std::move(layer));
    return true;
  };
  {
    const LayersPlanned layers_planned(backend);  // Note [search scratch]
    for (size_t n = 0; n < graph.nodes.size(); ++n) {
      if (place(graph.nodes[n], folds[n])) continue;
      plan->stage_node = static_cast<int>(n);
      plan->staged_at = &graph.nodes[n];
      plan->stage_reason = stage_reason(graph.nodes[n]);
      if (plan->device) plan_stage_kernel(*plan, table, backend, graph.nodes[n]);
      break;
    }
  }
  if (plan->stage_node >= 0) plan->carried = carried_names(graph, static_cast<size_t>(plan->stage_node));
  for (const std::string& name : plan->stage_node >= 0 ? plan->carried : graph.outputs) {
    const int id = table.find(name);
    if (id < 0) throw InvalidModelError("graph output '" + name + "' is not produced by any node");
    plan->outputs.push_back(id);
  }
  if (!plan->folded_device.empty()) backend.synchronize();  // the folded values are on the device
  plan->values = table.take();
  plan->has_strings = std::any_of(plan->values.begin(), plan->values.end(),
                                  [](const PlannedValue& v) { return v.info.dtype == DType::String; });
  if (plan->has_strings && plan->device) {  // Note [string tensors]: strings are host values
    for (const PlannedValue& v : plan->values) {
      if (v.info.dtype == DType::String) refuse_string_on_device(v.name);
    }
  }
  for (PlannedLayer& layer : plan->layers) {
    if (auto* fallback = dynamic_cast<FallbackKernel*>(layer.kernel.get())) fallback->set_workspace_cap(plan->workspace_bytes);
  }
  // Note [unread stage inputs]: a device plan copies each device input into its arena (Note [edge
  // copies]). A stage's continuation takes every value that any later stage reads as an input,
  // and most of them only pass through it (the engine hands them on, Note [stage slots] in
  // runtime/stages.h): torchvision's SSDlite, 90 unrolled per-class blocks of NonZero and TopK,
  // has some 180 stages whose continuations take up to ~270 inputs each. So an input that no layer reads
  // or writes through a view, and that is not an output of the plan, gets no arena bytes and no
  // copy. (Measured on an H100, 2026-12-06, this did not change SSDlite's ~2.7 ms a stage: 502 ms
  // a run before and after, against onnxruntime-gpu's 28; that time is elsewhere.)
  if (plan->device && stage) {
    std::set<int> touched;  // roots read or written by a layer, or handed on as outputs
    for (const PlannedLayer& layer : plan->layers) {
      for (int id : layer.inputs) {
        if (id >= 0) touched.insert(root_of(id));
      }
      for (int id : layer.outputs) {
        if (id >= 0) touched.insert(root_of(id));
      }
    }
    for (int id : plan->outputs) touched.insert(root_of(id));
    for (int id : plan->inputs) {
      PlannedValue& v = plan->values[id];
      if (v.storage == Storage::Arena && !touched.count(id)) v.storage = Storage::Absent;
    }
  }

  const int n_layers = static_cast<int>(plan->layers.size());
  if (!plan->device) outputs_over_inputs(*plan, root);

  // Pass 2: liveness of every arena buffer (a view extends its source's life), then placement.
  std::map<int, ArenaBlock> blocks;  // root value id -> block
  for (int id : plan->inputs) {
    if (plan->values[id].storage != Storage::Arena) continue;
    blocks[id] = ArenaBlock{plan->values[id].info.bytes(), 0, 0};  // written before step 0
    plan->naive_bytes = add_sat(plan->naive_bytes, plan->values[id].info.bytes());
  }
  for (int step = 0; step < n_layers; ++step) {
    const PlannedLayer& layer = plan->layers[step];
    for (int id : layer.outputs) {
      if (id < 0 || plan->values[id].storage != Storage::Arena) continue;
      const int r = root_of(id);
      if (r == id) {
        blocks[r] = ArenaBlock{plan->values[id].info.bytes(), step, step};
        plan->naive_bytes = add_sat(plan->naive_bytes, plan->values[id].info.bytes());
      }
    }
    for (int id : layer.inputs) {
      if (id >= 0 && plan->values[id].storage == Storage::Arena) blocks[root_of(id)].last = step;
    }
    for (int id : layer.outputs) {
      if (id >= 0 && plan->values[id].storage == Storage::Arena) {
        ArenaBlock& b = blocks[root_of(id)];
        b.last = std::max(b.last, step);
      }
    }
  }
  for (int id : plan->outputs) {
    if (plan->values[id].storage == Storage::Arena) blocks[root_of(id)].last = n_layers;
  }
  std::vector<ArenaBlock> placed;
  std::vector<int> placed_roots;
  for (const auto& kv : blocks) {
    placed_roots.push_back(kv.first);
    placed.push_back(kv.second);
  }
  plan->arena_bytes = place_blocks(placed);
  check_fits(add_sat(plan->arena_bytes, plan->workspace_bytes), limit,
             "the plan for input shapes " + shapes_str(key.shapes), "its activations (an arena of " + bytes_str(plan->arena_bytes) + ") and workspace (" +
                 bytes_str(plan->workspace_bytes) + ")",
             device);
  std::map<int, size_t> offset_of;
  for (size_t i = 0; i < placed.size(); ++i) offset_of[placed_roots[i]] = placed[i].offset;
  for (size_t id = 0; id < plan->values.size(); ++id) {
    PlannedValue& v = plan->values[id];
    if (v.storage == Storage::Arena) v.offset = offset_of.at(root_of(static_cast<int>(id)));
  }
  return plan;
}

}  // namespace dnnx
