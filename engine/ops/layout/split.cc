// Split: X (any dtype) -> one output per part along `axis`, each X's slice of that size.
#include "ops/layout/split.h"

#include <algorithm>
#include <numeric>

#include "ops/const_inputs.h"
#include "ops/op.h"

namespace dnnx {

namespace {

constexpr int kSplitAsInputOpset = 13;
constexpr int kNumOutputsOpset = 18;
constexpr size_t kSplitInput = 1;

void validate_split(const Node& node) {
  if (node.opset < kSplitAsInputOpset) {
    node.expect_only_attrs({"axis", "split"});
  } else if (node.opset < kNumOutputsOpset) {
    node.expect_only_attrs({"axis"});
  } else {
    node.expect_only_attrs({"axis", "num_outputs"});
  }
}

std::vector<TensorInfo> infer_split(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "input");
  const SplitParts parts = split_parts(node, inputs, x.shape);
  std::vector<TensorInfo> out;
  for (int64_t size : parts.sizes) {
    TensorInfo part = x;
    part.shape[parts.axis] = size;
    out.push_back(part);
  }
  return out;
}

}  // namespace

SplitParts split_parts(const Node& node, const std::vector<ValueInfo>& inputs, const Shape& x) {
  SplitParts p;
  p.axis = normalize_axis(node, node.attr_int("axis", 0), static_cast<int64_t>(x.size()));
  const int64_t dim = x[p.axis];
  const int64_t outputs = static_cast<int64_t>(node.outputs.size());
  if (node.opset < kSplitAsInputOpset) {
    p.sizes = node.attr_ints("split", {});
  } else {
    p.sizes = optional_constant_ints(node, inputs, kSplitInput, "split").value_or(std::vector<int64_t>{});
  }
  if (p.sizes.empty()) {
    const int64_t parts = node.has_attr("num_outputs") ? node.attr_int("num_outputs", 0) : outputs;
    if (parts != outputs || parts < 1) {
      node_fail<InvalidModelError>(node, "num_outputs " + std::to_string(parts) + " does not match its " +
                                             std::to_string(outputs) + " outputs");
    }
    const bool uneven_allowed = node.has_attr("num_outputs");
    if (!uneven_allowed && dim % parts != 0) {
      node_fail<InvalidModelError>(node, "dim " + std::to_string(p.axis) + " of " + shape_str(x) +
                                             " does not split into " + std::to_string(parts) + " equal parts");
    }
    const int64_t chunk = (dim + parts - 1) / parts;
    for (int64_t i = 0; i < parts; ++i) p.sizes.push_back(std::max<int64_t>(0, std::min(chunk, dim - i * chunk)));
  }
  if (static_cast<int64_t>(p.sizes.size()) != outputs) {
    node_fail<InvalidModelError>(node, "split " + shape_str(p.sizes) + " has " + std::to_string(p.sizes.size()) +
                                           " parts for " + std::to_string(outputs) + " outputs");
  }
  const int64_t total = std::accumulate(p.sizes.begin(), p.sizes.end(), int64_t{0});
  for (int64_t s : p.sizes) {
    if (s < 0) node_fail<InvalidModelError>(node, "split " + shape_str(p.sizes) + " has a negative size");
  }
  if (total != dim) {
    node_fail<InvalidModelError>(node, "split " + shape_str(p.sizes) + " sums to " + std::to_string(total) +
                                           ", but dim " + std::to_string(p.axis) + " of " + shape_str(x) +
                                           " is " + std::to_string(dim));
  }
  return p;
}

void register_split_ops(OpRegistry& r) {
  OpDef def;
  def.validate = validate_split;
  def.infer = infer_split;
  def.value_inputs = {kSplitInput};
  r.add("Split", std::move(def));
}

}  // namespace dnnx
