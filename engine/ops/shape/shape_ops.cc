// Shape: X -> int64 [k], X's dims (those in [start, end) from opset 15).
// ConstantOfShape: a constant 1-D int64 shape -> a tensor of that shape filled with `value`.
// The importer folds both whenever their input is known (Shape of a static shape included), so
// at run time Shape reads only inputs whose shape varies, e.g. a symbolic batch.
#include "ops/shape/shape_ops.h"

#include <algorithm>

#include "ops/const_inputs.h"
#include "ops/op.h"

namespace dnnx {

Shape shape_op_dims(const Node& node, const Shape& x) {
  const int64_t rank = static_cast<int64_t>(x.size());
  const auto clamp_index = [rank](int64_t i) { return std::clamp<int64_t>(i < 0 ? i + rank : i, 0, rank); };
  const int64_t start = clamp_index(node.attr_int("start", 0));
  const int64_t end = clamp_index(node.attr_int("end", rank));
  return start < end ? Shape(x.begin() + start, x.begin() + end) : Shape{};
}

ConstTensor constant_of_shape_value(const Node& node) {
  auto it = node.attrs.find("value");
  if (it == node.attrs.end()) {
    ConstTensor zero;
    zero.info = TensorInfo{{1}, DType::Float32};
    zero.data.assign(sizeof(float), 0);
    return zero;
  }
  const ConstTensorPtr* value = std::get_if<ConstTensorPtr>(&it->second);
  if (!value || numel((*value)->info.shape) != 1) {
    node_fail<InvalidModelError>(node, "attribute 'value' must be a one-element tensor");
  }
  return **value;
}

namespace {

std::vector<TensorInfo> infer_shape(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "data");
  const int64_t n = static_cast<int64_t>(shape_op_dims(node, x.shape).size());
  return {TensorInfo{{n}, DType::Int64}};
}

std::vector<TensorInfo> infer_constant_of_shape(const Node& node, const std::vector<ValueInfo>& inputs) {
  const Shape dims = constant_ints(node, inputs, 0, "input");
  if (inputs[0].info.shape.size() != 1) {
    node_fail<InvalidModelError>(node, "input " + shape_str(inputs[0].info.shape) + " must be 1-D");
  }
  for (int64_t d : dims) {
    if (d < 0) node_fail<InvalidModelError>(node, "shape " + shape_str(dims) + " has a negative dim");
  }
  return {TensorInfo{dims, constant_of_shape_value(node).info.dtype}};
}

}  // namespace

void register_shape_ops(OpRegistry& r) {
  OpDef shape;
  shape.validate = [](const Node& node) { node.expect_only_attrs({"start", "end"}); };
  shape.infer = infer_shape;
  shape.reads_input0_shape_only = true;
  shape.min_opset = 1;
  r.add("Shape", std::move(shape));
  OpDef fill;
  fill.validate = [](const Node& node) {
    node.expect_only_attrs({"value"});
    constant_of_shape_value(node);
  };
  fill.infer = infer_constant_of_shape;
  fill.value_inputs = {0};  // the output's shape
  r.add("ConstantOfShape", std::move(fill));
}

}  // namespace dnnx
