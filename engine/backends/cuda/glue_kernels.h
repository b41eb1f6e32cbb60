// Launchers of the small CUDA kernels for the glue ops (the *_kernels.cu files). Each queues
// its kernel on `stream` and checks the launch (DeviceError on failure). Shapes arrive already
// simplified at plan time: size-1 dims dropped and neighbouring dims merged, so that at most
// kMaxGlueDims remain.
#pragma once
#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

namespace dnnx::cuda {

constexpr int kMaxGlueDims = 8;

// Output dims (outermost first) and, per operand, its element stride along each (0 where the
// operand is broadcast along that dim).
struct BroadcastDims {
  int rank = 0;
  int64_t size[kMaxGlueDims] = {};
  int64_t stride_a[kMaxGlueDims] = {};
  int64_t stride_b[kMaxGlueDims] = {};
};

enum class BinaryKind { Add, Sub, Mul, Div };

// y[i] = a[.] op b[.] for i < n. rank 0: a, b and y have n elements each (no broadcast).
void launch_binary(BinaryKind kind, const float* a, const float* b, float* y, int64_t n,
                   const BroadcastDims& dims, cudaStream_t stream);

// y[i] = x[offset(i)] for i < n, where offset walks the output dims with x's strides (a
// transpose, or a broadcast when a stride is 0). elem: bytes per element (1, 2, 4 or 8).
// Only `size` and `stride_a` of `dims` are read.
void launch_gather(const void* x, void* y, size_t elem, int64_t n, const BroadcastDims& dims,
                   cudaStream_t stream);

// The sliding-window shape of one 3-D (D, H, W) window op over `planes` planes.
struct Window3d {
  int64_t planes = 0;
  int64_t in[3] = {}, out[3] = {}, kernel[3] = {}, stride[3] = {}, dilation[3] = {}, pad_begin[3] = {};
};

// Max pooling, taps in the padding ignored (they count as -inf): x [planes, in...] ->
// y [planes, out...].
void launch_max_pool(const float* x, float* y, const Window3d& w, cudaStream_t stream);

// Zero padding: x [planes, in...] -> y [planes, out...] with x's element (d, h, w) at
// (d + begin[0], h + begin[1], w + begin[2]) and zeros around it.
void launch_pad(const float* x, float* y, int64_t planes, const int64_t in[3], const int64_t out[3],
                const int64_t begin[3], cudaStream_t stream);

}  // namespace dnnx::cuda
