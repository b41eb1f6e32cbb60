// MaxPool: X [N, C, spatial...] -> Y [N, C, out...], 1-D, 2-D and 3-D, with strides, pads
// (padding counts as -inf), dilations, ceil_mode and auto_pad. The optional Indices output and
// a column-major storage_order are refused at load.
#include "ops/pool.h"

#include "ops/op.h"

namespace dnnx {

namespace {

constexpr size_t kMinSpatialRank = 1;
constexpr size_t kMaxSpatialRank = 3;
constexpr size_t kIndicesOutput = 1;

void validate_max_pool(const Node& node) {
  node.expect_only_attrs(
      {"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "storage_order", "strides"});
  if (node.has_output(kIndicesOutput)) {
    node_fail<UnsupportedModelError>(node, "MaxPool Indices output is not supported");
  }
  if (node.attr_int("storage_order", 0) != 0) {
    node_fail<UnsupportedModelError>(node, "storage_order " +
                                               std::to_string(node.attr_int("storage_order", 0)) +
                                               " is not supported (only 0, row major)");
  }
  check_window_attrs(node, WindowOp::Pool);
}

}  // namespace

std::vector<TensorInfo> infer_pool_window(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "X");
  require_float(node, x, "input X");
  const size_t rank = x.shape.size();
  if (rank < 2 + kMinSpatialRank || rank > 2 + kMaxSpatialRank) {
    node_fail<UnsupportedModelError>(node, "X " + shape_str(x.shape) +
                                               " must be [N, C, spatial...] with 1 to 3 spatial dims");
  }
  const Shape spatial(x.shape.begin() + 2, x.shape.end());
  const ConvGeometry g =
      make_conv_geometry(node, WindowOp::Pool, spatial, node.attr_ints("kernel_shape", {}));
  Shape y{x.shape[0], x.shape[1]};
  y.insert(y.end(), g.output.begin(), g.output.end());
  return {TensorInfo{y, x.dtype}};
}

void register_pool_ops(OpRegistry& r) {
  OpDef def;
  def.validate = validate_max_pool;
  def.infer = infer_pool_window;
  r.add("MaxPool", std::move(def));
}

}  // namespace dnnx
