// The offsets of variable-length pieces written side by side (NonZero's tiles, Note [device
// nonzero]; NonMaxSuppression's selections per batch and class, Note [device nms]): one block's
// exclusive scan of `n` int64 counts in place, their total written to counts[n], where the host
// reads it back. n may be 0 (the total is then 0).
#pragma once
#include <cstdint>

#include <cuda_runtime.h>

namespace dnnx::cuda {

void launch_offsets_scan(int64_t* counts, int64_t n, cudaStream_t stream);

}  // namespace dnnx::cuda
