// Hardmax (opsets 1, 11, 13): 1 at the first maximum of each row, 0 elsewhere; float in, the
// same type out. Its rows are Softmax's (ops/normalization/softmax.h's geometry: coerced to 2-D
// before opset 13, a single axis from 13).
#include "ops/normalization/softmax.h"

namespace dnnx {

void register_hardmax_ops(OpRegistry& r) {
  OpDef def;
  def.min_opset = 1;
  def.validate = [](const Node& node) { node.expect_only_attrs({"axis"}); };
  def.infer = [](const Node& node, const std::vector<ValueInfo>& inputs) {
    const TensorInfo& x = require_input(node, inputs, 0, "input");
    require_float(node, x, "input");
    softmax_geometry(node, x.shape);  // checks the axis against the rank
    return std::vector<TensorInfo>{x};
  };
  r.add("Hardmax", def);
}

}  // namespace dnnx
