// Shared by the *_kernels.cu files: one grid shape for every elementwise kernel.
#pragma once
#include <algorithm>
#include <cstdint>

namespace dnnx::cuda {

constexpr int kBlock = 256;
// Enough blocks to fill any current GPU; larger tensors are covered by grid-stride loops.
constexpr int64_t kMaxBlocks = int64_t{1} << 16;

inline unsigned grid_for(int64_t n) {
  return static_cast<unsigned>(std::max<int64_t>(1, std::min((n + kBlock - 1) / kBlock, kMaxBlocks)));
}

}  // namespace dnnx::cuda
