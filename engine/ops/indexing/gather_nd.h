// GatherND's geometry, shared by the op file, the kernels and the gradients.
#pragma once
#include "ops/op.h"

namespace dnnx {

// data [b..., g..., s...] with B = prod(b) (the batch_dims leading dims), g the k = indices'
// last dim gathered dims and s the slice; indices [b..., t..., k] with T = prod(t) tuples per
// batch entry -> y [b..., t..., s...]: y[batch, tuple] = data[batch, indices[batch, tuple]]
// (a whole slice of S = prod(s) elements; a negative index counts from the end of its dim).
struct GatherNDGeometry {
  int64_t batches = 1;        // B
  int64_t tuples = 1;         // T, per batch entry
  int64_t k = 0;              // indices' last dim
  int64_t slice = 1;          // S
  Shape gathered;             // g: the k dims the tuples index
  int64_t batch_stride = 0;   // elements of data per batch entry: prod(g) * S
};

// Checks the shapes and batch_dims (InvalidModelError naming the node and the shapes).
GatherNDGeometry gather_nd_geometry(const Node& node, const Shape& data, const Shape& indices);

}  // namespace dnnx
