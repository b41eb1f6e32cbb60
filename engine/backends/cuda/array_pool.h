// Device memory for the arrays a model hands to its caller (Model.run(output="device"),
// Model.to_device): a stream-ordered pool of the model's own (cudaMemPoolCreate), so that taking
// and returning an array costs neither cudaMalloc nor cudaFree (which waits for the whole
// device), and what the pool keeps is this model's alone. Where the device has no memory pools,
// plain cudaMalloc and cudaFree stand in.
#pragma once
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "backends/cuda/external_streams.h"

namespace dnnx::cuda {

class ArrayPool {
 public:
  // On `device`, in the order of `stream` (the model's); `joiner` orders frees after readers.
  ArrayPool(int device, cudaStream_t stream, const StreamJoiner& joiner);

  // At least `bytes` (nullptr for 0), usable by work queued on the stream from now on;
  // DeviceError naming the size when the device is out of memory.
  void* allocate(size_t bytes) const;
  // Frees once the model's queued work and the work queued now on each of `readers`
  // (external stream handles) are done.
  void release(void* ptr, const std::vector<uintptr_t>& readers) const noexcept;
  // Hands the pool's unused memory back to the device (before a large allocation is retried).
  void trim() const noexcept;

 private:
  struct Destroy {
    void operator()(cudaMemPool_t pool) const noexcept { cudaMemPoolDestroy(pool); }
  };
  std::unique_ptr<std::remove_pointer_t<cudaMemPool_t>, Destroy> pool_;  // null: no pools here
  cudaStream_t stream_;
  const StreamJoiner& joiner_;
};

}  // namespace dnnx::cuda
