// Launchers of the training kernels (training_kernels.cu): the loss with its gradient, the
// non-finite check, SGD and the gradient fan-in sum, as core/training.h defines them. Each
// queues its kernel on `stream` and checks the launch. Every pointer is device memory.
#pragma once
#include <cstdint>

#include <cuda_runtime.h>

#include "core/training.h"

namespace dnnx::cuda {

// One block, a fixed reduction order: the loss is bit-identical from run to run.
void launch_loss(const LossCall& call, StepStats* stats, cudaStream_t stream);
void launch_check_finite(const float* x, int64_t n, int32_t code, StepStats* stats, cudaStream_t stream);
void launch_sgd(const SgdOptions& options, const float* lr, float* w, const float* grad, float* velocity, int64_t n,
                const StepStats* stats, cudaStream_t stream);
void launch_accumulate(float* dst, const float* src, int64_t n, cudaStream_t stream);

}  // namespace dnnx::cuda
