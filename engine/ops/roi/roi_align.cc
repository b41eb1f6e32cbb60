// RoiAlign (opsets 10, 16, 22): X [N, C, H, W] (a float type), rois [R, 4] (X's type; x1, y1,
// x2, y2 in X's pixels before spatial_scale), batch_indices [R] int64 -> Y [R, C, output_height,
// output_width]: each output bin the average (or mode=max: onnxruntime's maximum, Note [roi
// align] in backends/cpu/roi/roi_align_cpu.cc) of sampling_ratio^2 bilinear samples. R may be 0.
// Opset 16 added coordinate_transformation_mode (default half_pixel); opset 10 is
// output_half_pixel; opset 22 adds bfloat16 (computed in float32: Note [cpu dtypes]).
#include "ops/roi/roi_align.h"

#include <algorithm>
#include <cctype>

#include "ops/op.h"

namespace dnnx {

namespace {

constexpr int kRoiAlignOpset = 10;
constexpr int kHalfPixelOpset = 16;  // coordinate_transformation_mode appears, half_pixel by default

std::string lowered(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::vector<TensorInfo> infer_roi_align(const Node& node, const std::vector<ValueInfo>& inputs) {
  const RoiAlignAttrs attrs = roi_align_attrs(node);
  const TensorInfo& x = require_input(node, inputs, 0, "X");
  require_float(node, x, "input X");
  if (x.shape.size() != 4) {
    node_fail<InvalidModelError>(node, "X " + shape_str(x.shape) + " must be 4-D [N, C, H, W]");
  }
  const TensorInfo& rois = require_input(node, inputs, 1, "rois");
  if (rois.dtype != x.dtype || rois.shape.size() != 2 || rois.shape[1] != 4) {
    node_fail<InvalidModelError>(node, "rois " + shape_str(rois.shape) + " (" + dtype_name(rois.dtype) +
                                           ") must be [num_rois, 4] of X's type " + dtype_name(x.dtype));
  }
  const TensorInfo& batch_indices = require_input(node, inputs, 2, "batch_indices");
  if (batch_indices.dtype != DType::Int64 || batch_indices.shape != Shape{rois.shape[0]}) {
    node_fail<InvalidModelError>(node, "batch_indices " + shape_str(batch_indices.shape) + " (" +
                                           dtype_name(batch_indices.dtype) + ") must be int64 [num_rois] with rois " +
                                           shape_str(rois.shape));
  }
  return {TensorInfo{{rois.shape[0], x.shape[1], attrs.output_height, attrs.output_width}, x.dtype}};
}

}  // namespace

RoiAlignAttrs roi_align_attrs(const Node& node) {
  RoiAlignAttrs a;
  const std::string mode = lowered(node.attr_string("mode", "avg"));  // onnxruntime reads it case-blind
  if (mode == "max") {
    a.mode = RoiAlignMode::Max;
  } else if (mode != "avg") {
    node_fail<UnsupportedModelError>(node, "mode '" + node.attr_string("mode", "") + "' must be 'avg' or 'max'");
  }
  const std::string fallback = node.opset >= kHalfPixelOpset ? "half_pixel" : "output_half_pixel";
  const std::string ctm = node.attr_string("coordinate_transformation_mode", fallback);
  if (ctm != "half_pixel" && ctm != "output_half_pixel") {
    node_fail<UnsupportedModelError>(node, "coordinate_transformation_mode '" + ctm +
                                               "' must be 'half_pixel' or 'output_half_pixel'");
  }
  a.half_pixel = ctm == "half_pixel";
  a.output_height = node.attr_int("output_height", 1);
  a.output_width = node.attr_int("output_width", 1);
  if (a.output_height < 1 || a.output_width < 1) {
    node_fail<InvalidModelError>(node, "output_height " + std::to_string(a.output_height) + " and output_width " +
                                           std::to_string(a.output_width) + " must be at least 1");
  }
  a.sampling_ratio = node.attr_int("sampling_ratio", 0);
  if (a.sampling_ratio < 0) {
    node_fail<InvalidModelError>(node, "sampling_ratio " + std::to_string(a.sampling_ratio) +
                                           " must be at least 0 (0: adaptive)");
  }
  a.spatial_scale = node.attr_float("spatial_scale", 1.0f);
  return a;
}

void register_roi_align_ops(OpRegistry& r) {
  OpDef def;
  def.min_opset = kRoiAlignOpset;
  def.validate = [](const Node& node) {
    if (node.opset >= kHalfPixelOpset) {
      node.expect_only_attrs({"coordinate_transformation_mode", "mode", "output_height", "output_width",
                              "sampling_ratio", "spatial_scale"});
    } else {
      node.expect_only_attrs({"mode", "output_height", "output_width", "sampling_ratio", "spatial_scale"});
    }
    roi_align_attrs(node);
  };
  def.infer = infer_roi_align;
  r.add("RoiAlign", std::move(def));
}

}  // namespace dnnx
