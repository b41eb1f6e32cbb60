// com.microsoft's QLinearGlobalAveragePool (1): X, x_scale, x_zero_point, y_scale, y_zero_point
//   -> Y, int8 or uint8 alike; X [N, C, spatial...] ([N, spatial..., C] with channels_last = 1)
//   -> Y [N, C, 1...] ([N, 1..., C]). As onnxruntime's MLAS: the int32 sum of each image minus
//   x_zp * image_size, requantized with x_scale / (y_scale * image_size) (Note [requantization]).
// The kernel is backends/cpu/quant/qlinear_global_average_pool_cpu.cc.
#include "ops/quant/int_matmul.h"

namespace dnnx {

namespace {

std::vector<TensorInfo> infer_qgap(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "X");
  require_int8_type(node, x, "X");
  const char* names[] = {"x_scale", "x_zero_point", "y_scale", "y_zero_point"};
  for (size_t i = 1; i <= 4; ++i) {
    const TensorInfo& p = require_input(node, inputs, i, names[i - 1]);
    const DType want = i % 2 == 1 ? DType::Float32 : x.dtype;
    if (p.dtype != want) {
      node_fail<InvalidModelError>(node, std::string(names[i - 1]) + " is " + dtype_name(p.dtype) + ", expected " +
                                             dtype_name(want));
    }
    require_one_value(node, p.shape, names[i - 1]);
  }
  if (x.shape.size() < 3) node_fail<InvalidModelError>(node, "X " + shape_str(x.shape) + " must have a spatial dim");
  const bool channels_last = node.attr_int("channels_last", 0) != 0;
  Shape y(x.shape.size(), 1);
  y[0] = x.shape[0];
  const size_t channel_dim = channels_last ? x.shape.size() - 1 : 1;
  y[channel_dim] = x.shape[channel_dim];
  return {TensorInfo{y, x.dtype}};
}

}  // namespace

void register_qlinear_global_average_pool_ops(OpRegistry& r) {
  OpDef def;
  def.validate = [](const Node& node) { node.expect_only_attrs({"channels_last"}); };
  def.infer = infer_qgap;
  def.min_opset = 1;
  r.add(op_key(kMicrosoftDomain, "QLinearGlobalAveragePool"), std::move(def));
}

}  // namespace dnnx
