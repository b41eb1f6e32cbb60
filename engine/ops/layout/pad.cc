// Pad: X [d...] -> Y [d + begin + end ...]. Constant mode: the new cells hold the constant (the
// `value` attribute before opset 11, the optional scalar `constant_value` input from 11, which
// the kernel reads when it runs). Edge, reflect and wrap (19+) modes fill them from X
// (ops/layout/pad.h gives the index arithmetic). Negative amounts crop. The amounts must be known at
// load (a constant `pads` input).
#include "ops/layout/pad.h"

#include <algorithm>

#include "ops/const_inputs.h"
#include "ops/op.h"

namespace dnnx {

namespace {

constexpr int kPadsAsInputOpset = 11;
constexpr int kWrapModeOpset = 19;
constexpr size_t kPadsInput = 1, kValueInput = 2, kAxesInput = 3;

void validate_pad(const Node& node) {
  if (node.opset < kPadsAsInputOpset) {
    node.expect_only_attrs({"mode", "pads", "value"});
    if (!node.has_attr("pads")) node_fail<InvalidModelError>(node, "attribute 'pads' is required");
  } else {
    node.expect_only_attrs({"mode"});
  }
  pad_mode(node);
}

// Cropping first, then padding: where a non-constant mode pads a dim, some of X must remain.
void check_mode_has_source(const Node& node, PadMode mode, const Shape& x, const PadAmounts& pads) {
  if (mode == PadMode::Constant) return;
  for (size_t d = 0; d < x.size(); ++d) {
    const int64_t kept = x[d] - std::max<int64_t>(0, -pads.begin[d]) - std::max<int64_t>(0, -pads.end[d]);
    if ((pads.begin[d] > 0 || pads.end[d] > 0) && kept <= 0) {
      node_fail<InvalidModelError>(node, "mode '" + node.attr_string("mode", "constant") + "' pads dim " +
                                             std::to_string(d) + " of " + shape_str(x) + " (pads " +
                                             shape_str(pads.begin) + " / " + shape_str(pads.end) +
                                             "), which holds no element to repeat");
    }
  }
}

std::vector<TensorInfo> infer_pad(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "data");
  const PadAmounts pads = pad_amounts(node, inputs, x.shape.size());
  if (node.opset >= kPadsAsInputOpset && input_present(inputs, kValueInput)) {
    require_scalar(node, inputs, kValueInput, x.dtype, "constant_value");
  }
  check_mode_has_source(node, pad_mode(node), x.shape, pads);
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

PadMode pad_mode(const Node& node) {
  const std::string mode = node.attr_string("mode", "constant");
  if (mode == "constant") return PadMode::Constant;
  if (mode == "edge") return PadMode::Edge;
  if (mode == "reflect") return PadMode::Reflect;
  if (mode == "wrap") {
    if (node.opset < kWrapModeOpset) {
      node_fail<InvalidModelError>(node, "mode 'wrap' needs opset " + std::to_string(kWrapModeOpset) +
                                             "+ (the model's is " + std::to_string(node.opset) + ")");
    }
    return PadMode::Wrap;
  }
  node_fail<InvalidModelError>(node, "mode '" + mode + "' is not one of 'constant', 'edge', 'reflect', 'wrap'");
}

int64_t pad_source_index(PadMode mode, int64_t o, int64_t in, int64_t begin, int64_t end) {
  if (mode == PadMode::Constant) {
    const int64_t i = o - begin;
    return i >= 0 && i < in ? i : -1;
  }
  // In the cropped X: `crop` elements dropped before, n kept, `lead` new cells ahead of them.
  const int64_t crop = std::max<int64_t>(0, -begin);
  const int64_t n = in - crop - std::max<int64_t>(0, -end);
  int64_t i = o - std::max<int64_t>(0, begin);
  if (i >= 0 && i < n) return i + crop;
  if (mode == PadMode::Edge) {
    i = std::clamp<int64_t>(i, 0, n - 1);
  } else if (mode == PadMode::Wrap) {
    i = (i % n + n) % n;
  } else if (n == 1) {
    i = 0;  // reflect: a single element mirrors onto itself
  } else {
    const int64_t period = 2 * (n - 1);
    i = (i % period + period) % period;
    if (i >= n) i = period - i;
  }
  return i + crop;
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
