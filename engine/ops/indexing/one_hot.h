// OneHot's meaning, shared by the op file and every backend.
#pragma once
#include "ops/op.h"

namespace dnnx {

// The depth input (a value input: it sizes the output), a scalar or one-element tensor of
// float32, int32 or int64 (a float truncates toward zero, as onnxruntime reads it); at least 1.
int64_t one_hot_depth(const Node& node, const std::vector<ValueInfo>& inputs);

// indices [i...] (rank r) -> output axis in [0, r] where the depth dim is inserted.
int64_t one_hot_axis(const Node& node, int64_t indices_rank);

}  // namespace dnnx
