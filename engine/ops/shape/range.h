// Range's output length, shared by the op file and every backend (whose kernels write
// y[i] = start + i * delta, reading start and delta from the inputs as they run).
#pragma once
#include "ops/op.h"

namespace dnnx {

// max(ceil((limit - start) / delta), 0) for scalars of one type (float32, int32, int64):
// integers exactly, float32 as onnxruntime does (the difference in float32, divided in double).
// A delta of 0: InvalidModelError naming the node.
int64_t range_length(const Node& node, const ConstTensor& start, const ConstTensor& limit, const ConstTensor& delta);

}  // namespace dnnx
