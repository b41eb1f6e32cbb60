// A kernel that writes to an illegal address: a sticky CUDA error on purpose, for the test hook
// DNNX_TEST_FAULT_NODE (test_hooks.h) only.
#pragma once
#include <cuda_runtime.h>

namespace dnnx::cuda {

void launch_illegal_write(cudaStream_t stream);

}  // namespace dnnx::cuda
