// Scan (opset 8, and 9+), run by the engine on the host between plan stages (Note [staged plans] in
// runtime/stages.h), with onnxruntime's semantics; the body runs through its own Engine.
#include <algorithm>

#include "ops/op.h"
#include "runtime/control/dynamic_node.h"
#include "runtime/control/slices.h"
#include "runtime/engine.h"

namespace dnnx {

ConstTensorPtr empty_scan_output(const Graph& body, size_t output, int64_t axis);

namespace {

// One scan: the body over L slices of each scan input, states threaded through. parts[k]: the
// k-th per-iteration output of each iteration, in iteration order.
struct ScanRun {
  std::vector<ConstTensorPtr> states;
  std::vector<std::vector<ConstTensorPtr>> parts;
};

ScanRun scan_once(Engine& body, const Node& node, std::vector<ConstTensorPtr> states,
                  const std::vector<ConstTensorPtr>& scanned, const std::vector<int64_t>& axes,
                  const std::vector<int64_t>& dirs, const std::vector<ConstTensorPtr>& outer) {
  const size_t n_states = states.size();
  const size_t n_scans = body.graph().outputs.size() - n_states;
  int64_t length = -1;
  for (size_t j = 0; j < scanned.size(); ++j) {
    const TensorInfo& info = scanned[j]->info;
    const int64_t l = info.shape[axes[j]];
    if (length >= 0 && l != length) {
      node_fail<InvalidModelError>(node, "scan input " + std::to_string(j) + " " + info.str() + " has " + std::to_string(l) +
                                             " slices along axis " + std::to_string(axes[j]) + ", the first has " +
                                             std::to_string(length));
    }
    length = l;
  }
  ScanRun run{std::move(states), std::vector<std::vector<ConstTensorPtr>>(n_scans)};
  std::vector<ConstTensorPtr> args;
  for (int64_t t = 0; t < length; ++t) {
    args = run.states;
    for (size_t j = 0; j < scanned.size(); ++j) {
      args.push_back(slice_along(*scanned[j], axes[j], dirs[j] == 1 ? length - 1 - t : t));
    }
    args.insert(args.end(), outer.begin(), outer.end());
    std::vector<ConstTensorPtr> outs = body.run_tensors(args);
    for (size_t s = 0; s < n_states; ++s) run.states[s] = outs[s];
    for (size_t k = 0; k < n_scans; ++k) {
      const ConstTensorPtr& part = outs[n_states + k];
      std::vector<ConstTensorPtr>& seen = run.parts[k];
      if (!seen.empty() && (seen[0]->info.shape != part->info.shape || seen[0]->info.dtype != part->info.dtype)) {
        node_fail<InvalidModelError>(node, "scan output " + std::to_string(k) + " changed from " + seen[0]->info.str() +
                                               " to " + part->info.str() + " between iterations");
      }
      seen.push_back(part);
    }
  }
  return run;
}

// Scan-8: sequence_lens (optional), N states [B, ..], M scan inputs [B, L, ..] (directions), then
// the outer values: one scan per batch entry b (its slices along axis 1), results stacked along
// a new axis 0. A sequence_lens entry shorter than L (onnxruntime pads the outputs) is refused.
std::vector<ConstTensorPtr> run_scan8(Engine& body, const Node& node, const std::vector<ConstTensorPtr>& inputs) {
  const size_t captured = node.captured_inputs();
  const size_t formal = inputs.size() - captured;
  const size_t m = static_cast<size_t>(node.attr_int("num_scan_inputs", 1));
  const size_t n_states = formal - 1 - m;
  const size_t n_scans = body.graph().outputs.size() - n_states;
  std::vector<int64_t> dirs = node.attr_ints("directions", {});
  if (dirs.empty()) dirs.assign(m, 0);
  if (dirs.size() != m) {
    node_fail<InvalidModelError>(node, "directions has " + std::to_string(dirs.size()) + " entries, " + std::to_string(m) +
                                           " expected (one per scan input)");
  }
  const std::vector<ConstTensorPtr> outer(inputs.begin() + static_cast<std::ptrdiff_t>(formal), inputs.end());
  const ConstTensor& first = *inputs[1 + n_states];
  if (first.info.shape.size() < 2) node_fail<InvalidModelError>(node, "scan inputs must be [batch, sequence, ...], got " + first.info.str());
  const int64_t batch = first.info.shape[0], length = first.info.shape[1];
  for (size_t k = 1; k < formal; ++k) {  // every state [B, ..] and scan input [B, L, ..]
    const TensorInfo& info = inputs[k]->info;
    const bool scanned = k > n_states;
    if (info.shape.size() < (scanned ? 2u : 1u) || info.shape[0] != batch || (scanned && info.shape[1] != length)) {
      node_fail<InvalidModelError>(node, std::string(scanned ? "scan input " : "state ") + info.str() +
                                             " does not match the batch " + std::to_string(batch) +
                                             (scanned ? " and sequence " + std::to_string(length) : std::string()) +
                                             " of the first scan input " + first.info.str());
    }
  }
  if (inputs[0]) {
    for (int64_t l : inputs[0]->to_int64()) {
      if (l != length) {
        node_fail<UnsupportedModelError>(node, "sequence_lens entry " + std::to_string(l) + " is shorter than the sequence (" +
                                                   std::to_string(length) + "); only full-length sequences are supported");
      }
    }
  }
  std::vector<std::vector<ConstTensorPtr>> per_batch(n_states + n_scans);
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<ConstTensorPtr> states, scanned;
    for (size_t s = 0; s < n_states; ++s) states.push_back(slice_along(*inputs[1 + s], 0, b));
    for (size_t j = 0; j < m; ++j) scanned.push_back(slice_along(*inputs[1 + n_states + j], 0, b));
    ScanRun run = scan_once(body, node, states, scanned, std::vector<int64_t>(m, 0), dirs, outer);
    for (size_t s = 0; s < n_states; ++s) per_batch[s].push_back(run.states[s]);
    for (size_t k = 0; k < n_scans; ++k) {
      per_batch[n_states + k].push_back(run.parts[k].empty() ? empty_scan_output(body.graph(), n_states + k, 0)
                                                             : stack_along(run.parts[k], 0, {}, DType::Float32));
    }
  }
  std::vector<ConstTensorPtr> results;
  for (size_t o = 0; o < per_batch.size(); ++o) {
    results.push_back(per_batch[o].empty() ? empty_scan_output(body.graph(), o, 0) : stack_along(per_batch[o], 0, {}, DType::Float32));
  }
  return results;
}

}  // namespace

