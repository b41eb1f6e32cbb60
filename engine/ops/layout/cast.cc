// Cast between float32, int32, int64 and bool (float -> int truncates toward zero, as C++ and
// onnxruntime do; to bool is x != 0, NaN included; from bool is 0 or 1). Every other target
// type (float16, bfloat16, double, 8/16-bit ints, strings, the
// float8 family) is refused at load, naming it. FLOAT16 and BFLOAT16 are refused in a model as
// loaded too: only the half_storage pass (runtime/passes/half_storage.cc) makes such Casts, after
// validation, for the edges of a precision="fp16" or "bf16" model on a device with half kernels. (A model's own Casts to
// DOUBLE or FLOAT16 never reach here: python/dnnx/_importer.py computes float64 and float16 in
// float32 and makes them Casts to FLOAT; python/dnnx/_edges.py converts at the graph's edges.)
#include "ops/layout/cast.h"

#include "ops/op.h"

namespace dnnx {

namespace {

// onnx.TensorProto.DataType values.
enum OnnxType : int64_t {
  kFloat = 1, kUint8 = 2, kInt8 = 3, kUint16 = 4, kInt16 = 5, kInt32 = 6, kInt64 = 7, kString = 8,
  kBool = 9, kFloat16 = 10, kDouble = 11, kUint32 = 12, kUint64 = 13, kBfloat16 = 16,
};

std::string onnx_type_name(int64_t t) {
  switch (t) {
    case kUint8: return "UINT8";
    case kInt8: return "INT8";
    case kUint16: return "UINT16";
    case kInt16: return "INT16";
    case kString: return "STRING";
    case kFloat16: return "FLOAT16";
    case kDouble: return "DOUBLE";
    case kUint32: return "UINT32";
    case kUint64: return "UINT64";
    case kBfloat16: return "BFLOAT16";
    default: return "type " + std::to_string(t);
  }
}

void validate_cast(const Node& node) {
  // `saturate` (opset 19) matters only for the float8 types, which are refused anyway.
  node.expect_only_attrs({"to", "saturate"});
  if (!node.has_attr("to")) node_fail<InvalidModelError>(node, "attribute 'to' is required");
  const int64_t to = node.attr_int("to", kFloat);
  if (to == kFloat16 || to == kBfloat16) {
    node_fail<UnsupportedModelError>(node, "cast to " + onnx_type_name(to) +
                                               " is not supported (FLOAT, INT32, INT64 and BOOL are; for half "
                                               "precision load the float32 model with precision='fp16' or 'bf16')");
  }
  cast_target(node);
}

std::vector<TensorInfo> infer_cast(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "input");
  return {TensorInfo{x.shape, cast_target(node)}};
}

}  // namespace

DType cast_target(const Node& node) {
  const int64_t to = node.attr_int("to", kFloat);
  switch (to) {
    case kFloat: return DType::Float32;
    case kInt32: return DType::Int32;
    case kInt64: return DType::Int64;
    case kBool: return DType::Bool;
    case kFloat16: return DType::Float16;    // made by the half_storage pass only (validate_cast)
    case kBfloat16: return DType::BFloat16;  // the same
    default:
      node_fail<UnsupportedModelError>(node, "cast to " + onnx_type_name(to) +
                                                 " is not supported (FLOAT, INT32, INT64 and BOOL are)");
  }
}

int64_t onnx_type_code(DType t) {
  switch (t) {
    case DType::Float32: return kFloat;
    case DType::Int32: return kInt32;
    case DType::Int64: return kInt64;
    case DType::Float16: return kFloat16;
    case DType::Bool: return kBool;
    case DType::BFloat16: return kBfloat16;
  }
  return kFloat;
}

void register_cast_ops(OpRegistry& r) {
  OpDef def;
  def.validate = validate_cast;
  def.infer = infer_cast;
  r.add("Cast", std::move(def));
}

}  // namespace dnnx
