// DepthToSpace (opset 1; mode DCR / CRD from 11) and SpaceToDepth (opset 1; mode from 28):
// x [N, C, H, W] (any dtype) -> [N, C/b², H*b, W*b] or [N, C*b², H/b, W/b], b = blocksize
// (ops/layout/space_depth.h gives the element order).
#include "ops/layout/space_depth.h"

namespace dnnx {

namespace {

bool is_depth_to_space(const Node& node) { return node.op_type == "DepthToSpace"; }

int64_t blocksize(const Node& node) {
  if (!node.has_attr("blocksize")) node_fail<InvalidModelError>(node, "attribute 'blocksize' is required");
  const int64_t b = node.attr_int("blocksize", 1);
  if (b < 1) node_fail<InvalidModelError>(node, "blocksize must be at least 1, got " + std::to_string(b));
  return b;
}

bool crd_mode(const Node& node) {
  const std::string mode = node.attr_string("mode", "DCR");
  if (mode != "DCR" && mode != "CRD") {
    node_fail<InvalidModelError>(node, "mode must be 'DCR' or 'CRD', got '" + mode + "'");
  }
  return mode == "CRD";
}

void validate_space_depth(const Node& node) {
  const bool has_mode = is_depth_to_space(node) ? node.opset >= 11 : node.opset >= 28;
  node.expect_only_attrs(has_mode ? std::vector<std::string>{"blocksize", "mode"}
                                  : std::vector<std::string>{"blocksize"});
  blocksize(node);
  crd_mode(node);
}

std::vector<TensorInfo> infer_space_depth(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "input");
  block_permute(node, x.shape);
  const int64_t b = blocksize(node);
  Shape y = x.shape;
  if (is_depth_to_space(node)) {
    y[1] /= b * b;
    y[2] *= b;
    y[3] *= b;
  } else {
    y[1] *= b * b;
    y[2] /= b;
    y[3] /= b;
  }
  return {TensorInfo{y, x.dtype}};
}

}  // namespace

BlockPermute block_permute(const Node& node, const Shape& x) {
  if (x.size() != 4) node_fail<InvalidModelError>(node, "input must be 4-D [N, C, H, W], got " + shape_str(x));
  const int64_t b = blocksize(node);
  const int64_t n = x[0], c = x[1], h = x[2], w = x[3];
  const bool crd = crd_mode(node);
  if (is_depth_to_space(node)) {
    if (c % (b * b) != 0) {
      node_fail<InvalidModelError>(node, "channels of " + shape_str(x) + " must be a multiple of blocksize² = " +
                                             std::to_string(b * b));
    }
    const int64_t c2 = c / (b * b);
    if (crd) return {{n, c2, b, b, h, w}, {0, 1, 4, 2, 5, 3}};
    return {{n, b, b, c2, h, w}, {0, 3, 4, 1, 5, 2}};
  }
  if (h % b != 0 || w % b != 0) {
    node_fail<InvalidModelError>(node, "height and width of " + shape_str(x) + " must be multiples of blocksize " +
                                           std::to_string(b));
  }
  const Shape view{n, c, h / b, b, w / b, b};
  if (crd) return {view, {0, 1, 3, 5, 2, 4}};
  return {view, {0, 3, 5, 1, 2, 4}};
}

void register_space_depth_ops(OpRegistry& r) {
  OpDef def;
  def.validate = validate_space_depth;
  def.infer = infer_space_depth;
  def.min_opset = 1;
  r.add("DepthToSpace", def);
  r.add("SpaceToDepth", std::move(def));
}

}  // namespace dnnx
