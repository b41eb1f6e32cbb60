// Softmax and LogSoftmax (opsets 1, 11, 13): output type = input type, float32 only.
// The per-opset meaning of `axis` lives in softmax_geometry (see ops/normalization/softmax.h).
#include "ops/normalization/softmax.h"

#include "ops/op.h"

namespace dnnx {

namespace {

// The opset in which `axis` stopped meaning "coerce to 2-D here" and became a single axis.
constexpr int kSingleAxisOpset = 13;

}  // namespace

SoftmaxGeometry softmax_geometry(const Node& node, const Shape& x) {
  const int64_t rank = static_cast<int64_t>(x.size());
  const bool single_axis = node.opset >= kSingleAxisOpset;
  const int64_t axis = normalize_axis(node, node.attr_int("axis", single_axis ? -1 : 1), rank);
  SoftmaxGeometry g;
  for (int64_t d = 0; d < axis; ++d) g.outer *= x[d];
  g.n = x[axis];
  for (int64_t d = axis + 1; d < rank; ++d) (single_axis ? g.inner : g.n) *= x[d];
  return g;
}

namespace {

OpDef softmax_op() {
  OpDef def;
  def.validate = [](const Node& node) { node.expect_only_attrs({"axis"}); };
  def.infer = [](const Node& node, const std::vector<ValueInfo>& inputs) {
    const TensorInfo& x = require_input(node, inputs, 0, "input");
    require_float(node, x, "input");
    softmax_geometry(node, x.shape);  // checks the axis against the rank
    return std::vector<TensorInfo>{x};
  };
  def.min_opset = 1;
  return def;
}

}  // namespace

void register_softmax_ops(OpRegistry& r) {
  r.add("Softmax", softmax_op());
  r.add("LogSoftmax", softmax_op());
}

}  // namespace dnnx
