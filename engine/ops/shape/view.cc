// Ops whose output is input 0's bytes under another shape: Reshape, Flatten, Squeeze, Unsqueeze,
// Identity and Dropout (identity at inference). The planner aliases their output 0 (no copy).
#include <algorithm>

#include "ops/const_inputs.h"
#include "ops/op.h"

namespace dnnx {

namespace {

std::vector<TensorInfo> infer_reshape(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "data");
  const std::vector<int64_t> spec = constant_ints(node, inputs, 1, "shape");
  const bool allow_zero = node.attr_int("allowzero", 0) != 0;
  Shape out(spec.size());
  int infer_at = -1;
  int64_t known = 1;
  for (size_t i = 0; i < spec.size(); ++i) {
    if (spec[i] == -1) {
      if (infer_at >= 0) node_fail<InvalidModelError>(node, "shape " + shape_str(spec) + " has two -1");
      infer_at = static_cast<int>(i);
      continue;
    }
    if (spec[i] == 0 && !allow_zero) {
      if (i >= x.shape.size()) {
        node_fail<InvalidModelError>(node, "shape " + shape_str(spec) + " copies dim " + std::to_string(i) +
                                               " of " + shape_str(x.shape) + ", which has no such dim");
      }
      out[i] = x.shape[i];
    } else if (spec[i] < 0) {
      node_fail<InvalidModelError>(node, "shape " + shape_str(spec) + " has a negative dim");
    } else {
      out[i] = spec[i];
    }
    known *= out[i];
  }
  const int64_t total = numel(x.shape);
  if (infer_at >= 0) {
    if (known == 0 || total % known != 0) {
      node_fail<InvalidModelError>(node, "cannot reshape " + shape_str(x.shape) + " to " + shape_str(spec));
    }
    out[infer_at] = total / known;
  }
  if (numel(out) != total) {
    node_fail<InvalidModelError>(node, "cannot reshape " + shape_str(x.shape) + " (" + std::to_string(total) +
                                           " elements) to " + shape_str(out));
  }
  return {TensorInfo{out, x.dtype}};
}

std::vector<TensorInfo> infer_flatten(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "input");
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  int64_t axis = node.attr_int("axis", 1);
  if (axis < -rank || axis > rank) {
    node_fail<InvalidModelError>(node, "axis " + std::to_string(axis) + " is out of range for rank " +
                                           std::to_string(rank));
  }
  if (axis < 0) axis += rank;
  // Each side its own product (saturating, as numel): an empty outer side (an empty batch) must
  // not turn the inner one into 0, as a division of the element count would.
  const Shape outer_dims(x.shape.begin(), x.shape.begin() + axis), inner_dims(x.shape.begin() + axis, x.shape.end());
  return {TensorInfo{{numel(outer_dims), numel(inner_dims)}, x.dtype}};
}

// Squeeze/Unsqueeze axes: an attribute before opset 13, an input from 13 on.
std::vector<int64_t> axes_of(const Node& node, const std::vector<ValueInfo>& inputs, bool required) {
  if (node.opset < 13) {
    if (required && !node.has_attr("axes")) node_fail<InvalidModelError>(node, "attribute 'axes' is required");
    return node.attr_ints("axes", {});
  }
  if (inputs.size() < 2 || !inputs[1].present) {
    if (required) node_fail<InvalidModelError>(node, "input 'axes' is required");
    return {};
  }
  return constant_ints(node, inputs, 1, "axes");
}

std::vector<TensorInfo> infer_squeeze(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "data");
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  std::vector<int64_t> axes = axes_of(node, inputs, false);
  std::vector<bool> drop(rank, false);
  if (axes.empty()) {
    for (int64_t i = 0; i < rank; ++i) drop[i] = x.shape[i] == 1;
  }
  for (int64_t a : axes) {
    const int64_t axis = normalize_axis(node, a, rank);
    if (x.shape[axis] != 1) {
      node_fail<InvalidModelError>(node, "cannot squeeze axis " + std::to_string(a) + " of " +
                                             shape_str(x.shape) + ": its size is not 1");
    }
    drop[axis] = true;
  }
  Shape out;
  for (int64_t i = 0; i < rank; ++i) {
    if (!drop[i]) out.push_back(x.shape[i]);
  }
  return {TensorInfo{out, x.dtype}};
}

