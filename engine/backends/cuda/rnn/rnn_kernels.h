// Launchers of the small CUDA kernels around cuDNN's LSTM (lstm_cuda.cc, lstm_grad_cuda.cc,
// lstm_stack_grad_cuda.cc), in rnn_kernels.cu.
// Sequence data is [seq, batch, width] (seq-major) or [batch, seq, width] (batch-major); `lens`
// is the device array of each batch entry's length, each in [1, seq].
#pragma once
#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

namespace dnnx::cuda {

struct SequenceDims {
  int64_t seq = 0, batch = 0, width = 0;
  bool batch_major = false;
};

// Elements of `elem` bytes: 4 (float32) or 2 (float16); the kernels only move or zero them.
// y[t, b] = x[len_b - 1 - t, b] for t < len_b, and x[t, b] past the length (padding stays put),
// so that a forward pass over y is a reverse pass over x. Applied twice it is the identity.
void launch_reverse_sequences(const void* x, void* y, size_t elem, const int32_t* lens, const SequenceDims& dims,
                              cudaStream_t stream);

// Zeroes t[i] wherever the batch entry of element i has length 0: t has n elements and its batch
// index is (i / inner) % batch (inner: the elements after the batch axis, one batch entry's run).
void launch_zero_empty_sequences(void* t, size_t elem, int64_t n, int64_t inner, int64_t batch, const int32_t* lens,
                                 cudaStream_t stream);

// Block copies between a packed space (cuDNN's RNN weight space) and up to kCopySlots tensors,
// all in one launch: the table (device memory, built once) lists each block's tensor (a slot),
// its element offset there, its element offset in the space and its length. into_space: space
// <- tensors (packing the weights), else tensors <- space (unpacking their gradients); a null
// slot is skipped. Elements of `elem` bytes (4, or 2 for float16).
constexpr int kCopySlots = 24;
struct BlockCopy {
  int32_t slot = 0;
  int64_t tensor = 0, space = 0, count = 0;
};
struct CopySlots {
  void* ptr[kCopySlots] = {};
};
void launch_block_copies(const BlockCopy* table, int64_t blocks, int64_t longest, const CopySlots& slots, void* space,
                         size_t elem, bool into_space, cudaStream_t stream);

// The float32 forms.
inline void launch_reverse_sequences(const float* x, float* y, const int32_t* lens, const SequenceDims& dims,
                                     cudaStream_t stream) {
  launch_reverse_sequences(x, y, sizeof(float), lens, dims, stream);
}
inline void launch_zero_empty_sequences(float* t, int64_t n, int64_t inner, int64_t batch, const int32_t* lens,
                                        cudaStream_t stream) {
  launch_zero_empty_sequences(t, sizeof(float), n, inner, batch, lens, stream);
}

}  // namespace dnnx::cuda
