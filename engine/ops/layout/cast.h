// Cast's target type, shared by the op file and every backend.
#pragma once
#include "ops/op.h"

namespace dnnx {

// The engine dtype of the `to` attribute; UnsupportedModelError naming the node and the type
// for anything but FLOAT, INT32, INT64 and BOOL (and FLOAT16, made by the half_storage pass).
DType cast_target(const Node& node);

// The onnx.TensorProto.DataType code of `t` (FLOAT 1, INT32 6, INT64 7, BOOL 9, FLOAT16 10): Cast's `to`.
int64_t onnx_type_code(DType t);

}  // namespace dnnx
