// The CPU's permuting copy, planned once for a shape and a permutation: Transpose's kernel, and
// the layout ops that are a reshape + transpose + reshape (DepthToSpace, SpaceToDepth) or that
// permute operands into place (Einsum). Element-size generic. transpose_cpu.cc says how it plans.
#pragma once
#include <cstdint>
#include <vector>

#include "ir/tensor.h"

namespace dnnx {

enum class TransposePath { Copy, RowCopy, Tiled };

// One merged output dim with its element strides in the input and in the output.
struct StridedDim {
  int64_t size;
  int64_t in_stride;
  int64_t out_stride;
};

// What one copy does, fixed at plan time.
struct TransposePlan {
  TransposePath path = TransposePath::Copy;
  size_t elem = 0;
  int64_t n = 0;
  StridedDim p{1, 1, 1};        // Tiled: the output dim contiguous in the input
  StridedDim q{1, 1, 1};        // RowCopy, Tiled: the innermost output dim
  std::vector<StridedDim> rest;  // the dims walked by the counter, outermost first
  int workers = 1;               // Note [transposes across the pool] in transpose_cpu.cc
  bool row_bands = false;        // the pool takes bands of the block's rows, not counter positions
};

// y = x permuted: y.shape[i] = in[perm[i]], elements of `elem` bytes.
TransposePlan plan_transpose(const Shape& in, const std::vector<int64_t>& perm, size_t elem);
void transpose_copy(const TransposePlan& plan, const void* x, void* y);
const char* transpose_path_name(TransposePath path);

}  // namespace dnnx
