// LayerNormalization (opset 17), InstanceNormalization and GroupNormalization (opset 18: scale
// and bias per group; 21: per channel): float32 (float16 under precision="fp16"), Y of X's
// shape; the one form they share is ops/normalization/normalization.h's. stash_type is accepted and the
// statistics are always computed in float32 (ONNX's default, stash_type 1).
//   LayerNormalization    X, Scale, B (optional) -> Y, Mean and InvStdDev (optional, float32,
//                         X's shape with the normalized dims 1); Scale and B have the
//                         normalized dims' shape (shape[axis:], leading 1s allowed)
//   InstanceNormalization X [N, C, ...], scale [C], B [C] -> Y
//   GroupNormalization    X [N, C, ...], scale, bias [num_groups] (18) or [C] (21) -> Y
#include "ops/normalization/normalization.h"

#include <algorithm>

namespace dnnx {

namespace {

constexpr int kLayerNormOpset = 17, kGroupNormOpset = 18, kGroupNormPerChannelOpset = 21;
constexpr float kDefaultEpsilon = 1e-5f;

int64_t layer_norm_axis(const Node& node, const Shape& x) {
  return normalize_axis(node, node.attr_int("axis", -1), static_cast<int64_t>(x.size()));
}

void require_param(const Node& node, const std::vector<ValueInfo>& inputs, size_t i, const char* what,
                   const Shape& want) {
  const TensorInfo& p = require_input(node, inputs, i, what);
  require_float(node, p, what);
  if (p.shape != want) {
    node_fail<InvalidModelError>(node, std::string(what) + " " + shape_str(p.shape) + " must be " + shape_str(want));
  }
}

std::vector<TensorInfo> infer_layer_norm(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "X");
  require_float(node, x, "input X");
  const int64_t axis = layer_norm_axis(node, x.shape);
  const Shape normalized(x.shape.begin() + axis, x.shape.end());
  if (numel(normalized) == 0) {  // no mean or variance of nothing: onnxruntime refuses it too
    node_fail<InvalidModelError>(node, "X " + shape_str(x.shape) + " has no elements to normalize over: shape[axis:] = " +
                                           shape_str(normalized) + " must hold at least 1 (batch dims before axis " +
                                           std::to_string(axis) + " may be 0)");
  }
  for (size_t i : {size_t{1}, size_t{2}}) {
    if (i == 2 && !(inputs.size() > 2 && inputs[2].present)) continue;
    const char* what = i == 1 ? "Scale" : "B";
    const TensorInfo& p = require_input(node, inputs, i, what);
    require_float(node, p, what);
    // Equal element counts and a broadcast to the normalized dims: the same layout (leading 1s).
    if (numel(p.shape) != numel(normalized) || broadcast_shapes(node, p.shape, normalized) != normalized) {
      node_fail<UnsupportedModelError>(node, std::string(what) + " " + shape_str(p.shape) +
                                                 " must have the normalized dims' shape " + shape_str(normalized) +
                                                 " (a broadcast " + what + " is not supported)");
    }
  }
  Shape stats(x.shape.begin(), x.shape.begin() + axis);
  stats.resize(x.shape.size(), 1);
  return {x, TensorInfo{stats, DType::Float32}, TensorInfo{stats, DType::Float32}};
}

const TensorInfo& require_channels(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "X");
  require_float(node, x, "input X");
  if (x.shape.size() < 2) node_fail<InvalidModelError>(node, "X " + shape_str(x.shape) + " must be [N, C, ...]");
  return x;
}

std::vector<TensorInfo> infer_instance_norm(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_channels(node, inputs);
  require_param(node, inputs, 1, "scale", {x.shape[1]});
  require_param(node, inputs, 2, "B", {x.shape[1]});
  return {x};
}

std::vector<TensorInfo> infer_group_norm(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_channels(node, inputs);
  const int64_t groups = node.attr_int("num_groups", 0);
  if (groups <= 0 || x.shape[1] % groups != 0) {
    node_fail<InvalidModelError>(node, "num_groups " + std::to_string(groups) + " must divide the " +
                                           std::to_string(x.shape[1]) + " channels of X " + shape_str(x.shape));
  }
  const Shape params{node.opset >= kGroupNormPerChannelOpset ? x.shape[1] : groups};
  require_param(node, inputs, 1, "scale", params);
  require_param(node, inputs, 2, "bias", params);
  return {x};
}

OpDef norm_op(std::vector<std::string> attrs,
              std::function<std::vector<TensorInfo>(const Node&, const std::vector<ValueInfo>&)> infer, int min_opset) {
  OpDef def;
  def.min_opset = min_opset;
  def.validate = [attrs](const Node& node) {
    node.expect_only_attrs(attrs);
    if (node.op_type == "GroupNormalization" && !node.has_attr("num_groups")) {
      node_fail<InvalidModelError>(node, "attribute 'num_groups' is required");
    }
  };
  def.infer = std::move(infer);
  return def;
}

}  // namespace

NormGeometry norm_geometry(const Node& node, const Shape& x) {
  NormGeometry g;
  g.epsilon = node.attr_float("epsilon", kDefaultEpsilon);
  const int64_t total = numel(x);
  if (node.op_type == "LayerNormalization") {
    const int64_t axis = layer_norm_axis(node, x);
    g.row_len = 1;
    for (size_t d = static_cast<size_t>(axis); d < x.size(); ++d) g.row_len *= x[d];
    g.rows = g.row_len ? total / g.row_len : 0;
    g.chunks = g.row_len;
  } else {
    const int64_t channels = x[1];
    const int64_t spatial = total / std::max<int64_t>(1, x[0] * channels);
    if (node.op_type == "InstanceNormalization") {
      g.row_groups = channels;
      g.row_len = spatial;
      g.chunk_len = spatial;
    } else {
      g.row_groups = node.attr_int("num_groups", 1);
      g.row_len = channels / g.row_groups * spatial;
      const bool per_channel = node.opset >= kGroupNormPerChannelOpset;
      g.chunks = per_channel ? channels / g.row_groups : 1;
      g.chunk_len = per_channel ? spatial : g.row_len;
    }
    g.rows = x[0] * g.row_groups;
  }
  g.params = g.row_groups * g.chunks;
  return g;
}

void register_normalization_ops(OpRegistry& r) {
  r.add("LayerNormalization", norm_op({"axis", "epsilon", "stash_type"}, infer_layer_norm, kLayerNormOpset));
  r.add("InstanceNormalization", norm_op({"epsilon"}, infer_instance_norm, 7));
  r.add("GroupNormalization", norm_op({"num_groups", "epsilon", "stash_type"}, infer_group_norm, kGroupNormOpset));
}

}  // namespace dnnx
