// Note [pinned count readback]: a staged kernel's count (NonZero's, NonMaxSuppression's: Note
// [device staged kernels]) crosses to the host as a few bytes after the kernels before it, once
// per stage: ~90 times a run in torchvision's SSDlite. Copied into pageable memory (a stack
// variable), each copy went through the driver's staging buffer; into page-locked memory it is one
// DMA the stream orders, then the wait. Each calling thread keeps one small page-locked block
// (cudaHostAllocPortable: any device's stream may copy into it) for its whole life.
#pragma once
#include <cstddef>

#include <cuda_runtime.h>

namespace dnnx::cuda {

constexpr size_t kSmallReadbackBytes = 256;

// Copies `bytes` (at most kSmallReadbackBytes) from device memory `src` to `dst` on the host,
// after the work queued on `stream` before it; returns once they are there. DeviceError naming
// `what` on a CUDA failure.
void read_back_small(cudaStream_t stream, const void* src, void* dst, size_t bytes, const char* what);

}  // namespace dnnx::cuda
