// LpPool (opset 11; 18: ceil_mode, dilations): X [N, C, spatial...] -> Y [N, C, out...],
// y = (sum over the window's taps inside X of |x|^p)^(1/p): padding adds nothing. The window
// geometry is MaxPool's (ops/conv/conv_geometry.h).
#include "ops/op.h"
#include "ops/pool/pool.h"

namespace dnnx {

namespace {

constexpr int kLpPoolOpset = 11, kDilationsOpset = 18;

void validate_lp_pool(const Node& node) {
  std::vector<std::string> known = {"auto_pad", "kernel_shape", "p", "pads", "strides"};
  if (node.opset >= kDilationsOpset) known.insert(known.end(), {"ceil_mode", "dilations"});
  node.expect_only_attrs(known);
  check_window_attrs(node, WindowOp::Pool);
  if (node.attr_int("p", 2) <= 0) {
    node_fail<InvalidModelError>(node, "p " + std::to_string(node.attr_int("p", 2)) + " must be positive");
  }
}

}  // namespace

void register_lp_pool_ops(OpRegistry& r) {
  OpDef def;
  def.min_opset = kLpPoolOpset;
  def.validate = validate_lp_pool;
  def.infer = infer_pool_window;
  r.add("LpPool", std::move(def));
}

}  // namespace dnnx
