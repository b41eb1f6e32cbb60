#include "backends/cuda/backend/fault_kernel.h"

namespace dnnx::cuda {

namespace {

// 0x10 is never mapped on the device: the write faults with cudaErrorIllegalAddress.
__global__ void illegal_write_kernel(int* address) { *address = 1; }

}  // namespace

void launch_illegal_write(cudaStream_t stream) {
  illegal_write_kernel<<<1, 1, 0, stream>>>(reinterpret_cast<int*>(0x10));
}

}  // namespace dnnx::cuda
