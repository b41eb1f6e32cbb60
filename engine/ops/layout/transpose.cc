// Transpose (opsets 1, 13): any dtype, the output has the input's dtype.
#include "ops/layout/transpose.h"

#include "ops/op.h"

namespace dnnx {

std::vector<int64_t> transpose_perm(const Node& node, size_t rank) {
  std::vector<int64_t> reversed(rank);
  for (size_t i = 0; i < rank; ++i) reversed[i] = static_cast<int64_t>(rank - 1 - i);
  const std::vector<int64_t> perm = node.attr_ints("perm", reversed);
  std::vector<bool> seen(rank, false);
  bool valid = perm.size() == rank;
  for (size_t i = 0; valid && i < rank; ++i) {
    valid = perm[i] >= 0 && perm[i] < static_cast<int64_t>(rank) && !seen[perm[i]];
    if (valid) seen[perm[i]] = true;
  }
  if (!valid) {
    node_fail<InvalidModelError>(node, "perm " + shape_str(perm) + " is not a permutation of the " +
                                           std::to_string(rank) + " input dims");
  }
  return perm;
}

namespace {

std::vector<TensorInfo> infer_transpose(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "data");
  const std::vector<int64_t> perm = transpose_perm(node, x.shape.size());
  TensorInfo out{Shape(perm.size()), x.dtype};
  for (size_t i = 0; i < perm.size(); ++i) out.shape[i] = x.shape[perm[i]];
  return {out};
}

}  // namespace

void register_transpose_ops(OpRegistry& r) {
  OpDef def;
  def.validate = [](const Node& node) { node.expect_only_attrs({"perm"}); };
  def.infer = infer_transpose;
  def.min_opset = 1;
  r.add("Transpose", std::move(def));
}

}  // namespace dnnx
