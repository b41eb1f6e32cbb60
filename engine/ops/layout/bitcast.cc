// BitCast (opset 26): input's bits read as another type of the same bit width, same shape
// (Note [bitcast]). The kernels: backends/cpu/layout/bitcast_cpu.cc.
#include "ops/layout/bitcast.h"

#include "ops/layout/cast.h"
#include "ops/op.h"

namespace dnnx {

namespace {

void validate_bitcast(const Node& node) {
  node.expect_only_attrs({"to"});
  if (!node.has_attr("to")) node_fail<InvalidModelError>(node, "attribute 'to' is required");
  cast_target(node);  // refuses a type dnnx has none of (COMPLEX64, FLOAT8E8M0, ...)
}

// input [..] of any type -> [..] of `to`, whose bit width must be input's.
std::vector<TensorInfo> infer_bitcast(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "input");
  const DType to = cast_target(node);
  if (x.dtype == DType::String || to == DType::String) {
    node_fail<InvalidModelError>(node, "BitCast takes no string tensors (their elements are not bits)");
  }
  if (bit_width(x.dtype) != bit_width(to)) {
    node_fail<InvalidModelError>(node, std::string("input of type ") + dtype_name(x.dtype) + " (" +
                                           std::to_string(bit_width(x.dtype)) + " bits) cannot be bitcast to " +
                                           dtype_name(to) + " (" + std::to_string(bit_width(to)) +
                                           " bits): the widths must be equal");
  }
  return {TensorInfo{x.shape, to}};
}

}  // namespace

int bit_width(DType t) {
  if (t == DType::Int4 || t == DType::UInt4 || t == DType::Float4E2M1) return 4;
  return static_cast<int>(8 * dtype_size(t));
}

void register_bitcast_ops(OpRegistry& r) {
  OpDef def;
  def.validate = validate_bitcast;
  def.infer = infer_bitcast;
  def.min_opset = 26;
  r.add("BitCast", std::move(def));
}

}  // namespace dnnx