std::vector<TensorInfo> infer_unsqueeze(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "data");
  const std::vector<int64_t> axes = axes_of(node, inputs, true);
  const int64_t out_rank = static_cast<int64_t>(x.shape.size() + axes.size());
  std::vector<bool> inserted(out_rank, false);
  for (int64_t a : axes) {
    const int64_t axis = normalize_axis(node, a, out_rank);
    if (inserted[axis]) node_fail<InvalidModelError>(node, "axis " + std::to_string(a) + " is repeated");
    inserted[axis] = true;
  }
  Shape out;
  size_t next = 0;
  for (int64_t i = 0; i < out_rank; ++i) out.push_back(inserted[i] ? 1 : x.shape[next++]);
  return {TensorInfo{out, x.dtype}};
}

std::vector<TensorInfo> infer_identity(const Node& node, const std::vector<ValueInfo>& inputs) {
  return {require_input(node, inputs, 0, "input")};
}

// Dropout at inference: output 0 is X (a view); the optional mask output is all true (bool
// from opset 10; before, of X's type, all ones), written by the backends' Dropout kernels
// (backends/*/dropout_*.cc), which the planner runs beside the view (Note [views with more
// outputs] in runtime/planner.cc).
constexpr int kDropoutBoolMaskOpset = 10;

void validate_dropout(const Node& node) { node.expect_only_attrs({"ratio", "seed", "is_test"}); }

// Dropout in training mode (opset 12+: training_mode true) drops at random, unless its ratio is 0:
// then it is the inference form, which dnnx runs (a graph input may carry either: both are value
// inputs, so each value plans its own plan).
constexpr float kDefaultDropoutRatio = 0.5f;

std::vector<TensorInfo> infer_dropout(const Node& node, const std::vector<ValueInfo>& inputs) {
  if (inputs.size() > 2 && inputs[2].present) {
    const ValueInfo& mode = inputs[2];
    if (!mode.constant || mode.constant->data.empty()) {
      node_fail<UnsupportedModelError>(node, "training_mode must be a constant or a graph input");
    }
    if (mode.constant->data[0] != 0) {
      float ratio = kDefaultDropoutRatio;
      if (inputs.size() > 1 && inputs[1].present) {
        const ValueInfo& r = inputs[1];
        if (!r.constant || r.constant->data.empty() || r.constant->info.dtype != DType::Float32) {
          node_fail<UnsupportedModelError>(node, "training_mode true needs a constant float32 ratio");
        }
        ratio = *r.constant->as<float>();
      }
      if (ratio != 0) {
        node_fail<UnsupportedModelError>(node, "training_mode true with ratio " + std::to_string(ratio) +
                                                   " drops at random: dnnx runs inference graphs (ratio 0 runs)");
      }
    }
  }
  const TensorInfo& x = require_input(node, inputs, 0, "data");
  return {x, TensorInfo{x.shape, node.opset >= kDropoutBoolMaskOpset ? DType::Bool : x.dtype}};
}

OpDef view_op(std::vector<std::string> attrs,
              std::function<std::vector<TensorInfo>(const Node&, const std::vector<ValueInfo>&)> infer,
              std::vector<int> value_inputs = {}) {
  OpDef def;
  def.value_inputs = std::move(value_inputs);
  def.validate = [attrs](const Node& node) { node.expect_only_attrs(attrs); };
  def.infer = std::move(infer);
  def.aliases_input0 = true;
  return def;
}

}  // namespace

void register_view_ops(OpRegistry& r) {
  r.add("Reshape", view_op({"allowzero"}, infer_reshape, {1}));  // the target shape
  r.add("Flatten", view_op({"axis"}, infer_flatten));
  r.add("Squeeze", view_op({"axes"}, infer_squeeze, {1}));  // axes (opset 13)
  r.add("Unsqueeze", view_op({"axes"}, infer_unsqueeze, {1}));
  r.add("Identity", view_op({}, infer_identity));
  OpDef dropout = view_op({}, infer_dropout, {1, 2});  // ratio and training_mode: known when planned
  dropout.validate = validate_dropout;
  r.add("Dropout", dropout);
}

}  // namespace dnnx
