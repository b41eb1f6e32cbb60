// The launcher of LeakyRelu's, Elu's, Selu's and Clip's gradient kernel
// (param_activation_grad_kernels.cu), for param_activation_grad_cuda.cc.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "ops/elementwise/param_activation_grad.h"

namespace dnnx::cuda {

// dx [n] = slope(x, y, dy) elementwise; lo, hi: Clip's bounds on the device (nullptr: slope's own).
void launch_param_activation_grad(const float* x, const float* y, const float* dy, float* dx, int64_t n,
                                  const ParamActivationSlope& slope, const float* lo, const float* hi,
                                  cudaStream_t stream);

}  // namespace dnnx::cuda
