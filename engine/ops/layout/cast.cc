// Cast (every engine dtype to every other) and CastLike (Cast to the type of its second input,
// opset 15). The rounding is onnxruntime's and onnx's reference's (backends/cpu/layout/cast_cpu.cc
// says it type by type); `saturate` (opset 19) matters only for the float8 targets.
// Under precision="fp16"/"bf16" on a device the model's own float16/bfloat16/float64 values are
// float32 (python/dnnx/_edges.py converts them at the graph's edges), so the half_storage pass
// (runtime/passes/half_storage.cc) is the only maker of Casts to half types there.
#include "ops/layout/cast.h"

#include "ops/op.h"

namespace dnnx {

namespace {

// onnx.TensorProto.DataType code -> DType, in onnx's order.
struct OnnxCode {
  int64_t code;
  DType dtype;
  const char* onnx_name;
};
constexpr OnnxCode kCodes[] = {
    {1, DType::Float32, "FLOAT"},           {2, DType::UInt8, "UINT8"},
    {3, DType::Int8, "INT8"},               {4, DType::UInt16, "UINT16"},
    {5, DType::Int16, "INT16"},             {6, DType::Int32, "INT32"},
    {7, DType::Int64, "INT64"},             {9, DType::Bool, "BOOL"},
    {10, DType::Float16, "FLOAT16"},        {11, DType::Float64, "DOUBLE"},
    {12, DType::UInt32, "UINT32"},          {13, DType::UInt64, "UINT64"},
    {16, DType::BFloat16, "BFLOAT16"},      {17, DType::Float8E4M3FN, "FLOAT8E4M3FN"},
    {18, DType::Float8E4M3FNUZ, "FLOAT8E4M3FNUZ"}, {19, DType::Float8E5M2, "FLOAT8E5M2"},
    {20, DType::Float8E5M2FNUZ, "FLOAT8E5M2FNUZ"}, {21, DType::UInt4, "UINT4"},
    {22, DType::Int4, "INT4"},              {23, DType::Float4E2M1, "FLOAT4E2M1"},
    {8, DType::String, "STRING"},
};

std::string onnx_type_name(int64_t t) {
  for (const OnnxCode& c : kCodes) {
    if (c.code == t) return c.onnx_name;
  }
  switch (t) {
    case 14: return "COMPLEX64";
    case 15: return "COMPLEX128";
    case 24: return "FLOAT8E8M0";
    case 25: return "UINT2";
    case 26: return "INT2";
    default: return "type " + std::to_string(t);
  }
}

void validate_cast(const Node& node) {
  // round_mode (opset 24) matters only for FLOAT8E8M0, which cast_target refuses.
  node.expect_only_attrs({"to", "saturate", "round_mode"});
  if (!node.has_attr("to")) node_fail<InvalidModelError>(node, "attribute 'to' is required");
  cast_target(node);
}

std::vector<TensorInfo> infer_cast(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "input");
  return {TensorInfo{x.shape, cast_target(node)}};
}

void validate_cast_like(const Node& node) { node.expect_only_attrs({"saturate", "round_mode"}); }

// input [..] of any type, target_type [any shape] -> [..] of target_type's type.
std::vector<TensorInfo> infer_cast_like(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "input");
  const TensorInfo& like = require_input(node, inputs, 1, "target_type");
  return {TensorInfo{x.shape, like.dtype}};
}

}  // namespace

DType cast_target(const Node& node) {
  const int64_t to = node.attr_int("to", 1);
  DType out = DType::Float32;
  if (!dtype_from_onnx(to, out)) {
    node_fail<UnsupportedModelError>(node, "cast to " + onnx_type_name(to) +
                                               " is not supported (dnnx has no such tensor type)");
  }
  return out;
}

bool cast_saturates(const Node& node) { return node.attr_int("saturate", 1) != 0; }

int64_t onnx_type_code(DType t) {
  for (const OnnxCode& c : kCodes) {
    if (c.dtype == t) return c.code;
  }
  return 1;
}

bool dtype_from_onnx(int64_t code, DType& out) {
  for (const OnnxCode& c : kCodes) {
    if (c.code == code) {
      out = c.dtype;
      return true;
    }
  }
  return false;
}

void register_cast_ops(OpRegistry& r) {
  OpDef def;
  def.validate = validate_cast;
  def.infer = infer_cast;
  r.add("Cast", std::move(def));
  OpDef like;
  like.validate = validate_cast_like;
  like.infer = infer_cast_like;
  like.min_opset = 15;
  r.add("CastLike", std::move(like));
}

}  // namespace dnnx
