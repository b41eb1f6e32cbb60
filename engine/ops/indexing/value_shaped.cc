// NonMaxSuppression and Unique: their OpDefs check attributes, input counts and types; their
// outputs' first dim is the count the values decide (NonMaxSuppression's selected boxes
// [num_selected, 3] int64; Unique's Y [num_unique] (flat) or X's shape with num_unique on axis,
// indices, inverse_indices, counts int64), computed on the host by backends/cpu/indexing/
// non_max_suppression.cc and unique.cc (Note [value-shaped compute]).
// Both are value_shaped (Note [staged plans] in runtime/stages.h): a plan stops before them and
// the engine runs their host computes (ops/indexing/value_shaped_ops.h), or the planner folds them
// when every input is a constant of the plan.
#include "ops/indexing/value_shaped.h"

#include "ops/indexing/evaluate.h"
#include "ops/indexing/value_shaped_ops.h"
#include "ops/op.h"

namespace dnnx {

namespace {

constexpr int kNmsOpset = 10;
constexpr int kUniqueOpset = 11;

// Input i, when the node gives it, must be of `dtype` with at most one element per dim ([],
// [1]): NonMaxSuppression's max_output_boxes_per_class, iou_threshold, score_threshold.
void require_scalar_input(const Node& node, const std::vector<ValueInfo>& inputs, size_t i, DType dtype,
                          const char* what) {
  if (i >= inputs.size() || !inputs[i].present) return;
  const TensorInfo& t = inputs[i].info;
  if (t.dtype != dtype || t.shape.size() > 1 || numel(t.shape) != 1) {
    node_fail<InvalidModelError>(node, std::string(what) + " " + t.str() + " must be one " + dtype_name(dtype) +
                                           " value ([] or [1])");
  }
}

// OpDef::evaluate over a Note [value-shaped compute] function: the outputs the node names (the
// compute gives every output the op defines).
std::vector<ConstTensorPtr> evaluate_with(ValueShapedCompute compute, const Node& node,
                                          const std::vector<ConstTensorPtr>& inputs) {
  ValueShapedInputs raw;
  for (const ConstTensorPtr& t : inputs) raw.push_back(t.get());
  std::vector<ConstTensor> results = compute(node, raw);
  std::vector<ConstTensorPtr> out;
  for (size_t o = 0; o < node.outputs.size() && o < results.size(); ++o) {
    out.push_back(std::make_shared<ConstTensor>(std::move(results[o])));
  }
  return out;
}

std::vector<ConstTensorPtr> evaluate_nms(const Node& node, const std::vector<ConstTensorPtr>& inputs) {
  return evaluate_with(non_max_suppression, node, inputs);
}

std::vector<ConstTensorPtr> evaluate_unique(const Node& node, const std::vector<ConstTensorPtr>& inputs) {
  return evaluate_with(unique, node, inputs);
}

std::vector<TensorInfo> infer_nms(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& boxes = require_input(node, inputs, 0, "boxes");
  const TensorInfo& scores = require_input(node, inputs, 1, "scores");
  if (boxes.dtype != DType::Float32 || scores.dtype != DType::Float32) {
    node_fail<UnsupportedModelError>(node, "boxes (" + std::string(dtype_name(boxes.dtype)) + ") and scores (" +
                                               dtype_name(scores.dtype) + ") must be float32");
  }
  require_scalar_input(node, inputs, 2, DType::Int64, "max_output_boxes_per_class");
  require_scalar_input(node, inputs, 3, DType::Float32, "iou_threshold");
  require_scalar_input(node, inputs, 4, DType::Float32, "score_threshold");
  return infer_by_evaluating(node, inputs, evaluate_nms);
}

std::vector<TensorInfo> infer_unique(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "X");
  if (is_storage_only(x.dtype)) {
    node_fail<UnsupportedModelError>(node, std::string("X of type ") + dtype_name(x.dtype) +
                                               " is not supported (Unique takes the numeric types and bool)");
  }
  const UniqueAttrs attrs = unique_attrs(node);
  if (attrs.axis) normalize_axis(node, *attrs.axis, static_cast<int64_t>(x.shape.size()));
  return infer_by_evaluating(node, inputs, evaluate_unique);
}

}  // namespace

NmsAttrs nms_attrs(const Node& node) {
  const int64_t center = node.attr_int("center_point_box", 0);
  if (center != 0 && center != 1) {
    node_fail<UnsupportedModelError>(node, "center_point_box " + std::to_string(center) + " must be 0 or 1");
  }
  return NmsAttrs{center == 1};
}

UniqueAttrs unique_attrs(const Node& node) {
  UniqueAttrs a;
  const int64_t sorted = node.attr_int("sorted", 1);
  if (sorted != 0 && sorted != 1) {
    node_fail<UnsupportedModelError>(node, "sorted " + std::to_string(sorted) + " must be 0 or 1");
  }
  a.sorted = sorted == 1;
  if (node.has_attr("axis")) a.axis = node.attr_int("axis", 0);
  return a;
}

void register_nms_unique_ops(OpRegistry& r) {
  OpDef nms;
  nms.min_opset = kNmsOpset;
  nms.validate = [](const Node& node) {
    node.expect_only_attrs({"center_point_box"});
    nms_attrs(node);
    if (node.inputs.size() < 2 || node.inputs.size() > 5) {
      node_fail<InvalidModelError>(node, "takes 2 to 5 inputs (boxes, scores, max_output_boxes_per_class, "
                                         "iou_threshold, score_threshold), got " + std::to_string(node.inputs.size()));
    }
  };
  nms.infer = infer_nms;
  nms.value_shaped = true;
  nms.evaluate = evaluate_nms;
  r.add("NonMaxSuppression", std::move(nms));

  OpDef unique;
  unique.min_opset = kUniqueOpset;
  unique.validate = [](const Node& node) {
    node.expect_only_attrs({"sorted", "axis"});
    unique_attrs(node);
    if (node.inputs.size() != 1 || node.outputs.empty() || node.outputs.size() > 4) {
      node_fail<InvalidModelError>(node, "takes one input and 1 to 4 outputs (Y, indices, inverse_indices, counts)");
    }
  };
  unique.infer = infer_unique;
  unique.value_shaped = true;
  unique.evaluate = evaluate_unique;
  r.add("Unique", std::move(unique));
}

}  // namespace dnnx
