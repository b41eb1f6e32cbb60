// OneHot (opset 9): indices [a..., b...] (float32, int32 or int64), depth (a scalar value input),
// values [2] = [off, on] (any dtype) -> [a..., depth, b...] of values' dtype (the depth dim at
// `axis`, default -1: last): on where the position along it equals the index (a negative index
// counts from depth's end), off elsewhere; an index outside [-depth, depth) gives a line of off.
#include "ops/indexing/one_hot.h"

#include <cmath>

namespace dnnx {

int64_t one_hot_depth(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& t = require_input(node, inputs, 1, "depth");
  if (numel(t.shape) != 1) node_fail<InvalidModelError>(node, "depth must be a scalar, got " + shape_str(t.shape));
  const ConstTensor* c = inputs[1].constant;
  if (!c) {
    node_fail<UnsupportedModelError>(node, "input 'depth' must be known when the plan is built (Note [value "
                                           "inputs]); this one comes from a layer that runs on the device");
  }
  int64_t depth = 0;
  switch (t.dtype) {
    case DType::Float32: depth = static_cast<int64_t>(std::trunc(*c->as<float>())); break;
    case DType::Int32: depth = *c->as<int32_t>(); break;
    case DType::Int64: depth = *c->as<int64_t>(); break;
    default:
      node_fail<UnsupportedModelError>(node, std::string("depth must be float32, int32 or int64, got ") +
                                                 dtype_name(t.dtype));
  }
  if (depth < 1) node_fail<InvalidModelError>(node, "depth must be at least 1, got " + std::to_string(depth));
  return depth;
}

int64_t one_hot_axis(const Node& node, int64_t indices_rank) {
  return normalize_axis(node, node.attr_int("axis", -1), indices_rank + 1);
}

namespace {

std::vector<TensorInfo> infer_one_hot(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& indices = require_input(node, inputs, 0, "indices");
  const TensorInfo& values = require_input(node, inputs, 2, "values");
  if (indices.dtype != DType::Float32 && !is_integer(indices.dtype)) {
    node_fail<UnsupportedModelError>(node, std::string("indices must be float32, int32 or int64, got ") +
                                               dtype_name(indices.dtype));
  }
  if (numel(values.shape) != 2 || values.shape.size() != 1) {
    node_fail<InvalidModelError>(node, "values must be [2] ([off, on]), got " + shape_str(values.shape));
  }
  const int64_t depth = one_hot_depth(node, inputs);
  const int64_t axis = one_hot_axis(node, static_cast<int64_t>(indices.shape.size()));
  Shape out = indices.shape;
  out.insert(out.begin() + axis, depth);
  return {TensorInfo{out, values.dtype}};
}

}  // namespace

void register_one_hot_ops(OpRegistry& r) {
  OpDef def;
  def.validate = [](const Node& node) { node.expect_only_attrs({"axis"}); };
  def.infer = infer_one_hot;
  def.value_inputs = {1};
  def.min_opset = 9;
  r.add("OneHot", std::move(def));
}

}  // namespace dnnx
