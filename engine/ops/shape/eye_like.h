// EyeLike's output type, shared by the op file and every backend.
#pragma once
#include "ops/op.h"

namespace dnnx {

// The dtype of EyeLike's output: the `dtype` attribute (an onnx.TensorProto.DataType code), or
// the input's when absent. FLOAT, INT32, INT64 and BOOL are taken (DOUBLE and FLOAT16 are
// computed in float32, as everywhere in dnnx: python/dnnx/_edges.py converts at the graph's
// edges); anything else is an UnsupportedModelError naming the node.
DType eye_like_dtype(const Node& node, DType input);

}  // namespace dnnx
