// A staged kernel's count, read back through a page-locked block (small_readback.h).
#include "backends/cuda/runtime/small_readback.h"

#include <cstring>
#include <string>

#include "backends/cuda/runtime/cuda_check.h"

namespace dnnx::cuda {

namespace {

// The calling thread's page-locked block, allocated on its first readback and freed with the
// thread (a failure to free at process exit, after the driver went, is ignored).
struct PinnedBlock {
  void* ptr = nullptr;
  ~PinnedBlock() {
    if (ptr) cudaFreeHost(ptr);
  }
};

}  // namespace

void read_back_small(cudaStream_t stream, const void* src, void* dst, size_t bytes, const char* what) {
  if (bytes > kSmallReadbackBytes) throw DeviceError(std::string(what) + ": a readback of " + std::to_string(bytes) + " bytes");
  thread_local PinnedBlock block;
  if (!block.ptr) check(cudaHostAlloc(&block.ptr, kSmallReadbackBytes, cudaHostAllocPortable), what);
  check(cudaMemcpyAsync(block.ptr, src, bytes, cudaMemcpyDeviceToHost, stream), what);
  check(cudaStreamSynchronize(stream), what);
  std::memcpy(dst, block.ptr, bytes);
}

}  // namespace dnnx::cuda
