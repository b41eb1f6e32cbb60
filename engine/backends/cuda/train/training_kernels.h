// Launchers of the training kernels (training_kernels.cu): the loss with its gradient, the
// multi-tensor non-finite check and SGD, and the gradient fan-in sum, as runtime/training.h
// defines them. Each queues its kernel on `stream` and checks the launch. Every pointer is
// device memory.
#pragma once
#include <cstdint>

#include <cuda_runtime.h>

#include "runtime/training.h"

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

// A piece of one parameter that one block of the multi-tensor check and SGD covers (Note
// [multi-tensor update] in param_update_cuda.cc): pointers already offset to the piece.
struct UpdateChunk {
  float* w = nullptr;
  const float* grad = nullptr;
  float* velocity = nullptr;
  int32_t n = 0;     // elements, at most kChunkElements
  int32_t code = 0;  // kFirstGradientCode + the parameter's index
};
constexpr int kChunkElements = 2048;
constexpr int kChunkThreads = 256;

// chunks: `count` UpdateChunks in device memory; one block each. The first block also copies
// *lr (page-locked host memory) to *device_lr, once (Note [lr staging] in param_update_cuda.cc).
void launch_check_finite(const UpdateChunk* chunks, int64_t count, const float* lr, float* device_lr,
                         StepStats* stats, cudaStream_t stream);
// lr: device memory (the check's copy); report (null: none) receives *stats, written by one thread.
void launch_sgd(const UpdateChunk* chunks, int64_t count, const SgdOptions& options, const float* lr,
                const StepStats* stats, StepStats* report, cudaStream_t stream);
void launch_accumulate(float* dst, const float* src, int64_t n, cudaStream_t stream);

}  // namespace dnnx::cuda
