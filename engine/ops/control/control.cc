// If, Loop and Scan: ops with subgraphs (Note [subgraphs] in ir/graph.h). Their meaning here is
// the attribute and arity checks; the engine runs them (runtime/control/), each body planned like
// a graph, between plan stages (Note [staged plans] in runtime/stages.h).
#include "ops/op.h"

namespace dnnx {

namespace {

std::vector<TensorInfo> run_by_engine(const Node& node, const std::vector<ValueInfo>&) {
  node_fail<InvalidModelError>(node, "its outputs are known only once the engine has run it (Note [staged plans])");
}

size_t count(const std::vector<std::string>& names) { return names.size(); }

void expect_body(const Node& node, const char* attr, size_t inputs, size_t outputs) {
  const Graph& body = *node.attr_graph(attr);
  if (body.inputs.size() != inputs || count(body.outputs) != outputs) {
    node_fail<InvalidModelError>(node, std::string(attr) + " has " + std::to_string(body.inputs.size()) + " inputs and " +
                                           std::to_string(body.outputs.size()) + " outputs; the node's inputs and outputs call for " +
                                           std::to_string(inputs) + " and " + std::to_string(outputs));
  }
}

// If: cond, then the outer-scope values. Each branch takes the outer values and gives one value
// per node output (their shapes may differ between branches).
void validate_if(const Node& node) {
  node.expect_only_attrs({"then_branch", "else_branch", kCapturedAttr});
  const size_t captured = node.captured_inputs();
  if (node.inputs.size() != 1 + captured || node.inputs[0].empty()) {
    node_fail<InvalidModelError>(node, "takes one input (cond)");
  }
  expect_body(node, "then_branch", captured, node.outputs.size());
  expect_body(node, "else_branch", captured, node.outputs.size());
}

// Loop: M (optional), cond (optional), N loop-carried values, then the outer values. The body
// takes (iteration, cond, N carried, outer) and gives (cond, N carried, K scan outputs); the
// node gives the N final carried values and the K scan outputs stacked along a new axis 0.
void validate_loop(const Node& node) {
  node.expect_only_attrs({"body", kCapturedAttr});
  const size_t captured = node.captured_inputs();
  if (node.inputs.size() < 2 + captured) node_fail<InvalidModelError>(node, "takes M and cond (either may be \"\")");
  const size_t carried = node.inputs.size() - 2 - captured;
  const size_t body_out = node.attr_graph("body")->outputs.size();
  if (body_out < 1 + carried || node.outputs.size() != body_out - 1) {
    node_fail<InvalidModelError>(node, "body has " + std::to_string(body_out) + " outputs: 1 + " + std::to_string(carried) +
                                           " carried + the scan outputs expected, with one node output each but cond");
  }
  expect_body(node, "body", 2 + carried + captured, body_out);
}

// Scan (opset 9+): N state values, M scan inputs (num_scan_inputs), then the outer values. The
// body takes (N states, M slices, outer) and gives (N states, K per-iteration outputs).
// Scan-8 has a leading sequence_lens input, batched states and inputs, and `directions`.
void validate_scan(const Node& node) {
  if (node.opset < 9) {
    node.expect_only_attrs({"body", "num_scan_inputs", "directions", kCapturedAttr});
  } else {
    node.expect_only_attrs({"body", "num_scan_inputs", "scan_input_axes", "scan_input_directions", "scan_output_axes",
                            "scan_output_directions", kCapturedAttr});
  }
  const size_t captured = node.captured_inputs();
  const int64_t m = node.attr_int("num_scan_inputs", -1);
  const size_t lens = node.opset < 9 ? 1 : 0;
  if (node.inputs.size() < captured + lens) node_fail<InvalidModelError>(node, "takes sequence_lens (may be \"\")");
  const size_t formal = node.inputs.size() - captured - lens;
  if (m < 1 || static_cast<size_t>(m) > formal) {
    node_fail<InvalidModelError>(node, "num_scan_inputs must be in [1, " + std::to_string(formal) + "], got " +
                                           std::to_string(m));
  }
  const size_t states = formal - static_cast<size_t>(m);
  const size_t body_out = node.attr_graph("body")->outputs.size();
  if (body_out < states || node.outputs.size() != body_out) {
    node_fail<InvalidModelError>(node, "body has " + std::to_string(body_out) + " outputs; " + std::to_string(states) +
                                           " states + the scan outputs expected, one node output each");
  }
  expect_body(node, "body", formal + captured, body_out);
  if (lens) return;
  const auto per_input = [&](const char* attr, size_t n) {
    const std::vector<int64_t> v = node.attr_ints(attr, {});
    if (!v.empty() && v.size() != n) {
      node_fail<InvalidModelError>(node, std::string(attr) + " has " + std::to_string(v.size()) + " entries, " +
                                             std::to_string(n) + " expected");
    }
  };
  per_input("scan_input_axes", static_cast<size_t>(m));
  per_input("scan_input_directions", static_cast<size_t>(m));
  per_input("scan_output_axes", body_out - states);
  per_input("scan_output_directions", body_out - states);
}

OpDef control_op(void (*validate)(const Node&), int min_opset) {
  OpDef def;
  def.validate = validate;
  def.infer = run_by_engine;
  def.value_shaped = true;
  def.min_opset = min_opset;
  return def;
}

}  // namespace

void register_control_ops(OpRegistry& r) {
  r.add("If", control_op(validate_if, 1));
  r.add("Loop", control_op(validate_loop, 1));
  r.add("Scan", control_op(validate_scan, 8));
}

}  // namespace dnnx