// Scan-9+: N states, M scan inputs [.., L, ..] (each along scan_input_axes[j], default 0; read
// backwards where scan_input_directions[j] is 1), then the outer values. Iteration t feeds the
// body (states, each scan input's slice t (axis removed), outer) and takes (states, K parts);
// output k stacks the L parts along a new axis scan_output_axes[k] (default 0), in reverse
// where scan_output_directions[k] is 1.
std::vector<ConstTensorPtr> run_scan(Engine& owner, const Node& node, const std::vector<ConstTensorPtr>& inputs) {
  Engine& body = owner.body(node, "body");
  if (node.opset < 9) return run_scan8(body, node, inputs);
  const size_t captured = node.captured_inputs();
  const size_t formal = inputs.size() - captured;
  const size_t m = static_cast<size_t>(node.attr_int("num_scan_inputs", 1));
  const size_t n_states = formal - m;
  const size_t n_scans = body.graph().outputs.size() - n_states;
  const auto list = [&](const char* attr, size_t n) {
    std::vector<int64_t> v = node.attr_ints(attr, {});
    if (v.empty()) v.assign(n, 0);
    return v;
  };
  const std::vector<int64_t> in_axes = list("scan_input_axes", m), in_dirs = list("scan_input_directions", m);
  const std::vector<int64_t> out_axes = list("scan_output_axes", n_scans), out_dirs = list("scan_output_directions", n_scans);
  std::vector<int64_t> axes(m);
  std::vector<ConstTensorPtr> scanned;
  for (size_t j = 0; j < m; ++j) {
    scanned.push_back(inputs[n_states + j]);
    if (scanned[j]->info.shape.empty()) node_fail<InvalidModelError>(node, "scan input " + std::to_string(j) + " is a scalar");
    axes[j] = normalize_axis(node, in_axes[j], static_cast<int64_t>(scanned[j]->info.shape.size()));
  }
  ScanRun run = scan_once(body, node, std::vector<ConstTensorPtr>(inputs.begin(), inputs.begin() + static_cast<std::ptrdiff_t>(n_states)),
                          scanned, axes, in_dirs,
                          std::vector<ConstTensorPtr>(inputs.begin() + static_cast<std::ptrdiff_t>(formal), inputs.end()));
  std::vector<ConstTensorPtr> results = run.states;
  for (size_t k = 0; k < n_scans; ++k) {
    std::vector<ConstTensorPtr>& parts = run.parts[k];
    if (parts.empty()) {
      results.push_back(empty_scan_output(body.graph(), n_states + k, std::max<int64_t>(out_axes[k], 0)));
      continue;
    }
    if (out_dirs[k] == 1) std::reverse(parts.begin(), parts.end());
    const int64_t rank = static_cast<int64_t>(parts[0]->info.shape.size()) + 1;
    results.push_back(stack_along(parts, normalize_axis(node, out_axes[k], rank), {}, DType::Float32));
  }
  return results;
}

}  // namespace dnnx
