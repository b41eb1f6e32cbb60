// Scan (opset 9+), run by the engine on the host between plan stages (Note [staged plans] in
// runtime/stages.h), with onnxruntime's semantics; the body runs through its own Engine.
#include <algorithm>

#include "ops/op.h"
#include "runtime/control/dynamic_node.h"
#include "runtime/control/slices.h"
#include "runtime/engine.h"

namespace dnnx {

ConstTensorPtr empty_scan_output(const Graph& body, size_t output, int64_t axis);

// Inputs: N states, M scan inputs [.., L, ..] (each along scan_input_axes[j], default 0; read
// backwards where scan_input_directions[j] is 1), then the outer values. Iteration t feeds the
// body (states, each scan input's slice t (axis removed), outer) and takes (states, K parts);
// output k stacks the L parts along a new axis scan_output_axes[k] (default 0), in reverse
// where scan_output_directions[k] is 1.
std::vector<ConstTensorPtr> run_scan(Engine& owner, const Node& node, const std::vector<ConstTensorPtr>& inputs) {
  const size_t captured = node.captured_inputs();
  const size_t formal = inputs.size() - captured;
  const size_t m = static_cast<size_t>(node.attr_int("num_scan_inputs", 1));
  const size_t n_states = formal - m;
  Engine& body = owner.body(node, "body");
  const size_t n_scans = body.graph().outputs.size() - n_states;
  const auto list = [&](const char* attr, size_t n) {
    std::vector<int64_t> v = node.attr_ints(attr, {});
    if (v.empty()) v.assign(n, 0);
    return v;
  };
  const std::vector<int64_t> in_axes = list("scan_input_axes", m), in_dirs = list("scan_input_directions", m);
  const std::vector<int64_t> out_axes = list("scan_output_axes", n_scans), out_dirs = list("scan_output_directions", n_scans);
  std::vector<int64_t> axes(m);
  int64_t length = -1;
  for (size_t j = 0; j < m; ++j) {
    const TensorInfo& info = inputs[n_states + j]->info;
    axes[j] = normalize_axis(node, in_axes[j], static_cast<int64_t>(info.shape.size()));
    const int64_t l = info.shape[axes[j]];
    if (length >= 0 && l != length) {
      node_fail<InvalidModelError>(node, "scan input " + std::to_string(j) + " " + info.str() + " has " + std::to_string(l) +
                                             " slices along axis " + std::to_string(axes[j]) + ", the first has " +
                                             std::to_string(length));
    }
    length = l;
  }
  std::vector<ConstTensorPtr> states(inputs.begin(), inputs.begin() + static_cast<std::ptrdiff_t>(n_states));
  std::vector<std::vector<ConstTensorPtr>> parts(n_scans);
  std::vector<ConstTensorPtr> args;
  for (int64_t t = 0; t < length; ++t) {
    args = states;
    for (size_t j = 0; j < m; ++j) {
      args.push_back(slice_along(*inputs[n_states + j], axes[j], in_dirs[j] == 1 ? length - 1 - t : t));
    }
    args.insert(args.end(), inputs.begin() + static_cast<std::ptrdiff_t>(formal), inputs.end());
    std::vector<ConstTensorPtr> outs = body.run_tensors(args);
    for (size_t s = 0; s < n_states; ++s) states[s] = outs[s];
    for (size_t k = 0; k < n_scans; ++k) {
      const ConstTensorPtr& part = outs[n_states + k];
      if (!parts[k].empty() && (parts[k][0]->info.shape != part->info.shape || parts[k][0]->info.dtype != part->info.dtype)) {
        node_fail<InvalidModelError>(node, "scan output " + std::to_string(k) + " changed from " +
                                               parts[k][0]->info.str() + " to " + part->info.str() + " between iterations");
      }
      parts[k].push_back(part);
    }
  }
  std::vector<ConstTensorPtr> results = states;
  for (size_t k = 0; k < n_scans; ++k) {
    if (parts[k].empty()) {
      results.push_back(empty_scan_output(body.graph(), n_states + k, std::max<int64_t>(out_axes[k], 0)));
      continue;
    }
    if (out_dirs[k] == 1) std::reverse(parts[k].begin(), parts[k].end());
    const int64_t rank = static_cast<int64_t>(parts[k][0]->info.shape.size()) + 1;
    results.push_back(stack_along(parts[k], normalize_axis(node, out_axes[k], rank), {}, DType::Float32));
  }
  return results;
}

}  // namespace dnnx
