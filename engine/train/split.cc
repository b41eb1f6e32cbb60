#include "train/split.h"

#include <algorithm>
#include <map>

#include "runtime/plan_folding.h"

namespace dnnx {

namespace {

size_t first_trainable_node(const Graph& graph, const std::set<std::string>& params) {
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    for (const std::string& in : graph.nodes[i].inputs) {
      if (params.count(in)) return i;
    }
  }
  throw InputError("trainable: no node reads any of the selected parameters");
}

// Copies the constants the nodes read into `g`.
void copy_constants(const Graph& from, Graph& g) {
  for (const Node& node : g.nodes) {
    for (const std::string& in : node.inputs) {
      auto it = from.constants.find(in);
      if (it != from.constants.end()) g.constants[in] = it->second;
    }
  }
}

}  // namespace

GraphSplit split_at_first_trainable(const Graph& graph, const std::set<std::string>& params) {
  if (graph.outputs.empty()) throw InvalidModelError("the model has no outputs");
  const size_t first = first_trainable_node(graph, params);
  GraphSplit s;
  s.head.opset = s.tail.opset = graph.opset;
  s.head.nodes.assign(graph.nodes.begin(), graph.nodes.begin() + static_cast<long>(first));
  // Note [shapes in the tail]: a head node that folds at plan time (a dynamic export's Shape ->
  // Gather -> Concat chain, Note [plan-time folding]) is also copied to the tail's start, so the
  // tail folds the shapes it reads itself. Passed across the boundary, such a value is a tail
  // input that decides shapes, and the tail's plan would need its data before the head runs.
  const std::vector<bool> folds = graph_folding(graph, folding_host()).nodes;
  for (size_t i = 0; i < first; ++i) {
    if (folds[i]) s.tail.nodes.push_back(graph.nodes[i]);
  }
  s.tail.nodes.insert(s.tail.nodes.end(), graph.nodes.begin() + static_cast<long>(first), graph.nodes.end());
  s.tail.outputs = {graph.outputs[0]};
  copy_constants(graph, s.head);
  copy_constants(graph, s.tail);

  std::map<std::string, int> model_input;
  for (size_t i = 0; i < graph.inputs.size(); ++i) model_input[graph.inputs[i].name] = static_cast<int>(i);
  std::set<std::string> head_made;
  for (const Node& node : s.head.nodes) head_made.insert(node.outputs.begin(), node.outputs.end());

  // The head reads model inputs (in model order, so that the caller passes them in that order).
  std::set<std::string> head_reads;
  for (const Node& node : s.head.nodes) head_reads.insert(node.inputs.begin(), node.inputs.end());
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    if (!head_reads.count(graph.inputs[i].name)) continue;
    s.head.inputs.push_back(graph.inputs[i]);
    s.head_from_model_input.push_back(static_cast<int>(i));
  }

  // The boundary: what the tail reads that is neither its own nor a constant, in first-read order.
  std::set<std::string> tail_made;
  for (const Node& node : s.tail.nodes) {
    for (const std::string& in : node.inputs) {
      if (in.empty() || tail_made.count(in) || s.tail.constants.count(in)) continue;
      if (std::any_of(s.tail.inputs.begin(), s.tail.inputs.end(), [&](const GraphInput& g) { return g.name == in; })) {
        continue;
      }
      auto m = model_input.find(in);
      if (m != model_input.end()) {
        s.tail.inputs.push_back(graph.inputs[m->second]);
        s.tail_from_model_input.push_back(m->second);
        s.tail_from_head_output.push_back(-1);
      } else if (head_made.count(in)) {
        GraphInput boundary;
        boundary.name = in;
        s.tail.inputs.push_back(boundary);  // dims and dtype: from the head's plan
        s.tail_from_model_input.push_back(-1);
        s.tail_from_head_output.push_back(static_cast<int>(s.head.outputs.size()));
        s.head.outputs.push_back(in);
      } else {
        throw InvalidModelError("tensor '" + in + "' is read by the model but produced by no node");
      }
    }
    tail_made.insert(node.outputs.begin(), node.outputs.end());
  }
  if (!tail_made.count(graph.outputs[0])) {
    throw InputError("trainable: the model's output '" + graph.outputs[0] +
                     "' does not depend on any selected parameter");
  }
  return s;
}

}  // namespace dnnx
