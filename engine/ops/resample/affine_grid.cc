// AffineGrid (opset 20): theta [N, 2, 3] with size (N, C, H, W), or theta [N, 3, 4] with size
// (N, C, D, H, W) (int64, known when planning) -> grid [N, H, W, 2] or [N, D, H, W, 3]: each
// output position's normalized coordinates (x along W first, then y, z), homogeneous with a
// trailing 1, multiplied by theta[n]. Coordinate i of a dim of length L is -1 + 2i / (L - 1)
// with align_corners (1 when L is 1, as onnxruntime has it), else -1 + (2i + 1) / L: GridSample's conventions.
#include "ops/const_inputs.h"
#include "ops/op.h"

namespace dnnx {

namespace {

constexpr int kAffineGridOpset = 20;

std::vector<TensorInfo> infer_affine_grid(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& theta = require_input(node, inputs, 0, "theta");
  require_float(node, theta, "input theta");
  const std::vector<int64_t> size = constant_ints(node, inputs, 1, "size");
  if (size.size() != 4 && size.size() != 5) {
    node_fail<InvalidModelError>(node, "size must hold 4 values (N, C, H, W) or 5 (N, C, D, H, W), got " +
                                           std::to_string(size.size()));
  }
  const int64_t r = static_cast<int64_t>(size.size()) - 2;
  if (theta.shape != Shape{size[0], r, r + 1}) {
    node_fail<InvalidModelError>(node, "theta " + shape_str(theta.shape) + " must be [" + std::to_string(size[0]) +
                                           ", " + std::to_string(r) + ", " + std::to_string(r + 1) + "] for size " +
                                           shape_str(size));
  }
  for (int64_t v : size) {
    if (v < 0) node_fail<InvalidModelError>(node, "size " + shape_str(size) + " must not be negative");
  }
  Shape grid = {size[0]};
  grid.insert(grid.end(), size.begin() + 2, size.end());
  grid.push_back(r);
  return {TensorInfo{grid, theta.dtype}};
}

}  // namespace

void register_affine_grid_ops(OpRegistry& r) {
  OpDef def;
  def.min_opset = kAffineGridOpset;
  def.validate = [](const Node& node) { node.expect_only_attrs({"align_corners"}); };
  def.infer = infer_affine_grid;
  def.value_inputs = {1};
  r.add("AffineGrid", std::move(def));
}

}  // namespace dnnx
