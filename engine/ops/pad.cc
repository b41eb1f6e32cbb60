// Pad, constant mode: X [d...] -> Y [d + begin + end ...], the new cells holding the constant
// (the `value` attribute before opset 11, the optional scalar `constant_value` input from 11,
// which the kernel reads when it runs). Negative amounts crop. Edge, reflect and wrap modes are
// refused at load. The amounts must be known at load (a constant `pads` input).
#include "ops/pad.h"

#include "ops/const_inputs.h"
#include "ops/op.h"

namespace dnnx {

namespace {

constexpr int kPadsAsInputOpset = 11;
constexpr size_t kPadsInput = 1, kValueInput = 2, kAxesInput = 3;

void validate_pad(const Node& node) {
  if (node.opset < kPadsAsInputOpset) {
    node.expect_only_attrs({"mode", "pads", "value"});
    if (!node.has_attr("pads")) node_fail<InvalidModelError>(node, "attribute 'pads' is required");
  } else {
    node.expect_only_attrs({"mode"});
  }
  const std::string mode = node.attr_string("mode", "constant");
  if (mode != "constant") {
    node_fail<UnsupportedModelError>(node, "mode '" + mode + "' is not supported (only 'constant')");
  }
}

std::vector<TensorInfo> infer_pad(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "data");
  const PadAmounts pads = pad_amounts(node, inputs, x.shape.size());
  if (node.opset >= kPadsAsInputOpset && input_present(inputs, kValueInput)) {
    require_scalar(node, inputs, kValueInput, x.dtype, "constant_value");
  }
  TensorInfo y = x;
  for (size_t d = 0; d < x.shape.size(); ++d) {
    y.shape[d] = x.shape[d] + pads.begin[d] + pads.end[d];
    if (y.shape[d] < 0) {
      node_fail<InvalidModelError>(node, "pads " + shape_str(pads.begin) + " / " + shape_str(pads.end) +
                                             " remove more than dim " + std::to_string(d) + " of " +
                                             shape_str(x.shape) + " holds");
    }
  }
  return {y};
}

}  // namespace

PadAmounts pad_amounts(const Node& node, const std::vector<ValueInfo>& inputs, size_t rank) {
  const bool from_input = node.opset >= kPadsAsInputOpset;
  const Shape pads = from_input ? constant_ints(node, inputs, kPadsInput, "pads") : node.attr_ints("pads", {});
  std::vector<int64_t> axes;
  const auto given_axes = from_input ? optional_constant_ints(node, inputs, kAxesInput, "axes") : std::nullopt;
  if (given_axes) {
    for (int64_t a : *given_axes) axes.push_back(normalize_axis(node, a, static_cast<int64_t>(rank)));
  } else {
    for (size_t d = 0; d < rank; ++d) axes.push_back(static_cast<int64_t>(d));
  }
  if (pads.size() != 2 * axes.size()) {
    node_fail<InvalidModelError>(node, "pads " + shape_str(pads) + " has " + std::to_string(pads.size()) +
                                           " values, expected " + std::to_string(2 * axes.size()) +
                                           " (a begin and an end per padded axis)");
  }
  PadAmounts out{Shape(rank, 0), Shape(rank, 0)};
  for (size_t i = 0; i < axes.size(); ++i) {
    out.begin[axes[i]] = pads[i];
    out.end[axes[i]] = pads[i + axes.size()];
  }
  return out;
}

void register_pad_ops(OpRegistry& r) {
  OpDef def;
  def.validate = validate_pad;
  def.infer = infer_pad;
  def.value_inputs = {kPadsInput, kAxesInput};
  def.min_opset = 2;
  r.add("Pad", std::move(def));
}

}  // namespace dnnx
