// Size: data (any dtype, any shape) -> an int64 scalar, the number of elements of data. Like
// Shape, it reads only its input's shape, which is fixed when the plan is built.
#include "ops/op.h"

namespace dnnx {

namespace {

std::vector<TensorInfo> infer_size(const Node& node, const std::vector<ValueInfo>& inputs) {
  require_input(node, inputs, 0, "data");
  return {TensorInfo{Shape{}, DType::Int64}};
}

}  // namespace

void register_size_ops(OpRegistry& r) {
  OpDef size;
  size.validate = [](const Node& node) { node.expect_only_attrs({}); };
  size.infer = infer_size;
  size.reads_input0_shape_only = true;
  size.min_opset = 1;
  r.add("Size", std::move(size));
}

}  // namespace dnnx
