// If and Loop, run by the engine on the host between plan stages (Note [staged plans] in
// runtime/stages.h), with onnxruntime's semantics; each body runs through its own Engine, planned
// per input shape (a carried value that grows gets a plan per size, reused when sizes repeat).
#include "runtime/control/dynamic_node.h"
#include "runtime/control/slices.h"
#include "runtime/engine.h"

namespace dnnx {

// A body output's type for a scan output of no iterations: the body's declared type and dims
// (unknown dims as 0 elements are not known: such an output is [0]).
ConstTensorPtr empty_scan_output(const Graph& body, size_t output, int64_t axis) {
  Shape shape;
  DType dtype = DType::Float32;
  if (output < body.output_decls.size()) {
    const GraphInput& decl = body.output_decls[output];
    dtype = decl.dtype;
    bool known = true;
    for (int64_t d : decl.dims) known = known && d >= 0;
    if (known) shape = decl.dims;
  }
  if (axis > static_cast<int64_t>(shape.size())) axis = static_cast<int64_t>(shape.size());
  shape.insert(shape.begin() + axis, 0);
  return stack_along({}, 0, shape, dtype);
}

// Checks a scan output of one iteration against the first one's type: they are stacked.
void expect_same(const Node& node, const std::vector<ConstTensorPtr>& parts, const ConstTensorPtr& next, size_t k) {
  if (!parts.empty() && (parts[0]->info.shape != next->info.shape || parts[0]->info.dtype != next->info.dtype)) {
    node_fail<InvalidModelError>(node, "scan output " + std::to_string(k) + " changed from " + parts[0]->info.str() +
                                           " to " + next->info.str() + " between iterations; they are stacked");
  }
}

std::vector<HostValue> run_if(Engine& owner, const Node& node, const std::vector<HostValue>& inputs) {
  const ConstTensor& cond = *tensor_of(node, inputs.at(0), "cond");
  if (numel(cond.info.shape) != 1) {
    node_fail<InvalidModelError>(node, "cond must hold one element, got " + cond.info.str());
  }
  Engine& branch = owner.body(node, truth_of(cond) ? "then_branch" : "else_branch");
  return branch.run_values(std::vector<HostValue>(inputs.begin() + 1, inputs.end()));
}

// Loop: for (i = 0; (M absent or i < M) && (cond absent or cond); ++i) the body maps
// (i, cond, carried..., outer...) to (cond, carried..., scan parts...). The body's cond output
// is read after every iteration (as onnxruntime does). Outputs: the final carried values, then
// each scan output's parts stacked along a new axis 0. Carried values may be sequences or
// optionals (Note [sequences]); scan outputs are tensors.
std::vector<HostValue> run_loop(Engine& owner, const Node& node, const std::vector<HostValue>& inputs) {
  const size_t captured = node.captured_inputs();
  const size_t formal = inputs.size() - captured;
  const size_t n_carried = formal - 2;
  Engine& body = owner.body(node, "body");
  const size_t n_scans = body.graph().outputs.size() - 1 - n_carried;
  ConstTensorPtr limits[2];
  for (int k = 0; k < 2; ++k) {
    if (!inputs[k].present()) continue;
    limits[k] = tensor_of(node, inputs[k], k == 0 ? "M" : "cond");
    if (numel(limits[k]->info.shape) != 1) {
      node_fail<InvalidModelError>(node, std::string(k == 0 ? "M" : "cond") + " must hold one element, got " +
                                             limits[k]->info.str());
    }
  }
  if (limits[0] && !is_integer(limits[0]->info.dtype)) {
    node_fail<InvalidModelError>(node, "M must be an integer, got " + limits[0]->info.str());
  }
  const int64_t trips = limits[0] ? int_of(*limits[0]) : INT64_MAX;
  bool cond = limits[1] ? truth_of(*limits[1]) : true;
  std::vector<HostValue> carried(inputs.begin() + 2, inputs.begin() + static_cast<std::ptrdiff_t>(formal));
  std::vector<std::vector<ConstTensorPtr>> scans(n_scans);
  std::vector<HostValue> args;
  for (int64_t i = 0; i < trips && cond; ++i) {
    args.assign({HostValue(scalar_int64(i)), HostValue(scalar_bool(cond))});
    args.insert(args.end(), carried.begin(), carried.end());
    args.insert(args.end(), inputs.begin() + static_cast<std::ptrdiff_t>(formal), inputs.end());
    std::vector<HostValue> outs = body.run_values(args);
    const ConstTensor& next = *tensor_of(node, outs[0], "the body's cond output");
    if (numel(next.info.shape) != 1) {
      node_fail<InvalidModelError>(node, "the body's cond output must hold one element, got " + next.info.str());
    }
    cond = truth_of(next);
    for (size_t c = 0; c < n_carried; ++c) carried[c] = outs[1 + c];
    for (size_t k = 0; k < n_scans; ++k) {
      const ConstTensorPtr& part = tensor_of(node, outs[1 + n_carried + k], "scan output " + std::to_string(k));
      expect_same(node, scans[k], part, k);
      scans[k].push_back(part);
    }
  }
  std::vector<HostValue> results = carried;
  for (size_t k = 0; k < n_scans; ++k) {
    results.push_back(scans[k].empty() ? empty_scan_output(body.graph(), 1 + n_carried + k, 0)
                                       : stack_along(scans[k], 0, {}, DType::Float32));
  }
  return results;
}

}  // namespace dnnx
