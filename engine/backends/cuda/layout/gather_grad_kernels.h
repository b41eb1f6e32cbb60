// Gather's gradient on CUDA (gather_grad_kernels.cu), deterministic with no atomics (Note
// [gather gradient by sorted indices]): dX [outer, size, inner] from dY [outer, count, inner].
#pragma once
#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

namespace dnnx::cuda {

// Where each buffer lies in the gradient's workspace, and its size in bytes (planned once).
struct GatherGradWorkspace {
  size_t keys_in = 0, keys_out = 0, rows_in = 0, rows_out = 0, sort_temp = 0;
  size_t sort_temp_bytes = 0;
  size_t bytes = 0;
  int key_bits = 1;  // the radix sort's bits: enough for 0..size (size: out of range)
};

// The workspace for `count` indices into an axis of `size` (both under 2^31).
GatherGradWorkspace gather_grad_workspace(int64_t count, int64_t size);

// dX = 0, then dX's (o, i, :) = the sum of dY's (o, j, :) over the j with idx[j] = i (negative
// indices count from the end; out of range ones are skipped, as the forward gave zeros), added
// in j order: the CPU's sums (backends/cpu/indexing/gather_cpu.cc), bit for bit.
void launch_gather_axis_grad(const float* dy, const void* idx, bool idx_int64, float* dx, int64_t outer,
                             int64_t size, int64_t count, int64_t inner, const GatherGradWorkspace& w,
                             void* workspace, cudaStream_t stream);

}  // namespace dnnx::cuda
