// MaxPool: X [N, C, spatial...] -> Y [N, C, out...], 1-D, 2-D and 3-D, with strides, pads
// (padding counts as -inf, the lowest value for int8/uint8, opset 12+), dilations, ceil_mode and auto_pad; the optional Indices output
// (int64, Y's shape: the flattened index of each maximum in X, row-major or, storage_order 1,
// column-major over the spatial dims).
#include "ops/pool/pool.h"

#include "ops/op.h"

namespace dnnx {

namespace {

constexpr size_t kIndicesOutput = 1;
constexpr int kByteMaxPoolOpset = 12;  // int8 and uint8 X (onnx's T from MaxPool-12 on)

void validate_max_pool(const Node& node) {
  node.expect_only_attrs(
      {"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "storage_order", "strides"});
  const int64_t order = node.attr_int("storage_order", 0);
  if (order != 0 && order != 1) {
    node_fail<InvalidModelError>(node, "storage_order " + std::to_string(order) + " must be 0 or 1");
  }
  check_window_attrs(node, WindowOp::Pool);
}

}  // namespace

std::vector<TensorInfo> infer_pool_window(const Node& node, const std::vector<ValueInfo>& inputs) {
  return infer_pool_window_of(node, inputs, /*bytes_ok=*/false);
}

std::vector<TensorInfo> infer_pool_window_of(const Node& node, const std::vector<ValueInfo>& inputs, bool bytes_ok) {
  const TensorInfo& x = require_input(node, inputs, 0, "X");
  if (!bytes_ok || (x.dtype != DType::Int8 && x.dtype != DType::UInt8)) require_float(node, x, "input X");
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
  def.infer = [](const Node& node, const std::vector<ValueInfo>& inputs) {
    std::vector<TensorInfo> out = infer_pool_window_of(node, inputs, /*bytes_ok=*/node.opset >= kByteMaxPoolOpset);
    if (node.has_output(kIndicesOutput)) out.push_back(TensorInfo{out[0].shape, DType::Int64});
    return out;
  };
  r.add("MaxPool", std::move(def));
}

}  // namespace dnnx
