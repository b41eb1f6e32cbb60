// The glue kernels of the cuDNN LSTM (rnn_kernels.h): one thread per element, grid-stride.
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/launch.cuh"
#include "backends/cuda/rnn_kernels.h"

namespace dnnx::cuda {

namespace {

__global__ void reverse_sequences(const float* __restrict__ x, float* __restrict__ y,
                                  const int32_t* __restrict__ lens, SequenceDims d, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t k = i % d.width;
    const int64_t row = i / d.width;  // t * batch + b (seq-major) or b * seq + t (batch-major)
    const int64_t t = d.batch_major ? row % d.seq : row / d.batch;
    const int64_t b = d.batch_major ? row / d.seq : row % d.batch;
    const int64_t len = lens[b];
    const int64_t src_t = t < len ? len - 1 - t : t;
    const int64_t src_row = d.batch_major ? b * d.seq + src_t : src_t * d.batch + b;
    y[i] = x[src_row * d.width + k];
  }
}

__global__ void zero_empty_sequences(float* __restrict__ t, int64_t n, int64_t inner, int64_t batch,
                                     const int32_t* __restrict__ lens) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    if (lens[i / inner % batch] == 0) t[i] = 0.0f;
  }
}

}  // namespace

void launch_reverse_sequences(const float* x, float* y, const int32_t* lens, const SequenceDims& dims,
                              cudaStream_t stream) {
  const int64_t n = dims.seq * dims.batch * dims.width;
  if (n == 0) return;
  reverse_sequences<<<grid_for(n), kBlock, 0, stream>>>(x, y, lens, dims, n);
  check_launch("reverse_sequences kernel");
}

void launch_zero_empty_sequences(float* t, int64_t n, int64_t inner, int64_t batch, const int32_t* lens,
                                 cudaStream_t stream) {
  if (n == 0) return;
  zero_empty_sequences<<<grid_for(n), kBlock, 0, stream>>>(t, n, inner, batch, lens);
  check_launch("zero_empty_sequences kernel");
}

}  // namespace dnnx::cuda
