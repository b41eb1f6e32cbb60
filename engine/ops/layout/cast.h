// Cast's and CastLike's target type and rounding, shared by the op file and every backend.
#pragma once
#include "ops/op.h"

namespace dnnx {

// The engine dtype of Cast's `to` attribute (an onnx.TensorProto.DataType code);
// UnsupportedModelError naming the node and the type for one the engine has none of (STRING,
// FLOAT8E8M0, the 2-bit types, ...).
DType cast_target(const Node& node);
// Cast's and CastLike's `saturate` (opset 19, default 1): whether a float8 target clips values
// past its range to its largest finite value (onnx's saturate_cast) instead of giving inf or NaN.
bool cast_saturates(const Node& node);

// The onnx.TensorProto.DataType code of `t` (FLOAT 1, INT32 6, INT64 7, BOOL 9, FLOAT16 10, ...).
int64_t onnx_type_code(DType t);
// The dtype of an onnx.TensorProto.DataType code; false for one the engine has no type for.
bool dtype_from_onnx(int64_t code, DType& out);

}  // namespace dnnx
