// ConvTranspose: X [N, C, in...], W [C, M/group, k...], optional B [M] -> Y [N, M, out...];
// 1-D, 2-D and 3-D, group, strides, dilations, pads, output_padding, output_shape and auto_pad.
// The arithmetic is ops/conv/conv_transpose.h's; the pads follow onnx's reference implementation.
#include "ops/conv/conv_transpose.h"

#include <algorithm>

#include "ops/op.h"

namespace dnnx {

namespace {


Shape per_dim(const Node& node, const char* attr, size_t rank, int64_t fallback) {
  Shape v = node.attr_ints(attr, Shape(rank, fallback));
  if (v.size() != rank) {
    node_fail<InvalidModelError>(node, std::string(attr) + " " + shape_str(v) + " must have " +
                                           std::to_string(rank) + " values, one per spatial dim");
  }
  return v;
}

void validate_conv_transpose(const Node& node) {
  node.expect_only_attrs({"auto_pad", "dilations", "group", "kernel_shape", "output_padding", "output_shape",
                          "pads", "strides"});
  check_window_attrs(node, WindowOp::Conv);
  for (int64_t p : node.attr_ints("output_padding", {})) {
    if (p < 0) node_fail<InvalidModelError>(node, "output_padding must not be negative");
  }
}

std::vector<TensorInfo> infer_conv_transpose(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "X");
  const TensorInfo& w = require_input(node, inputs, 1, "W");
  check_conv_operands(node, x, w);
  const int64_t group = node.attr_int("group", 1);
  if (w.shape[0] != x.shape[1] || x.shape[1] % group != 0) {
    node_fail<InvalidModelError>(node, "X " + shape_str(x.shape) + " has " + std::to_string(x.shape[1]) +
                                           " channels; W " + shape_str(w.shape) + " must have as many (W[0]), " +
                                           "a multiple of group " + std::to_string(group));
  }
  const int64_t filters = w.shape[1] * group;
  if (inputs.size() > 2 && inputs[2].present) {
    require_float(node, inputs[2].info, "input B");
    if (inputs[2].info.shape != Shape{filters}) {
      node_fail<InvalidModelError>(node, "B " + shape_str(inputs[2].info.shape) + " must be [" +
                                             std::to_string(filters) + "] (W[1] * group) for W " + shape_str(w.shape));
    }
  }
  const ConvGeometry g = conv_transpose_geometry(node, Shape(x.shape.begin() + 2, x.shape.end()),
                                                 Shape(w.shape.begin() + 2, w.shape.end()));
  Shape y{x.shape[0], filters};
  y.insert(y.end(), g.input.begin(), g.input.end());
  return {TensorInfo{y, x.dtype}};
}

}  // namespace

ConvGeometry conv_transpose_geometry(const Node& node, const Shape& x_spatial, const Shape& kernel) {
  const size_t rank = x_spatial.size();
  ConvGeometry g;
  g.group = node.attr_int("group", 1);
  g.kernel = kernel;
  if (node.has_attr("kernel_shape") && node.attr_ints("kernel_shape", {}) != kernel) {
    node_fail<InvalidModelError>(node, "kernel_shape " + shape_str(node.attr_ints("kernel_shape", {})) +
                                           " does not match the weight's spatial dims " + shape_str(kernel));
  }
  g.strides = per_dim(node, "strides", rank, 1);
  g.dilations = per_dim(node, "dilations", rank, 1);
  const Shape output_padding = per_dim(node, "output_padding", rank, 0);
  Shape output_shape = node.attr_ints("output_shape", {});
  if (output_shape.size() == rank + 2) output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
  if (!output_shape.empty() && output_shape.size() != rank) {
    node_fail<InvalidModelError>(node, "output_shape " + shape_str(output_shape) + " must have " +
                                           std::to_string(rank) + " spatial dims like X");
  }
  const std::string auto_pad = node.attr_string("auto_pad", "NOTSET");
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  // The pads follow from the output size under SAME_* or with output_shape (which then
  // overrides pads, as in onnxruntime); otherwise the output size follows from the pads.
  const bool computed = same || !output_shape.empty();
  const Shape pads = computed || auto_pad == "VALID" ? Shape(2 * rank, 0) : per_dim(node, "pads", 2 * rank, 0);
  g.pads_begin.assign(pads.begin(), pads.begin() + rank);
  g.pads_end.assign(pads.begin() + rank, pads.end());
  g.output = x_spatial;
  g.input.resize(rank);
  for (size_t i = 0; i < rank; ++i) {
    // The span the windows of X cover, before pads: stride * (in - 1) + effective kernel.
    const int64_t span = g.strides[i] * (x_spatial[i] - 1) + g.effective_kernel(i);
    int64_t out = 0;
    if (computed) {
      // onnxruntime's rule (onnx's reference agrees where it runs): the pads that reach the
      // target, never negative; the larger half at the end for SAME_UPPER, else at the start.
      out = output_shape.empty() ? x_spatial[i] * g.strides[i] : output_shape[i];
      const int64_t total = std::max<int64_t>(0, span + output_padding[i] - out);
      g.pads_begin[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      g.pads_end[i] = total - g.pads_begin[i];
    }
    const int64_t natural = span - g.pads_begin[i] - g.pads_end[i];
    if (!computed) out = natural + output_padding[i];
    if (natural <= 0 || out <= 0) {
      node_fail<InvalidModelError>(node, "the pads " + shape_str(pads) + " leave no output for X " +
                                             shape_str(x_spatial) + " and the kernel " + shape_str(kernel));
    }
    // Y's positions past `natural` get only the bias (never fewer: the pads are not negative).
    const int64_t extra = out - natural;
    if (extra >= g.strides[i]) {
      node_fail<InvalidModelError>(node, "output_padding / output_shape add " + std::to_string(extra) +
                                             " positions along spatial dim " + std::to_string(i) +
                                             ", which must be fewer than the stride " + std::to_string(g.strides[i]));
    }
    g.input[i] = out;
  }
  return g;
}

void register_conv_transpose_ops(OpRegistry& r) {
  OpDef def;
  def.validate = validate_conv_transpose;
  def.infer = infer_conv_transpose;
  def.min_opset = 1;
  r.add("ConvTranspose", std::move(def));
}

}  // namespace dnnx
