// ScatterElements (opset 11; reduction add / mul from 16, max / min from 18) and Scatter (its
// deprecated name, opset 9 and 10, no reduction):
//   data [d...], indices [i...] (int32 or int64, data's rank, i[d] <= d[d] off the axis),
//   updates [i...] (data's dtype) -> data with, for each position p of indices,
//   out[p with p[axis] = indices[p]] replaced by (or combined with) updates[p], in order
// A negative index counts from the end of the axis; indices are read and checked as the kernel
// runs. The reductions take float32, int32 and int64; a plain scatter any dtype.
#include "ops/indexing/indexing.h"

namespace dnnx {

namespace {

std::vector<TensorInfo> infer_scatter_elements(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& data = require_input(node, inputs, 0, "data");
  const TensorInfo& indices = require_input(node, inputs, 1, "indices");
  const TensorInfo& updates = require_input(node, inputs, 2, "updates");
  if (!is_integer(indices.dtype)) {
    node_fail<InvalidModelError>(node, std::string("indices must be int32 or int64, got ") + dtype_name(indices.dtype));
  }
  if (updates.dtype != data.dtype) {
    node_fail<InvalidModelError>(node, std::string("updates are ") + dtype_name(updates.dtype) + ", data " +
                                           dtype_name(data.dtype) + ": they must agree");
  }
  if (scatter_reduction(node) != ScatterReduction::None && !is_floating(data.dtype) && !is_integer(data.dtype)) {
    node_fail<UnsupportedModelError>(node, std::string("a reduction needs float32, int32 or int64 data, got ") +
                                               dtype_name(data.dtype));
  }
  const std::string shapes =
      "data " + shape_str(data.shape) + ", indices " + shape_str(indices.shape) + ", updates " + shape_str(updates.shape);
  const int64_t rank = static_cast<int64_t>(data.shape.size());
  if (rank == 0 || indices.shape.size() != data.shape.size() || updates.shape != indices.shape) {
    node_fail<InvalidModelError>(node, "indices and updates must have one shape, of data's rank (at least 1): " + shapes);
  }
  const int64_t axis = normalize_axis(node, node.attr_int("axis", 0), rank);
  for (int64_t d = 0; d < rank; ++d) {
    if (d != axis && indices.shape[d] > data.shape[d]) {
      node_fail<InvalidModelError>(node, "indices exceed data along dim " + std::to_string(d) + ": " + shapes);
    }
  }
  return {data};
}

}  // namespace

void register_scatter_elements_ops(OpRegistry& r) {
  OpDef scatter;
  scatter.validate = [](const Node& node) {
    node.expect_only_attrs(node.opset < 16 ? std::vector<std::string>{"axis"}
                                           : std::vector<std::string>{"axis", "reduction"});
    scatter_reduction(node);
  };
  scatter.infer = infer_scatter_elements;
  scatter.min_opset = 11;
  r.add("ScatterElements", std::move(scatter));

  OpDef deprecated;
  deprecated.validate = [](const Node& node) {
    if (node.opset >= 11) {
      node_fail<UnsupportedModelError>(node, "Scatter is deprecated from opset 11 (this model's is " +
                                                 std::to_string(node.opset) + "): use ScatterElements");
    }
    node.expect_only_attrs({"axis"});
  };
  deprecated.infer = infer_scatter_elements;
  deprecated.min_opset = 9;
  r.add("Scatter", std::move(deprecated));
}

}  // namespace dnnx
