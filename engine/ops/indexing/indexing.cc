// The indexing ops:
//   GatherElements  data [d...], indices (same rank, int32/int64) -> [indices' shape]: out[p] =
//                   data[p with p[axis] = indices[p]] (negative indices count from the end)
//   ScatterND       data [d...], indices [..., k] (int64), updates [indices[:-1], d[k:]] -> data
//                   with the slices the index tuples name replaced or combined (reduction
//                   none / add / mul, and max / min from opset 18)
//   Tile            input [d...], repeats [rank] (a value input) -> [d * repeats]
//   TopK            X [..., n, ...], K ([1] int64, a value input) -> Values [..., k, ...] and
//                   int64 Indices: the k largest (or smallest) along `axis`, sorted, ties to the
//                   lower index
//   ArgMax, ArgMin  X -> int64 indices along `axis` (keepdims, select_last_index)
#include "ops/indexing/indexing.h"

#include "ops/const_inputs.h"

namespace dnnx {

namespace {

void require_index(const Node& node, const TensorInfo& t, const char* what) {
  if (!is_index(t.dtype)) {
    node_fail<InvalidModelError>(node, std::string(what) + " must be int32 or int64, got " + dtype_name(t.dtype));
  }
}

void require_numeric(const Node& node, const TensorInfo& t, const char* what) {
  if (!is_floating(t.dtype) && t.dtype != DType::Int32 && t.dtype != DType::Int64) {
    node_fail<UnsupportedModelError>(node, std::string(what) + " must be a float type, int32 or int64, got " +
                                               dtype_name(t.dtype));
  }
}

std::vector<TensorInfo> infer_gather_elements(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& data = require_input(node, inputs, 0, "data");
  const TensorInfo& indices = require_input(node, inputs, 1, "indices");
  require_index(node, indices, "indices");
  const int64_t rank = static_cast<int64_t>(data.shape.size());
  if (rank == 0 || indices.shape.size() != data.shape.size()) {
    node_fail<InvalidModelError>(node, "indices " + shape_str(indices.shape) + " must have the rank of data " +
                                           shape_str(data.shape) + " (at least 1)");
  }
  const int64_t axis = normalize_axis(node, node.attr_int("axis", 0), rank);
  for (int64_t d = 0; d < rank; ++d) {
    if (d != axis && indices.shape[d] > data.shape[d]) {
      node_fail<InvalidModelError>(node, "indices " + shape_str(indices.shape) + " exceed data " +
                                             shape_str(data.shape) + " along dim " + std::to_string(d));
    }
  }
  return {TensorInfo{indices.shape, data.dtype}};
}

std::vector<TensorInfo> infer_scatter_nd(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& data = require_input(node, inputs, 0, "data");
  const TensorInfo& indices = require_input(node, inputs, 1, "indices");
  const TensorInfo& updates = require_input(node, inputs, 2, "updates");
  require_numeric(node, data, "data");
  require_index(node, indices, "indices");
  if (updates.dtype != data.dtype) node_fail<InvalidModelError>(node, "updates must have data's dtype");
  if (indices.shape.empty()) node_fail<InvalidModelError>(node, "indices must have rank >= 1");
  const int64_t k = indices.shape.back();
  if (k < 1 || k > static_cast<int64_t>(data.shape.size())) {
    node_fail<InvalidModelError>(node, "the last dim of indices " + shape_str(indices.shape) +
                                           " must be in [1, rank of data " + shape_str(data.shape) + "]");
  }
  Shape want(indices.shape.begin(), indices.shape.end() - 1);
  want.insert(want.end(), data.shape.begin() + k, data.shape.end());
  if (updates.shape != want) {
    node_fail<InvalidModelError>(node, "updates " + shape_str(updates.shape) + " must be " + shape_str(want) +
                                           " for data " + shape_str(data.shape) + " and indices " +
                                           shape_str(indices.shape));
  }
  scatter_reduction(node);
  return {data};
}

std::vector<TensorInfo> infer_tile(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "input");
  const std::vector<int64_t> repeats = tile_repeats(node, inputs);
  Shape out = x.shape;
  for (size_t d = 0; d < out.size(); ++d) out[d] *= repeats[d];
  return {TensorInfo{out, x.dtype}};
}

std::vector<TensorInfo> infer_topk(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "X");
  require_numeric(node, x, "X");
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  if (rank == 0) node_fail<InvalidModelError>(node, "X must have rank >= 1");
  const int64_t axis = normalize_axis(node, node.attr_int("axis", -1), rank);
  const int64_t k = topk_k(node, inputs);
  if (k < 0 || k > x.shape[axis]) {
    node_fail<InvalidModelError>(node, "k " + std::to_string(k) + " must be in [0, " + std::to_string(x.shape[axis]) +
                                           "] for X " + shape_str(x.shape) + " along axis " + std::to_string(axis));
  }
  Shape out = x.shape;
  out[axis] = k;
  return {TensorInfo{out, x.dtype}, TensorInfo{out, DType::Int64}};
}

