#include "backends/cuda/runtime/array_pool.h"

#include <string>

namespace dnnx::cuda {

ArrayPool::ArrayPool(int device, cudaStream_t stream, const StreamJoiner& joiner) : stream_(stream), joiner_(joiner) {
  int supported = 0;
  check(cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, device), "cudaDeviceGetAttribute");
  if (!supported) return;
  cudaMemPoolProps props = {};
  props.allocType = cudaMemAllocationTypePinned;
  props.handleTypes = cudaMemHandleTypeNone;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  cudaMemPool_t pool = nullptr;
  check(cudaMemPoolCreate(&pool, &props), "cudaMemPoolCreate");
  pool_.reset(pool);
  // Keep freed memory for the next run's outputs instead of returning it at every synchronize.
  uint64_t keep = UINT64_MAX;
  check(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep), "cudaMemPoolSetAttribute");
}

ArrayPool::~ArrayPool() {
  for (const auto& [bytes, ptr] : recycled_) free_now(ptr);
}

void* ArrayPool::allocate(size_t bytes) const {
  if (bytes == 0) return nullptr;
  {
    std::lock_guard<std::mutex> lock(recycled_mutex_);
    auto it = recycled_.find(bytes);
    if (it != recycled_.end()) {
      void* ptr = it->second;
      recycled_.erase(it);
      recycled_bytes_ -= bytes;
      return ptr;
    }
  }
  void* ptr = nullptr;
  const cudaError_t status =
      pool_ ? cudaMallocFromPoolAsync(&ptr, bytes, pool_.get(), stream_) : cudaMalloc(&ptr, bytes);
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    throw DeviceError("out of device memory for an array of " + std::to_string(bytes) + " bytes");
  }
  check(status, pool_ ? "cudaMallocFromPoolAsync" : "cudaMalloc");
  return ptr;
}

void ArrayPool::release(void* ptr, size_t bytes, const std::vector<uintptr_t>& readers) const noexcept {
  if (!ptr) return;
  try {
    for (uintptr_t reader : readers) joiner_.join(reader, stream_);
  } catch (const DeviceError&) {
    cudaDeviceSynchronize();  // a reader we cannot order after: free after everything
  }
  {
    std::lock_guard<std::mutex> lock(recycled_mutex_);
    if (bytes <= kRecycledBytes && recycled_.size() < kRecycledArrays && recycled_bytes_ + bytes <= kRecycledTotal) {
      recycled_.emplace(bytes, ptr);
      recycled_bytes_ += bytes;
      return;
    }
  }
  free_now(ptr);
}

void ArrayPool::free_now(void* ptr) const noexcept {
  if (pool_) {
    cudaFreeAsync(ptr, stream_);
  } else {
    cudaFree(ptr);  // waits for the device
  }
  cudaGetLastError();  // a failure here has nowhere to go
}

void ArrayPool::trim() const noexcept {
  std::unordered_multimap<size_t, void*> kept;
  {
    std::lock_guard<std::mutex> lock(recycled_mutex_);
    kept.swap(recycled_);
    recycled_bytes_ = 0;
  }
  for (const auto& [bytes, ptr] : kept) free_now(ptr);
  if (!pool_) return;
  cudaStreamSynchronize(stream_);  // frees queued on the stream count once they have run
  cudaMemPoolTrimTo(pool_.get(), 0);
  cudaGetLastError();
}

}  // namespace dnnx::cuda
