// Launchers of the training kernels (training_kernels.cu): the loss with its gradient and the
// gradient fan-in sum, as core/training.h defines them (the update's kernel:
// param_update_kernels.h). Each queues its kernel on `stream` and checks the launch. Every pointer is
// device memory.
#pragma once
#include <cstdint>

#include <cuda_runtime.h>

#include "core/training.h"

namespace dnnx::cuda {

// Device memory the mean squared error reduces through (Note [mse reduction] in
// training_kernels.cu): kLossScratchBlocks partial sums and a counter of rows right.
constexpr int kLossScratchBlocks = 1024;
struct LossScratch {
  double* partial = nullptr;  // [kLossScratchBlocks]
  unsigned long long* right = nullptr;
};

// A fixed reduction order: the loss is bit-identical from run to run. Cross entropy: one block;
// mean squared error: many, through `scratch` (one loss at a time per scratch: stream order).
void launch_loss(const LossCall& call, StepStats* stats, const LossScratch& scratch, cudaStream_t stream);

void launch_accumulate(float* dst, const float* src, int64_t n, cudaStream_t stream);

}  // namespace dnnx::cuda
