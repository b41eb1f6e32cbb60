// DeformConv's meaning (ops/conv/deform_conv.h).
#include "ops/conv/deform_conv.h"

#include "ops/const_inputs.h"

namespace dnnx {

namespace {

constexpr int kDeformConvOpset = 19;

void require_shape(const Node& node, const TensorInfo& t, const Shape& want, const char* what) {
  if (t.shape != want) {
    node_fail<InvalidModelError>(node, std::string(what) + " " + shape_str(t.shape) + " must be " + shape_str(want));
  }
}

std::vector<TensorInfo> infer_deform_conv(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "X");
  require_float(node, x, "input X");
  for (size_t i = 1; i < inputs.size(); ++i) {
    if (input_present(inputs, i) && inputs[i].info.dtype != x.dtype) {
      node_fail<InvalidModelError>(node, "input " + std::to_string(i) + " must have X's dtype");
    }
  }
  const DeformConvGeometry g = deform_conv_geometry(node, inputs);
  return {TensorInfo{{g.batch, g.filters, g.out_h, g.out_w}, x.dtype}};
}

}  // namespace

DeformConvGeometry deform_conv_geometry(const Node& node, const std::vector<ValueInfo>& inputs) {
  DeformConvGeometry g;
  const Shape& x = inputs[0].info.shape;
  const Shape& w = require_input(node, inputs, 1, "W").shape;
  if (x.size() != 4 || w.size() != 4) {
    node_fail<UnsupportedModelError>(node, "X " + shape_str(x) + " and W " + shape_str(w) +
                                               " must be 4-D: dnnx's DeformConv is 2-D");
  }
  g.batch = x[0];
  g.channels = x[1];
  g.in_h = x[2];
  g.in_w = x[3];
  g.filters = w[0];
  g.group = node.attr_int("group", 1);
  g.offset_group = node.attr_int("offset_group", 1);
  if (g.group <= 0 || g.offset_group <= 0 || g.channels != w[1] * g.group || g.filters % g.group != 0 ||
      g.channels % g.offset_group != 0) {
    node_fail<InvalidModelError>(node, "X " + shape_str(x) + " and W " + shape_str(w) + " do not agree with group " +
                                           std::to_string(g.group) + " and offset_group " +
                                           std::to_string(g.offset_group));
  }
  const Shape kernel = attr_ints_of_size(node, "kernel_shape", 2, 0);
  g.k_h = node.has_attr("kernel_shape") ? kernel[0] : w[2];
  g.k_w = node.has_attr("kernel_shape") ? kernel[1] : w[3];
  if (g.k_h != w[2] || g.k_w != w[3]) {
    node_fail<InvalidModelError>(node, "kernel_shape " + shape_str(kernel) + " must match W " + shape_str(w));
  }
  const Shape strides = attr_ints_of_size(node, "strides", 2, 1), dil = attr_ints_of_size(node, "dilations", 2, 1);
  const Shape pads = attr_ints_of_size(node, "pads", 4, 0);
  g.stride_h = strides[0];
  g.stride_w = strides[1];
  g.dil_h = dil[0];
  g.dil_w = dil[1];
  g.pad_top = pads[0];
  g.pad_left = pads[1];
  if (g.stride_h <= 0 || g.stride_w <= 0 || g.dil_h <= 0 || g.dil_w <= 0) {
    node_fail<InvalidModelError>(node, "strides and dilations must be positive");
  }
  g.out_h = (g.in_h + pads[0] + pads[2] - ((g.k_h - 1) * g.dil_h + 1)) / g.stride_h + 1;
  g.out_w = (g.in_w + pads[1] + pads[3] - ((g.k_w - 1) * g.dil_w + 1)) / g.stride_w + 1;
  if (g.out_h <= 0 || g.out_w <= 0) {
    node_fail<InvalidModelError>(node, "the kernel does not fit X " + shape_str(x) + " with its pads");
  }
  const int64_t taps = g.k_h * g.k_w;
  require_shape(node, require_input(node, inputs, 2, "offset"), {g.batch, g.offset_group * 2 * taps, g.out_h, g.out_w},
                "offset");
  g.has_bias = input_present(inputs, 3);
  if (g.has_bias) require_shape(node, inputs[3].info, {g.filters}, "B");
  g.has_mask = input_present(inputs, 4);
  if (g.has_mask) require_shape(node, inputs[4].info, {g.batch, g.offset_group * taps, g.out_h, g.out_w}, "mask");
  return g;
}

void register_deform_conv_ops(OpRegistry& r) {
  OpDef def;
  def.min_opset = kDeformConvOpset;
  def.validate = [](const Node& node) {
    node.expect_only_attrs({"dilations", "group", "kernel_shape", "offset_group", "pads", "strides"});
  };
  def.infer = infer_deform_conv;
  r.add("DeformConv", std::move(def));
}

}  // namespace dnnx
