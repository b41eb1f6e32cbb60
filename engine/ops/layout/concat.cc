// Concat (opsets 1, 4, 11, 13): any number of inputs of one dtype (any dtype) and one rank,
// equal in every dim but `axis`; the output's `axis` dim is the sum of theirs.
#include "ops/layout/concat.h"

#include "ops/op.h"

namespace dnnx {

namespace {

// From opset 4 on, `axis` has no default.
constexpr int kAxisRequiredOpset = 4;
constexpr int64_t kLegacyDefaultAxis = 1;

}  // namespace

int64_t concat_axis(const Node& node, int64_t rank) {
  if (!node.has_attr("axis") && node.opset >= kAxisRequiredOpset) {
    node_fail<InvalidModelError>(node, "attribute 'axis' is required");
  }
  return normalize_axis(node, node.attr_int("axis", kLegacyDefaultAxis), rank);
}

namespace {

// Note [empty concat inputs]: onnxruntime skips an input with no elements: it adds nothing, and
// its dims outside the axis need not match the others' ([2, 0] concatenates with [2, 2] on axis
// 0 into [2, 2]). The shape comes from the first non-empty input; when all are empty, input 0
// is the reference and the axis dims add up as usual ([0, 2] and [0, 2] on axis 1: [0, 4]).
size_t reference_input(const std::vector<ValueInfo>& inputs) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].present && numel(inputs[i].info.shape) != 0) return i;
  }
  return 0;
}

}  // namespace

ConcatLayout concat_layout(const Node& node, const std::vector<ValueInfo>& inputs) {
  const Shape& first = inputs[reference_input(inputs)].info.shape;
  const int64_t axis = concat_axis(node, static_cast<int64_t>(first.size()));
  ConcatLayout layout;
  for (int64_t d = 0; d < axis; ++d) layout.outer *= first[d];
  for (const ValueInfo& v : inputs) {
    if (numel(v.info.shape) == 0) {  // Note [empty concat inputs]: it adds nothing
      layout.chunk_bytes.push_back(0);
      continue;
    }
    int64_t chunk = 1;
    for (size_t d = static_cast<size_t>(axis); d < v.info.shape.size(); ++d) chunk *= v.info.shape[d];
    layout.chunk_bytes.push_back(static_cast<size_t>(chunk) * dtype_size(v.info.dtype));
  }
  return layout;
}

namespace {

std::vector<TensorInfo> infer_concat(const Node& node, const std::vector<ValueInfo>& inputs) {
  if (inputs.empty()) node_fail<InvalidModelError>(node, "needs at least one input");
  for (size_t i = 0; i < inputs.size(); ++i) require_input(node, inputs, i, "inputs");
  const size_t ref = reference_input(inputs);  // Note [empty concat inputs]
  const TensorInfo& first = inputs[ref].info;
  const int64_t axis = concat_axis(node, static_cast<int64_t>(first.shape.size()));
  TensorInfo out = first;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorInfo& x = inputs[i].info;
    if (x.dtype != first.dtype) {
      node_fail<InvalidModelError>(node, "input " + std::to_string(i) + " is " + dtype_name(x.dtype) +
                                             ", input " + std::to_string(ref) + " is " + dtype_name(first.dtype));
    }
    if (x.shape.size() != first.shape.size()) {
      node_fail<InvalidModelError>(node, "input " + std::to_string(i) + " " + shape_str(x.shape) + " and input " +
                                             std::to_string(ref) + " " + shape_str(first.shape) + " differ in rank");
    }
    if (i == ref || (numel(x.shape) == 0 && numel(first.shape) != 0)) continue;
    bool same = true;
    for (size_t d = 0; same && d < x.shape.size(); ++d) {
      same = static_cast<int64_t>(d) == axis || x.shape[d] == first.shape[d];
    }
    if (!same) {
      node_fail<InvalidModelError>(node, "input " + std::to_string(i) + " " + shape_str(x.shape) + " does not match input " +
                                             std::to_string(ref) + " " + shape_str(first.shape) + " outside axis " +
                                             std::to_string(axis));
    }
    out.shape[axis] += x.shape[axis];
  }
  return {out};
}

}  // namespace

void register_concat_ops(OpRegistry& r) {
  OpDef def;
  def.validate = [](const Node& node) { node.expect_only_attrs({"axis"}); };
  def.infer = infer_concat;
  def.min_opset = 1;
  r.add("Concat", std::move(def));
}

}  // namespace dnnx
