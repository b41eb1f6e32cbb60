// AveragePool: X [N, C, spatial...] -> Y [N, C, out...], 1-D, 2-D and 3-D, with strides, pads,
// dilations (opset 19), ceil_mode, auto_pad and count_include_pad. The window geometry is
// MaxPool's (ops/conv/conv_geometry.h). The divisor of one window is the number of its taps inside
// X, or with count_include_pad the number inside the padded X (taps that ceil_mode pushes past
// the end padding never count).
#include "ops/op.h"
#include "ops/pool/pool.h"

namespace dnnx {

namespace {

void validate_avg_pool(const Node& node) {
  node.expect_only_attrs(
      {"auto_pad", "ceil_mode", "count_include_pad", "dilations", "kernel_shape", "pads", "strides"});
  check_window_attrs(node, WindowOp::Pool);
  const int64_t include_pad = node.attr_int("count_include_pad", 0);
  if (include_pad != 0 && include_pad != 1) {
    node_fail<InvalidModelError>(node, "count_include_pad " + std::to_string(include_pad) +
                                           " must be 0 or 1");
  }
}

}  // namespace

void register_avg_pool_ops(OpRegistry& r) {
  OpDef def;
  def.validate = validate_avg_pool;
  def.infer = infer_pool_window;
  r.add("AveragePool", std::move(def));
}

}  // namespace dnnx