std::vector<TensorInfo> infer_arg(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "data");
  require_numeric(node, x, "data");
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  if (rank == 0) node_fail<InvalidModelError>(node, "data must have rank >= 1");
  const int64_t axis = normalize_axis(node, node.attr_int("axis", 0), rank);
  if (x.shape[axis] == 0) node_fail<InvalidModelError>(node, "cannot take an arg over the empty axis of " + shape_str(x.shape));
  Shape out = x.shape;
  if (node.attr_int("keepdims", 1) != 0) {
    out[axis] = 1;
  } else {
    out.erase(out.begin() + axis);
  }
  return {TensorInfo{out, DType::Int64}};
}

}  // namespace

ScatterReduction scatter_reduction(const Node& node) {
  const std::string s = node.attr_string("reduction", "none");
  if (s == "none") return ScatterReduction::None;
  if (s == "add") return ScatterReduction::Add;
  if (s == "mul") return ScatterReduction::Mul;
  if (s == "max" && node.opset >= 18) return ScatterReduction::Max;
  if (s == "min" && node.opset >= 18) return ScatterReduction::Min;
  node_fail<UnsupportedModelError>(node, "reduction '" + s + "' is not supported at opset " + std::to_string(node.opset));
}

std::vector<int64_t> tile_repeats(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "input");
  const std::vector<int64_t> repeats = constant_ints(node, inputs, 1, "repeats");
  if (repeats.size() != x.shape.size()) {
    node_fail<InvalidModelError>(node, "repeats has " + std::to_string(repeats.size()) + " values for input " +
                                           shape_str(x.shape));
  }
  for (int64_t r : repeats) {
    if (r < 0) node_fail<InvalidModelError>(node, "repeats must not be negative");
  }
  return repeats;
}

int64_t topk_k(const Node& node, const std::vector<ValueInfo>& inputs) {
  if (node.opset < 10) return node.attr_int("k", 0);
  const std::vector<int64_t> k = constant_ints(node, inputs, 1, "K");
  if (k.size() != 1) node_fail<InvalidModelError>(node, "K must hold one value");
  return k[0];
}

AxisView axis_view(const Shape& x, int64_t axis) {
  AxisView v;
  for (int64_t d = 0; d < axis; ++d) v.outer *= x[d];
  v.size = x[axis];
  for (size_t d = axis + 1; d < x.size(); ++d) v.inner *= x[d];
  return v;
}

void register_indexing_ops(OpRegistry& r) {
  OpDef gather;
  gather.validate = [](const Node& node) { node.expect_only_attrs({"axis"}); };
  gather.infer = infer_gather_elements;
  gather.min_opset = 11;
  r.add("GatherElements", std::move(gather));

  OpDef scatter;
  scatter.validate = [](const Node& node) {
    node.expect_only_attrs({"reduction"});
    scatter_reduction(node);
  };
  scatter.infer = infer_scatter_nd;
  scatter.min_opset = 11;
  r.add("ScatterND", std::move(scatter));

  OpDef tile;
  tile.validate = [](const Node& node) { node.expect_only_attrs({}); };
  tile.infer = infer_tile;
  tile.value_inputs = {1};
  tile.min_opset = 6;
  r.add("Tile", std::move(tile));

  OpDef topk;
  topk.validate = [](const Node& node) {
    node.expect_only_attrs(node.opset < 10 ? std::vector<std::string>{"axis", "k"}
                                           : std::vector<std::string>{"axis", "largest", "sorted"});
  };
  topk.infer = infer_topk;
  topk.value_inputs = {1};
  topk.min_opset = 1;
  r.add("TopK", std::move(topk));

  OpDef arg;
  arg.validate = [](const Node& node) { node.expect_only_attrs({"axis", "keepdims", "select_last_index"}); };
  arg.infer = infer_arg;
  arg.min_opset = 1;
  r.add("ArgMax", arg);
  r.add("ArgMin", std::move(arg));
}

}  // namespace dnnx
