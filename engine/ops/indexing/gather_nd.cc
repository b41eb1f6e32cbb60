// GatherND (opset 11; batch_dims from 12): data [b..., g..., s...], indices (int64, or int32)
// [b..., t..., k] -> [b..., t..., s...] (ops/indexing/gather_nd.h). Indices are read and checked
// when the kernel runs.
#include "ops/indexing/gather_nd.h"

#include <algorithm>

namespace dnnx {

GatherNDGeometry gather_nd_geometry(const Node& node, const Shape& data, const Shape& indices) {
  const int64_t r = static_cast<int64_t>(data.size());
  const int64_t q = static_cast<int64_t>(indices.size());
  const int64_t b = node.attr_int("batch_dims", 0);
  const std::string shapes = "data " + shape_str(data) + ", indices " + shape_str(indices);
  if (r < 1 || q < 1) node_fail<InvalidModelError>(node, "data and indices must have rank >= 1: " + shapes);
  if (b < 0 || b >= std::min(r, q)) {
    node_fail<InvalidModelError>(node, "batch_dims " + std::to_string(b) + " must be in [0, min(rank of data, rank of "
                                       "indices)): " + shapes);
  }
  GatherNDGeometry g;
  g.k = indices.back();
  if (g.k < 0 || g.k > r - b) {  // 0: every tuple takes the whole slice (an empty index tuple)
    node_fail<InvalidModelError>(node, "the last dim of indices (" + std::to_string(g.k) + ") must be in [0, " +
                                           std::to_string(r - b) + "]: " + shapes);
  }
  for (int64_t d = 0; d < b; ++d) {
    if (data[d] != indices[d]) {
      node_fail<InvalidModelError>(node, "the first batch_dims (" + std::to_string(b) +
                                             ") dims of data and indices must agree: " + shapes);
    }
    g.batches *= data[d];
  }
  for (int64_t d = b; d < q - 1; ++d) g.tuples *= indices[d];
  g.gathered.assign(data.begin() + b, data.begin() + b + g.k);
  for (int64_t d = b + g.k; d < r; ++d) g.slice *= data[d];
  g.batch_stride = numel(g.gathered) * g.slice;
  return g;
}

namespace {

std::vector<TensorInfo> infer_gather_nd(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& data = require_input(node, inputs, 0, "data");
  const TensorInfo& indices = require_input(node, inputs, 1, "indices");
  if (!is_integer(indices.dtype)) {
    node_fail<InvalidModelError>(node, std::string("indices must be int64 (or int32), got ") + dtype_name(indices.dtype));
  }
  const GatherNDGeometry g = gather_nd_geometry(node, data.shape, indices.shape);
  Shape out(indices.shape.begin(), indices.shape.end() - 1);
  out.insert(out.end(), data.shape.begin() + node.attr_int("batch_dims", 0) + g.k, data.shape.end());
  return {TensorInfo{out, data.dtype}};
}

}  // namespace

void register_gather_nd_ops(OpRegistry& r) {
  OpDef def;
  def.validate = [](const Node& node) {
    node.expect_only_attrs(node.opset < 12 ? std::vector<std::string>{} : std::vector<std::string>{"batch_dims"});
  };
  def.infer = infer_gather_nd;
  def.min_opset = 11;
  r.add("GatherND", std::move(def));
}

}  // namespace dnnx
