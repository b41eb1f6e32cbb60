// MaxRoiPool (opset 1): X [N, C, H, W] (a float type), rois [R, 5] (X's type; batch index, x1,
// y1, x2, y2 in X's pixels before spatial_scale) -> Y [R, C, pooled_shape[0], pooled_shape[1]]:
// each output bin the maximum of X over its integer window of the rounded box, 0 where the
// window is empty (onnxruntime's meaning: backends/cpu/roi/max_roi_pool_cpu.cc). R may be 0.
#include "ops/roi/max_roi_pool.h"

#include "ops/op.h"

namespace dnnx {

namespace {

constexpr int kMaxRoiPoolOpset = 1;

std::vector<TensorInfo> infer_max_roi_pool(const Node& node, const std::vector<ValueInfo>& inputs) {
  const MaxRoiPoolAttrs attrs = max_roi_pool_attrs(node);
  const TensorInfo& x = require_input(node, inputs, 0, "X");
  require_float(node, x, "input X");
  if (x.shape.size() != 4) {
    node_fail<InvalidModelError>(node, "X " + shape_str(x.shape) + " must be 4-D [N, C, H, W]");
  }
  const TensorInfo& rois = require_input(node, inputs, 1, "rois");
  if (rois.dtype != x.dtype || rois.shape.size() != 2 || rois.shape[1] != 5) {
    node_fail<InvalidModelError>(node, "rois " + shape_str(rois.shape) + " (" + dtype_name(rois.dtype) +
                                           ") must be [num_rois, 5] (batch index, x1, y1, x2, y2) of X's type " +
                                           dtype_name(x.dtype));
  }
  return {TensorInfo{{rois.shape[0], x.shape[1], attrs.pooled_height, attrs.pooled_width}, x.dtype}};
}

}  // namespace

MaxRoiPoolAttrs max_roi_pool_attrs(const Node& node) {
  if (!node.has_attr("pooled_shape")) node_fail<InvalidModelError>(node, "the attribute pooled_shape is required");
  const Shape pooled = node.attr_ints("pooled_shape", {});
  if (pooled.size() != 2 || pooled[0] < 1 || pooled[1] < 1) {
    node_fail<InvalidModelError>(node, "pooled_shape " + shape_str(pooled) + " must be two sizes of at least 1");
  }
  MaxRoiPoolAttrs a;
  a.pooled_height = pooled[0];
  a.pooled_width = pooled[1];
  a.spatial_scale = node.attr_float("spatial_scale", 1.0f);
  return a;
}

void register_max_roi_pool_ops(OpRegistry& r) {
  OpDef def;
  def.min_opset = kMaxRoiPoolOpset;
  def.validate = [](const Node& node) {
    node.expect_only_attrs({"pooled_shape", "spatial_scale"});
    max_roi_pool_attrs(node);
  };
  def.infer = infer_max_roi_pool;
  r.add("MaxRoiPool", std::move(def));
}

}  // namespace dnnx
