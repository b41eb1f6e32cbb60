// CumSum (opset 11) and CumProd (26): x [..] float32, int32 or int64, axis (an int32 or int64
// scalar or one-element tensor, a value input: known when the plan is built, negative counts
// from the end) -> y of x's shape and type. Attributes exclusive and reverse (0 or 1).
#include "ops/reduce/cumulative.h"

#include "ops/const_inputs.h"
#include "ops/elementwise/elementwise.h"

namespace dnnx {

namespace {

constexpr size_t kAxisInput = 1;
constexpr int kCumSumOpset = 11, kCumProdOpset = 26;

int64_t cumulative_axis(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& axis = require_input(node, inputs, kAxisInput, "axis");
  if (!is_integer(axis.dtype) || axis.shape.size() > 1 || numel(axis.shape) != 1) {
    node_fail<InvalidModelError>(node, "input 'axis' must be an int32 or int64 scalar, got " +
                                           std::string(dtype_name(axis.dtype)) + " " + shape_str(axis.shape));
  }
  const int64_t rank = static_cast<int64_t>(inputs[0].info.shape.size());
  return normalize_axis(node, constant_ints(node, inputs, kAxisInput, "axis")[0], rank);
}

OpDef cumulative_op(int min_opset) {
  OpDef def;
  def.min_opset = min_opset;
  def.value_inputs = {kAxisInput};
  def.validate = [](const Node& node) { node.expect_only_attrs({"exclusive", "reverse"}); };
  def.infer = [](const Node& node, const std::vector<ValueInfo>& inputs) {
    const TensorInfo& x = require_input(node, inputs, 0, "x");
    require_element_type(node, x, ElementTypes::Numbers, "input x");
    if (x.shape.empty()) node_fail<InvalidModelError>(node, "input x must have at least one dim, got a scalar");
    cumulative_axis(node, inputs);
    return std::vector<TensorInfo>{x};
  };
  return def;
}

}  // namespace

CumulativeGeometry cumulative_geometry(const Node& node, const std::vector<ValueInfo>& inputs) {
  const Shape& x = inputs[0].info.shape;
  const int64_t axis = cumulative_axis(node, inputs);
  CumulativeGeometry g;
  for (int64_t d = 0; d < axis; ++d) g.outer *= x[d];
  g.n = x[axis];
  for (size_t d = axis + 1; d < x.size(); ++d) g.inner *= x[d];
  g.exclusive = node.attr_int("exclusive", 0) != 0;
  g.reverse = node.attr_int("reverse", 0) != 0;
  return g;
}

void register_cumulative_ops(OpRegistry& r) {
  r.add("CumSum", cumulative_op(kCumSumOpset));
  r.add("CumProd", cumulative_op(kCumProdOpset));
}

}  // namespace dnnx
