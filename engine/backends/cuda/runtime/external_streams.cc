#include "backends/cuda/runtime/external_streams.h"

namespace dnnx::cuda {

namespace {

constexpr uintptr_t kLegacyDefaultStream = 1;     // DLPack and CUDA array interface v3
constexpr uintptr_t kPerThreadDefaultStream = 2;  // likewise

}  // namespace

cudaStream_t external_stream(uintptr_t handle) {
  if (handle == kLegacyDefaultStream) return cudaStreamLegacy;
  if (handle == kPerThreadDefaultStream) return cudaStreamPerThread;
  return reinterpret_cast<cudaStream_t>(handle);
}

void StreamJoiner::join(uintptr_t stream, cudaStream_t waiter) const {
  const cudaStream_t from = external_stream(stream);
  if (from == waiter) return;
  check(cudaEventRecord(event_, from), "cudaEventRecord (on an external stream)");
  check(cudaStreamWaitEvent(waiter, event_, 0), "cudaStreamWaitEvent");
}

}  // namespace dnnx::cuda
