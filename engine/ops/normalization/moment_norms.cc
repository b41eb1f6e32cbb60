// RMSNormalization (opset 23; X, scale -> Y; axis -1, epsilon 1e-5, stash_type 1: computed in
// float32), LpNormalization (opset 1; axis -1, p 2) and MeanVarianceNormalization (opset 9;
// axes [0, 2, 3]): float in, Y of X's shape and type. Their meaning is moment_norms.h's.
#include "ops/normalization/moment_norms.h"

namespace dnnx {

namespace {

constexpr int kRmsNormOpset = 23, kMvnOpset = 9;

std::vector<TensorInfo> infer_rms_norm(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "X");
  require_float(node, x, "input X");
  const TensorInfo& scale = require_input(node, inputs, 1, "scale");
  if (scale.dtype != x.dtype) {
    node_fail<InvalidModelError>(node, std::string("scale is ") + dtype_name(scale.dtype) + ", X is " +
                                           dtype_name(x.dtype));
  }
  rms_norm_geometry(node, x.shape, scale.shape);
  return {x};
}

std::vector<TensorInfo> infer_same_float(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "X");
  require_float(node, x, "input X");
  if (node.op_type == "LpNormalization") {
    lp_norm_geometry(node, x.shape);
  } else {
    mvn_reduced_axes(node, x.shape);
  }
  return {x};
}

OpDef norm_op(std::vector<std::string> attrs, int min_opset,
              std::function<std::vector<TensorInfo>(const Node&, const std::vector<ValueInfo>&)> infer) {
  OpDef def;
  def.min_opset = min_opset;
  def.validate = [attrs](const Node& node) {
    node.expect_only_attrs(attrs);
    if (node.op_type == "LpNormalization") {
      const int64_t p = node.attr_int("p", 2);
      if (p != 1 && p != 2) node_fail<InvalidModelError>(node, "p " + std::to_string(p) + " must be 1 or 2");
    }
  };
  def.infer = std::move(infer);
  return def;
}

}  // namespace

RmsNormGeometry rms_norm_geometry(const Node& node, const Shape& x, const Shape& scale) {
  const int64_t rank = static_cast<int64_t>(x.size());
  const int64_t axis = normalize_axis(node, node.attr_int("axis", -1), rank);
  const Shape normalized(x.begin() + axis, x.end());
  bool fits = scale.size() <= normalized.size();  // unidirectional: scale's dims are 1 or the normalized ones
  for (size_t d = 0; fits && d < scale.size(); ++d) {
    const int64_t want = normalized[normalized.size() - scale.size() + d];
    fits = scale[d] == 1 || scale[d] == want;
  }
  if (!fits) {
    node_fail<InvalidModelError>(node, "scale " + shape_str(scale) + " does not broadcast to the normalized dims " +
                                           shape_str(normalized) + " of X " + shape_str(x));
  }
  RmsNormGeometry g;
  g.epsilon = node.attr_float("epsilon", 1e-5f);
  for (int64_t d = 0; d < axis; ++d) g.rows *= x[d];
  g.row_len = numel(normalized);
  // scale's element for each normalized element: its index with the broadcast dims at 0.
  const size_t lead = normalized.size() - scale.size();
  g.scale_index.assign(static_cast<size_t>(g.row_len), 0);
  for (int64_t j = 0; j < g.row_len; ++j) {
    int64_t rest = j, index = 0, stride = 1;
    for (size_t d = normalized.size(); d-- > lead;) {
      const int64_t coord = rest % normalized[d];
      rest /= normalized[d];
      const int64_t sdim = scale[d - lead];
      if (sdim != 1) index += coord * stride;
      stride *= sdim;
    }
    g.scale_index[static_cast<size_t>(j)] = index;
  }
  return g;
}

LpNormGeometry lp_norm_geometry(const Node& node, const Shape& x) {
  const int64_t rank = static_cast<int64_t>(x.size());
  const int64_t axis = normalize_axis(node, node.attr_int("axis", -1), rank);
  LpNormGeometry g;
  for (int64_t d = 0; d < axis; ++d) g.outer *= x[d];
  g.n = x[axis];
  for (int64_t d = axis + 1; d < rank; ++d) g.inner *= x[d];
  g.p = static_cast<int>(node.attr_int("p", 2));
  return g;
}

std::vector<bool> mvn_reduced_axes(const Node& node, const Shape& x) {
  const int64_t rank = static_cast<int64_t>(x.size());
  std::vector<bool> reduced(x.size(), false);
  for (int64_t a : node.attr_ints("axes", {0, 2, 3})) reduced[normalize_axis(node, a, rank)] = true;
  return reduced;
}

void register_moment_norms_ops(OpRegistry& r) {
  r.add("RMSNormalization", norm_op({"axis", "epsilon", "stash_type"}, kRmsNormOpset, infer_rms_norm));
  r.add("LpNormalization", norm_op({"axis", "p"}, 1, infer_same_float));
  r.add("MeanVarianceNormalization", norm_op({"axes"}, kMvnOpset, infer_same_float));
}

}  // namespace dnnx
