// com.microsoft's QLinearAveragePool and QLinearSoftmax (1), as onnxruntime's CPU kernels compute
// them (the kernels are backends/cpu/quant/qlinear_pool_softmax_cpu.cc):
//   QLinearAveragePool  X, x_scale, x_zero_point?, y_scale, y_zero_point? -> Y; AveragePool's
//     auto_pad, ceil_mode, count_include_pad, kernel_shape, pads, strides (no dilations) and
//     channels_last. Each tap dequantized to float32, the window's float sum over its count
//     (the kernel size with count_include_pad), y = saturate(round(avg / y_scale + y_zp)).
//   QLinearSoftmax  X, X_scale, x_zero_point?, y_scale, y_zero_point? -> Y; attributes opset
//     (required: the Softmax opset whose axis meaning applies) and axis. onnxruntime's table of
//     exp over the 256 values (shifted so that the row's maximum reads its last entry), the float
//     sum, y = round(e * floor(1 / y_scale) / sum) + y_zp, clipped above at the type's largest
//     value (onnxruntime 1.32's results; the quotient is never negative).
#include "ops/quant/qlinear_pool_softmax.h"

#include "ops/quant/int_matmul.h"

namespace dnnx {

ConvGeometry qlinear_pool_geometry(const Node& node, const Shape& x) {
  if (x.size() < 3 || x.size() > 5) {
    node_fail<UnsupportedModelError>(node, "X " + shape_str(x) + " must have 1 to 3 spatial dims");
  }
  const bool channels_last = node.attr_int("channels_last", 0) != 0;
  const Shape spatial = channels_last ? Shape(x.begin() + 1, x.end() - 1) : Shape(x.begin() + 2, x.end());
  return make_conv_geometry(node, WindowOp::Pool, spatial, node.attr_ints("kernel_shape", {}));
}

SoftmaxRows qlinear_softmax_rows(const Node& node, const Shape& x) {
  const int64_t opset = node.attr_int("opset", 13);
  const int64_t rank = static_cast<int64_t>(x.size());
  SoftmaxRows r;
  if (rank == 0) return r;
  const int64_t axis = normalize_axis(node, node.attr_int("axis", opset < 13 ? 1 : -1), rank);
  for (int64_t d = 0; d < rank; ++d) {
    if (d < axis) r.outer *= x[d];
    else if (d == axis || opset < 13) r.d *= x[d];
    else r.inner *= x[d];
  }
  return r;
}

namespace {

void require_params(const Node& node, const std::vector<ValueInfo>& inputs, const TensorInfo& x) {
  const char* names[] = {"x_scale", "x_zero_point", "y_scale", "y_zero_point"};
  for (size_t i = 1; i <= 4; ++i) {
    const bool scale = i % 2 == 1;
    if (!scale && (i >= inputs.size() || !inputs[i].present)) continue;  // an omitted zero point is 0
    const TensorInfo& p = require_input(node, inputs, i, names[i - 1]);
    const DType want = scale ? DType::Float32 : x.dtype;
    if (p.dtype != want) {
      node_fail<InvalidModelError>(node, std::string(names[i - 1]) + " is " + dtype_name(p.dtype) + ", expected " +
                                             dtype_name(want));
    }
    require_one_value(node, p.shape, names[i - 1]);
  }
}

std::vector<TensorInfo> infer_pool(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "X");
  require_int8_type(node, x, "X");
  require_params(node, inputs, x);
  const ConvGeometry g = qlinear_pool_geometry(node, x.shape);
  const bool channels_last = node.attr_int("channels_last", 0) != 0;
  Shape y{x.shape[0]};
  if (!channels_last) y.push_back(x.shape[1]);
  y.insert(y.end(), g.output.begin(), g.output.end());
  if (channels_last) y.push_back(x.shape.back());
  return {TensorInfo{y, x.dtype}};
}

std::vector<TensorInfo> infer_softmax(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "X");
  require_int8_type(node, x, "X");
  require_params(node, inputs, x);
  qlinear_softmax_rows(node, x.shape);
  return {TensorInfo{x.shape, x.dtype}};
}

}  // namespace

void register_qlinear_pool_softmax_ops(OpRegistry& r) {
  OpDef pool;
  pool.validate = [](const Node& node) {
    node.expect_only_attrs({"auto_pad", "ceil_mode", "count_include_pad", "kernel_shape", "pads", "strides",
                            "channels_last"});
    check_window_attrs(node, WindowOp::Pool);
  };
  pool.infer = infer_pool;
  pool.min_opset = 1;
  r.add(op_key(kMicrosoftDomain, "QLinearAveragePool"), std::move(pool));

  OpDef softmax;
  softmax.validate = [](const Node& node) {
    node.expect_only_attrs({"opset", "axis"});
    if (!node.has_attr("opset")) node_fail<InvalidModelError>(node, "attribute 'opset' is required");
  };
  softmax.infer = infer_softmax;
  softmax.min_opset = 1;
  r.add(op_key(kMicrosoftDomain, "QLinearSoftmax"), std::move(softmax));
}

}  // namespace dnnx
