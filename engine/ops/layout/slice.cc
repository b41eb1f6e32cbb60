// Slice: X [d...] (any dtype) -> Y, a strided box of X: per sliced axis start, end and step
// (negative steps walk backwards). The bounds must be known at load: attributes before
// opset 10, constant inputs from 10 on.
#include "ops/layout/slice.h"

#include <algorithm>

#include "ops/const_inputs.h"
#include "ops/op.h"

namespace dnnx {

namespace {

constexpr int kBoundsAsInputsOpset = 10;
constexpr size_t kStarts = 1, kEnds = 2, kAxes = 3, kSteps = 4;

// The output size of one axis after ONNX's clamping; updates `start` to the clamped value.
int64_t clamp_range(int64_t& start, int64_t end, int64_t step, int64_t dim) {
  if (dim == 0) {
    start = 0;
    return 0;
  }
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    return end > start ? (end - start + step - 1) / step : 0;
  }
  start = std::clamp<int64_t>(start, 0, dim - 1);
  end = std::clamp<int64_t>(end, -1, dim - 1);
  return start > end ? (start - end - step - 1) / -step : 0;
}

void validate_slice(const Node& node) {
  if (node.opset < kBoundsAsInputsOpset) {
    node.expect_only_attrs({"starts", "ends", "axes"});
    if (!node.has_attr("starts") || !node.has_attr("ends")) {
      node_fail<InvalidModelError>(node, "attributes 'starts' and 'ends' are required");
    }
  } else {
    node.expect_only_attrs({});
  }
}

std::vector<TensorInfo> infer_slice(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "data");
  return {TensorInfo{slice_ranges(node, inputs, x.shape).out, x.dtype}};
}

}  // namespace

SliceRanges slice_ranges(const Node& node, const std::vector<ValueInfo>& inputs, const Shape& x) {
  const int64_t rank = static_cast<int64_t>(x.size());
  std::vector<int64_t> starts, ends, axes, steps;
  if (node.opset < kBoundsAsInputsOpset) {
    starts = node.attr_ints("starts", {});
    ends = node.attr_ints("ends", {});
    axes = node.attr_ints("axes", {});
  } else {
    starts = constant_ints(node, inputs, kStarts, "starts");
    ends = constant_ints(node, inputs, kEnds, "ends");
    axes = optional_constant_ints(node, inputs, kAxes, "axes").value_or(std::vector<int64_t>{});
    steps = optional_constant_ints(node, inputs, kSteps, "steps").value_or(std::vector<int64_t>{});
  }
  if (axes.empty()) {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size()) {
    node_fail<InvalidModelError>(node, "starts " + shape_str(starts) + ", ends " + shape_str(ends) +
                                           ", axes " + shape_str(axes) + " and steps " + shape_str(steps) +
                                           " must have one value each per sliced axis");
  }
  SliceRanges r{Shape(rank, 0), Shape(rank, 1), x};
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t axis = normalize_axis(node, axes[i], rank);
    if (seen[axis]) node_fail<InvalidModelError>(node, "axes " + shape_str(axes) + " repeat axis " +
                                                           std::to_string(axis));
    seen[axis] = true;
    if (steps[i] == 0) node_fail<InvalidModelError>(node, "steps " + shape_str(steps) + " contain 0");
    int64_t start = starts[i];
    r.out[axis] = clamp_range(start, ends[i], steps[i], x[axis]);
    r.start[axis] = start;
    r.step[axis] = steps[i];
  }
  return r;
}

void register_slice_ops(OpRegistry& r) {
  OpDef def;
  def.validate = validate_slice;
  def.infer = infer_slice;
  def.value_inputs = {kStarts, kEnds, kAxes, kSteps};
  def.min_opset = 1;
  r.add("Slice", std::move(def));
}

}  // namespace dnnx
