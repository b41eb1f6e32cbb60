// The gradient of a layer that has nothing to pass back (an empty output, batch or sequence):
// zeros in every input gradient asked for. Shared by the Conv and LSTM gradients.
#pragma once
#include <string>

#include "backends/cuda/backend/cuda_kernels.h"

namespace dnnx::cuda {

// A choice whose kernel fills each asked-for d_input with zeros, the input's bytes each (absent
// inputs: none); `algorithm` says why, for the plan report.
GradChoice zero_grad_choice(const CudaContext& ctx, const GradRequest& r, std::string algorithm);

}  // namespace dnnx::cuda
