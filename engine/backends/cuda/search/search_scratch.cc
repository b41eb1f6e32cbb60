#include "backends/cuda/search/search_scratch.h"

#include "backends/cuda/backend/cuda_context.h"

namespace dnnx::cuda {

bool plan_alloc_once(const CudaContext& ctx, size_t bytes, DeviceMemory& out) {
  out.reset();
  if (bytes == 0) return true;
  if (bytes > ctx.hooks.oom_above) return false;
  if (!ctx.memory->try_take(bytes)) return false;  // past memory_limit: as if out of memory
  void* ptr = nullptr;
  const cudaError_t status = cudaMalloc(&ptr, bytes);
  if (status != cudaSuccess) ctx.memory->give(bytes);
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // not sticky: clear it so that the next call does not see it
    return false;
  }
  check(status, "cudaMalloc (plan-time workspace)");
  out = DeviceMemory(ptr, CudaFree{ctx.memory.get(), bytes});
  return true;
}

bool SearchScratch::hold(const CudaContext& ctx, Slot slot, size_t bytes) {
  if (bytes <= bytes_[slot] && (bytes == 0 || buffers_[slot])) return true;
  buffers_[slot].reset();
  bytes_[slot] = 0;
  if (!plan_alloc_once(ctx, bytes, buffers_[slot])) return false;
  bytes_[slot] = bytes;
  return true;
}

void SearchScratch::release() {
  for (int s = 0; s < kSlots; ++s) {
    buffers_[s].reset();
    bytes_[s] = 0;
  }
}

bool SearchScratch::empty() const {
  for (const DeviceMemory& b : buffers_) {
    if (b) return false;
  }
  return true;
}

bool release_idle_search_scratch(const CudaContext& ctx) {
  SearchScratch& scratch = *ctx.search_scratch;
  if (scratch.busy() || scratch.empty()) return false;
  scratch.release();
  return true;
}

}  // namespace dnnx::cuda
