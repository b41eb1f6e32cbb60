// Conv: X [N, C, spatial...], W [M, C/group, k...], optional B [M] -> Y [N, M, out...].
// 1-D, 2-D and 3-D; group (depthwise included), strides, dilations, pads and auto_pad. The
// window arithmetic lives in ops/conv/conv_geometry.h, shared with MaxPool and every backend.
#include "ops/conv/conv_geometry.h"
#include "ops/op.h"

namespace dnnx {

namespace {


void validate_conv(const Node& node) {
  node.expect_only_attrs({"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"});
  check_window_attrs(node, WindowOp::Conv);
}

std::vector<TensorInfo> infer_conv(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "X");
  const TensorInfo& w = require_input(node, inputs, 1, "W");
  check_conv_operands(node, x, w);
  const int64_t group = node.attr_int("group", 1);
  const int64_t channels = x.shape[1];
  const int64_t filters = w.shape[0];
  if (w.shape[1] * group != channels) {
    node_fail<InvalidModelError>(node, "X " + shape_str(x.shape) + " has " + std::to_string(channels) +
                                           " channels but W " + shape_str(w.shape) + " with group " +
                                           std::to_string(group) + " expects " +
                                           std::to_string(w.shape[1] * group) + " (W[1] * group)");
  }
  if (filters % group != 0) {
    node_fail<InvalidModelError>(node, "W " + shape_str(w.shape) + " has " + std::to_string(filters) +
                                           " filters, not a multiple of group " + std::to_string(group));
  }
  if (inputs.size() > 2 && inputs[2].present) {
    const TensorInfo& b = inputs[2].info;
    require_float(node, b, "input B");
    if (b.shape != Shape{filters}) {
      node_fail<InvalidModelError>(node, "B " + shape_str(b.shape) + " must be [" +
                                             std::to_string(filters) + "] to match W " +
                                             shape_str(w.shape));
    }
  }
  const Shape spatial(x.shape.begin() + 2, x.shape.end());
  const Shape kernel(w.shape.begin() + 2, w.shape.end());
  const ConvGeometry g = make_conv_geometry(node, WindowOp::Conv, spatial, kernel);
  Shape y{x.shape[0], filters};
  y.insert(y.end(), g.output.begin(), g.output.end());
  return {TensorInfo{y, x.dtype}};
}

}  // namespace

void register_conv_ops(OpRegistry& r) {
  OpDef def;
  def.validate = validate_conv;
  def.infer = infer_conv;
  r.add("Conv", std::move(def));
}

}  // namespace dnnx
