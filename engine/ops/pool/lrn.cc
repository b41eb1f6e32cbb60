// LRN (local response normalisation across channels): X [N, C, d...] ->
// Y[c] = X[c] / (bias + alpha / size * sum of X[c']^2 over c' in [c - (size-1)/2, c + size/2])^beta
// (the window is clipped at the first and last channel).
#include "ops/op.h"

namespace dnnx {

namespace {

void validate_lrn(const Node& node) {
  node.expect_only_attrs({"alpha", "beta", "bias", "size"});
  if (!node.has_attr("size")) node_fail<InvalidModelError>(node, "attribute 'size' is required");
  if (node.attr_int("size", 0) < 1) {
    node_fail<InvalidModelError>(node, "size " + std::to_string(node.attr_int("size", 0)) + " must be >= 1");
  }
}

std::vector<TensorInfo> infer_lrn(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "X");
  require_float(node, x, "input X");
  if (x.shape.size() < 3) {
    node_fail<InvalidModelError>(node, "X " + shape_str(x.shape) + " must be [N, C, spatial...]");
  }
  return {x};
}

}  // namespace

void register_lrn_ops(OpRegistry& r) {
  OpDef def;
  def.validate = validate_lrn;
  def.infer = infer_lrn;
  def.min_opset = 1;
  r.add("LRN", std::move(def));
}

}  // namespace dnnx
