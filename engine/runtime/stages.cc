#include "runtime/stages.h"

#include <unordered_map>
#include <unordered_set>

#include "ops/op.h"
#include "runtime/values/value_ops.h"

namespace dnnx {

namespace {

// Names read by nodes [from, end) and by the graph outputs, in first-read order.
std::vector<std::string> read_from(const Graph& graph, size_t from) {
  std::vector<std::string> out;
  std::unordered_set<std::string> seen;
  auto add = [&](const std::string& name) {
    if (!name.empty() && seen.insert(name).second) out.push_back(name);
  };
  for (size_t n = from; n < graph.nodes.size(); ++n) {
    for (const std::string& name : graph.nodes[n].inputs) add(name);
  }
  for (const std::string& name : graph.outputs) add(name);
  return out;
}

std::unordered_set<std::string> produced_before(const Graph& graph, size_t end) {
  std::unordered_set<std::string> out;
  for (size_t n = 0; n < end && n < graph.nodes.size(); ++n) {
    for (const std::string& name : graph.nodes[n].outputs) {
      if (!name.empty()) out.insert(name);
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> carried_names(const Graph& graph, size_t cut) {
  const std::unordered_set<std::string> produced = produced_before(graph, cut);
  std::vector<std::string> out;
  for (const std::string& name : read_from(graph, cut)) {
    if (produced.count(name)) out.push_back(name);
  }
  return out;
}

Graph continuation_graph(const Graph& graph, size_t cut) {
  Graph rest;
  rest.opset = graph.opset;
  rest.outputs = graph.outputs;
  rest.nodes.assign(graph.nodes.begin() + static_cast<std::ptrdiff_t>(cut) + 1, graph.nodes.end());
  const std::unordered_set<std::string> produced = produced_before(graph, cut + 1);
  std::unordered_set<std::string> inputs;
  for (const GraphInput& in : graph.inputs) inputs.insert(in.name);
  const std::vector<std::string> read = read_from(graph, cut + 1);
  // The constants the rest reads (a subgraph reads the outer scope through its node's inputs,
  // Note [subgraphs]), not all of them: a device engine uploads each constant it holds, and
  // SSDlite's ~180 continuations each held all of the model's weights.
  for (const std::string& name : read) {
    auto c = graph.constants.find(name);
    if (c != graph.constants.end()) rest.constants.insert(*c);
  }
  for (const std::string& name : read) {
    if (!produced.count(name) && !inputs.count(name)) continue;  // a constant, or produced later
    GraphInput in;
    in.name = name;  // dims and dtype: the parent's key (PlanKey::dtypes) gives them per run
    rest.inputs.push_back(std::move(in));
  }
  return rest;
}

StageSlots stage_slots(const Graph& graph, const std::vector<std::string>& carried, size_t cut, const Graph* rest) {
  std::unordered_map<std::string, int> slot_of;  // later names take the slot (as a map's assignment would)
  StageSlots slots;
  auto place = [&](const std::string& name) {
    const int slot = slots.size++;
    if (!name.empty()) slot_of[name] = slot;
    return slot;
  };
  for (const GraphInput& in : graph.inputs) place(in.name);
  for (const std::string& name : carried) place(name);
  const Node& node = graph.nodes.at(cut);
  auto find = [&](const std::string& name) {
    auto it = name.empty() ? slot_of.end() : slot_of.find(name);
    return it == slot_of.end() ? -1 : it->second;
  };
  for (const std::string& name : node.inputs) slots.node_inputs.push_back(find(name));
  for (const std::string& name : node.outputs) slots.node_outputs.push_back(name.empty() ? -1 : place(name));
  if (!rest) {
    for (const std::string& name : graph.outputs) slots.results.push_back(find(name));
  } else {
    for (const GraphInput& in : rest->inputs) slots.rest_inputs.push_back(find(in.name));
  }
  return slots;
}

std::string stage_reason(const Node& node) {
  const std::string who = node.op_type + " '" + node.name + "'";
  if (node.op_type == "If") return who + " chooses its branch at run time";
  if (node.op_type == "Loop") return who + " runs its body a value-dependent number of times";
  if (node.op_type == "Scan") return who + " runs its body once per slice, on the host's schedule";
  if (is_value_op(node)) return who + " makes or reads a sequence or optional value, which the engine holds on the host";
  const OpDef* def = op_registry().find(node);
  if (def && !def->value_shaped) return who + " reads a sequence or optional value, which the engine holds on the host";
  return who + " has a value-dependent output shape";
}

}  // namespace dnnx
