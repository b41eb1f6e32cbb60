// The kernel that ends a training step on CUDA: the non-finite check of every gradient, then SGD
// on every parameter, in one cooperative launch (Note [one update kernel] in
// param_update_kernels.cu; Note [multi-tensor update] in param_update_cuda.cc).
#pragma once
#include <cstdint>

#include <cuda_runtime.h>

#include "core/training.h"

namespace dnnx::cuda {

// A piece of one parameter that one block covers at a time: pointers already offset to the piece.
struct UpdateChunk {
  float* w = nullptr;
  const float* grad = nullptr;
  float* velocity = nullptr;
  int32_t n = 0;     // elements, at most kChunkElements
  int32_t code = 0;  // kFirstGradientCode + the parameter's index
};
constexpr int kChunkElements = 2048;
constexpr int kChunkThreads = 256;

// The blocks of the update's grid for `count` chunks: one per chunk, up to what the GPU holds at
// once (a cooperative grid must be resident whole). DeviceError when the device cannot launch
// cooperative grids.
int update_grid_blocks(int64_t count);

// chunks: `count` UpdateChunks in device memory. lr: page-locked host memory, copied once into
// *device_lr (Note [lr staging] in param_update_cuda.cc). report (null: none) receives *stats.
void launch_update(const UpdateChunk* chunks, int64_t count, int grid_blocks, const SgdOptions& options,
                   const float* lr, float* device_lr, StepStats* stats, StepStats* report, cudaStream_t stream);

}  // namespace dnnx::cuda
