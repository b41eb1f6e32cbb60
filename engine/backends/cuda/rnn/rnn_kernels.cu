// The glue kernels of the cuDNN LSTM (rnn_kernels.h): one thread per element, grid-stride.
#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/runtime/launch.cuh"
#include "backends/cuda/rnn/rnn_kernels.h"

namespace dnnx::cuda {

namespace {

template <class T>
__global__ void reverse_sequences(const T* __restrict__ x, T* __restrict__ y, const int32_t* __restrict__ lens,
                                  SequenceDims d, int64_t n) {
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

template <class T>  // an unsigned type of the element's size: zero bits are 0.0 in either float type
__global__ void zero_empty_sequences(T* __restrict__ t, int64_t n, int64_t inner, int64_t batch,
                                     const int32_t* __restrict__ lens) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    if (lens[i / inner % batch] == 0) t[i] = 0;
  }
}

// One block row (blockIdx.y) per table entry; its blocks stride over the entry's elements.
template <class T>
__global__ void block_copies(const BlockCopy* __restrict__ table, CopySlots slots, T* space, bool into_space) {
  const BlockCopy c = table[blockIdx.y];
  T* tensor = static_cast<T*>(slots.ptr[c.slot]);
  if (!tensor) return;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < c.count; i += int64_t{gridDim.x} * blockDim.x) {
    if (into_space) {
      space[c.space + i] = tensor[c.tensor + i];
    } else {
      tensor[c.tensor + i] = space[c.space + i];
    }
  }
}

}  // namespace

void launch_block_copies(const BlockCopy* table, int64_t blocks, int64_t longest, const CopySlots& slots, void* space,
                         size_t elem, bool into_space, cudaStream_t stream) {
  if (blocks == 0 || longest == 0) return;
  // A few thousand threads per entry cover a weight matrix in a handful of strides.
  const dim3 grid(std::min<unsigned>(grid_for(longest), 64), static_cast<unsigned>(blocks));
  if (elem == 2) {
    block_copies<uint16_t><<<grid, kBlock, 0, stream>>>(table, slots, static_cast<uint16_t*>(space), into_space);
  } else {
    block_copies<uint32_t><<<grid, kBlock, 0, stream>>>(table, slots, static_cast<uint32_t*>(space), into_space);
  }
  check_launch("block_copies kernel");
}

void launch_reverse_sequences(const void* x, void* y, size_t elem, const int32_t* lens, const SequenceDims& dims,
                              cudaStream_t stream) {
  const int64_t n = dims.seq * dims.batch * dims.width;
  if (n == 0) return;
  if (elem == 2) {
    reverse_sequences<uint16_t><<<grid_for(n), kBlock, 0, stream>>>(static_cast<const uint16_t*>(x),
                                                                     static_cast<uint16_t*>(y), lens, dims, n);
  } else {
    reverse_sequences<uint32_t><<<grid_for(n), kBlock, 0, stream>>>(static_cast<const uint32_t*>(x),
                                                                     static_cast<uint32_t*>(y), lens, dims, n);
  }
  check_launch("reverse_sequences kernel");
}

void launch_zero_empty_sequences(void* t, size_t elem, int64_t n, int64_t inner, int64_t batch, const int32_t* lens,
                                 cudaStream_t stream) {
  if (n == 0) return;
  if (elem == 2) {
    zero_empty_sequences<uint16_t><<<grid_for(n), kBlock, 0, stream>>>(static_cast<uint16_t*>(t), n, inner, batch,
                                                                        lens);
  } else {
    zero_empty_sequences<uint32_t><<<grid_for(n), kBlock, 0, stream>>>(static_cast<uint32_t*>(t), n, inner, batch,
                                                                        lens);
  }
  check_launch("zero_empty_sequences kernel");
}

}  // namespace dnnx::cuda
