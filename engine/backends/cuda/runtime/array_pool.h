// Device memory for the arrays a model hands to its caller (Model.run(output="device"),
// Model.to_device): a stream-ordered pool of the model's own (cudaMemPoolCreate), so that taking
// and returning an array costs neither cudaMalloc nor cudaFree (which waits for the whole
// device), and what the pool keeps is this model's alone. Where the device has no memory pools,
// plain cudaMalloc and cudaFree stand in. Returned arrays are kept aside as they are (up to
// kRecycledArrays of up to kRecycledBytes each, kRecycledTotal bytes in all) and handed out again
// for the same size with no runtime call at all (Note [recycled arrays]). The order is the pool's
// own: an array comes back once its readers were joined into the model's stream, and is reused
// only by work queued on that stream after that.
//
// Note [recycled arrays]: two users take and drop arrays of the same sizes over and over: a loop
// of runs that drops each output before the next run asks for the same size, and a staged plan
// (Note [device-resident stages]), whose every stage takes its workspace and outputs as arrays.
// torchvision's SSDlite crosses ~180 stages a run: 724 cudaMallocFromPoolAsync and as many
// cudaFreeAsync a run, 1.4 ms of host time on an H100 (bench/RESULTS_CUDA.md, session 12) with
// 4 arrays kept. Up to 1024 kept, looked up by size, a run of the same shapes after the first makes
// no runtime call. The pool keeps freed memory anyway (its release threshold is "never"), so
// keeping the blocks aside holds no more device memory than before; trim() lets them all go.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "backends/cuda/runtime/external_streams.h"

namespace dnnx::cuda {

constexpr size_t kRecycledArrays = 1024;
constexpr size_t kRecycledBytes = size_t{16} << 20;
constexpr size_t kRecycledTotal = size_t{256} << 20;

class ArrayPool {
 public:
  // On `device`, in the order of `stream` (the model's); `joiner` orders frees after readers.
  ArrayPool(int device, cudaStream_t stream, const StreamJoiner& joiner);
  ArrayPool(const ArrayPool&) = delete;
  ArrayPool& operator=(const ArrayPool&) = delete;
  ~ArrayPool();

  // At least `bytes` (nullptr for 0), usable by work queued on the stream from now on;
  // DeviceError naming the size when the device is out of memory.
  void* allocate(size_t bytes) const;
  // Frees once the model's queued work and the work queued now on each of `readers`
  // (external stream handles) are done; `bytes` is what allocate was asked for.
  void release(void* ptr, size_t bytes, const std::vector<uintptr_t>& readers) const noexcept;
  // Hands the pool's unused memory back to the device (before a large allocation is retried).
  void trim() const noexcept;

 private:
  void free_now(void* ptr) const noexcept;  // back to the pool (or cudaFree), in stream order

  struct Destroy {
    void operator()(cudaMemPool_t pool) const noexcept { cudaMemPoolDestroy(pool); }
  };
  std::unique_ptr<std::remove_pointer_t<cudaMemPool_t>, Destroy> pool_;  // null: no pools here
  cudaStream_t stream_;
  const StreamJoiner& joiner_;
  // Returned arrays kept for the next of the same size. Array calls come under the engine's
  // device turn, but an allocation of the backend's own that finds no memory trims from elsewhere.
  mutable std::mutex recycled_mutex_;
  mutable std::unordered_multimap<size_t, void*> recycled_;  // bytes -> array
  mutable size_t recycled_bytes_ = 0;
};

}  // namespace dnnx::cuda
