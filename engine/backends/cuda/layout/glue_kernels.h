// Launchers of the small CUDA kernels for the glue ops (the *_kernels.cu files). Each queues
// its kernel on `stream` and checks the launch (DeviceError on failure). Shapes arrive already
// simplified at plan time: size-1 dims dropped and neighbouring dims merged, so that at most
// kMaxGlueDims remain.
#pragma once
#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

#include "ir/tensor.h"

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

enum class BinaryKind { Add, Sub, Mul, Div, Max, Min };

// y[i] = a[.] op b[.] for i < n. rank 0: a, b and y have n elements each (no broadcast).
// Elements of `dtype`: float32, or a half type (float16, bfloat16; the arithmetic in float, one
// rounding to the half type per result).
void launch_binary(BinaryKind kind, const void* a, const void* b, void* y, int64_t n,
                   const BroadcastDims& dims, DType dtype, cudaStream_t stream);
// The float32 form.
inline void launch_binary(BinaryKind kind, const float* a, const float* b, float* y, int64_t n,
                          const BroadcastDims& dims, cudaStream_t stream) {
  launch_binary(kind, a, b, y, n, dims, DType::Float32, stream);
}

// y[i] = x[offset(i)] for i < n, where offset walks the output dims with x's strides (a
// transpose, or a broadcast when a stride is 0). elem: bytes per element (1, 2, 4 or 8).
// Only `size` and `stride_a` of `dims` are read.
void launch_gather(const void* x, void* y, size_t elem, int64_t n, const BroadcastDims& dims,
                   cudaStream_t stream);

// Concat's inputs for one kernel (Note [concat in one launch] in concat_cuda.cc): input i's
// rows of chunk[i] bytes go to bytes [column[i], column[i] + chunk[i]) of each output row.
constexpr int kMaxConcatInputs = 64;
struct ConcatInputs {
  int count = 0;
  const void* data[kMaxConcatInputs] = {};
  int64_t chunk[kMaxConcatInputs] = {};
  int64_t column[kMaxConcatInputs] = {};
};
// y [outer, row_bytes] from the inputs' [outer, chunk] rows (row_bytes: the chunks' sum).
void launch_concat(const ConcatInputs& in, void* y, int64_t outer, int64_t row_bytes, cudaStream_t stream);

// x [batch, channels, hw] -> y [batch, hw, padded], zeros in channels..padded-1 (Transpose+Pad,
// transpose_pad_kernels.cu). elem: 2 or 4 bytes.
void launch_transpose_pad(const void* x, void* y, size_t elem, int64_t batch, int64_t hw, int channels, int padded,
                          cudaStream_t stream);

// Transpose+SpaceToDepth (ops/layout/channels_last.h): x [batch, c, h, w] -> y [batch, hs, ws, depth],
// the input padded by `top` and `left` first. depth: 16; in == out (any 2- or 4-byte type), or
// float32 in and a half type out (Note [entry cast]: rounded as Cast rounds).
struct SpaceToDepthDims {
  int64_t batch = 0;
  int c = 0, h = 0, w = 0, hs = 0, ws = 0, top = 0, left = 0, depth = 0;
};
void launch_space_to_depth(const void* x, void* y, DType in, DType out, const SpaceToDepthDims& dims,
                           cudaStream_t stream);

// The sliding-window shape of one 3-D (D, H, W) window op over `planes` planes.
struct Window3d {
  int64_t planes = 0;
  int64_t in[3] = {}, out[3] = {}, kernel[3] = {}, stride[3] = {}, dilation[3] = {}, pad_begin[3] = {};
};

// Max pooling, taps in the padding ignored (they count as -inf): x [planes, in...] ->
// y [planes, out...]; channels: as launch_avg_pool's (C: x [planes, in..., C] -> y [planes, out..., C]).
void launch_max_pool(const void* x, void* y, const Window3d& w, DType dtype, cudaStream_t stream,
                     int64_t channels = 1);
inline void launch_max_pool(const float* x, float* y, const Window3d& w, cudaStream_t stream) {
  launch_max_pool(x, y, w, DType::Float32, stream);
}

// Zero padding: x [planes, in...] -> y [planes, out...] with x's element (d, h, w) at
// (d + begin[0], h + begin[1], w + begin[2]) and zeros around it.
void launch_pad(const float* x, float* y, int64_t planes, const int64_t in[3], const int64_t out[3],
                const int64_t begin[3], cudaStream_t stream);

// --- The real-world ops, one *_kernels.cu per op family: elementwise/ batchnorm_,
// param_activation_ (LeakyRelu, Elu, Selu, Clip) and reduce_kernels.cu; pool/ avg_pool_, global_pool_
// and lrn_kernels.cu; layout/ cast_, gather_axis_ and pad_kernels.cu (Pad and the fill) ---
// Each takes elements of `dtype`: float32, or a half type (float16 under precision="fp16",
// bfloat16 under "bf16"; float arithmetic either way); the float32-only forms below the list
// keep the callers that know nothing of half.

// BatchNormalization (inference): x, y [batch, channels, plane]; scale, bias, mean, var [C],
// read on the device (they may be computed tensors); relu: BatchNormalization+Relu. A channels-last
// X [N, H, W, C] is batch = N*H*W, plane = 1.
void launch_batchnorm(const void* x, const void* scale, const void* bias, const void* mean, const void* var, void* y,
                      int64_t batch, int64_t channels, int64_t plane, float epsilon, bool relu, DType dtype,
                      cudaStream_t stream);

// LeakyRelu, Elu, and Selu (its gamma: `gamma`, unused by the other two).
enum class AlphaKind { LeakyRelu, Elu, Selu };
void launch_alpha_activation(AlphaKind kind, const void* x, void* y, int64_t n, float alpha, float gamma, DType dtype,
                             cudaStream_t stream);

// y = min(max(x, lo), hi); lo_ptr / hi_ptr (device scalars) replace lo / hi when not null.
void launch_clip(const void* x, void* y, int64_t n, float lo, float hi, const void* lo_ptr, const void* hi_ptr,
                 DType dtype, cudaStream_t stream);

// Average pooling as the CPU computes it: the divisor is the product over dims of the taps
// inside X (count_include_pad: inside the padded X, [-pads_begin, in + pads_end)). channels: 1 for
// x [planes, in...] -> y [planes, out...]; C for channels last, x [planes, in..., C] -> y [planes, out..., C].
void launch_avg_pool(const void* x, void* y, const Window3d& w, const int64_t pad_end[3], bool count_include_pad,
                     DType dtype, cudaStream_t stream, int64_t channels = 1);

// One value per plane: the mean (or the max) of its `plane` elements.
void launch_global_pool(const void* x, void* y, int64_t planes, int64_t plane, bool max, DType dtype,
                        cudaStream_t stream);

// LRN across channels, x, y [batch, channels, plane]: y = x * (bias + alpha / size * sum)^-beta,
// sum over channels [c - floor((size-1)/2), c + ceil((size-1)/2)] of x^2.
void launch_lrn(const void* x, void* y, int64_t batch, int64_t channels, int64_t plane, int64_t size, float alpha,
                float beta, float bias, DType dtype, cudaStream_t stream);

// y[i] = mean over the `red` dims of x, where output i walks `out` (size, stride_a: strides
// in x) and the reduced elements walk `red` (size, stride_a). count: the reduced elements.
void launch_reduce_mean(const void* x, void* y, int64_t n, const BroadcastDims& out, const BroadcastDims& red,
                        int64_t count, DType dtype, cudaStream_t stream);

// The float32-only forms.
inline void launch_batchnorm(const float* x, const float* scale, const float* bias, const float* mean,
                             const float* var, float* y, int64_t batch, int64_t channels, int64_t plane, float epsilon,
                             cudaStream_t stream) {
  launch_batchnorm(x, scale, bias, mean, var, y, batch, channels, plane, epsilon, false, DType::Float32, stream);
}
inline void launch_alpha_activation(AlphaKind kind, const float* x, float* y, int64_t n, float alpha, float gamma,
                                    cudaStream_t stream) {
  launch_alpha_activation(kind, x, y, n, alpha, gamma, DType::Float32, stream);
}
inline void launch_clip(const float* x, float* y, int64_t n, float lo, float hi, const float* lo_ptr,
                        const float* hi_ptr, cudaStream_t stream) {
  launch_clip(x, y, n, lo, hi, lo_ptr, hi_ptr, DType::Float32, stream);
}
inline void launch_lrn(const float* x, float* y, int64_t batch, int64_t channels, int64_t plane, int64_t size,
                       float alpha, float beta, float bias, cudaStream_t stream) {
  launch_lrn(x, y, batch, channels, plane, size, alpha, beta, bias, DType::Float32, stream);
}
inline void launch_avg_pool(const float* x, float* y, const Window3d& w, const int64_t pad_end[3],
                            bool count_include_pad, cudaStream_t stream) {
  launch_avg_pool(x, y, w, pad_end, count_include_pad, DType::Float32, stream);
}
inline void launch_reduce_mean(const float* x, float* y, int64_t n, const BroadcastDims& out,
                               const BroadcastDims& red, int64_t count, cudaStream_t stream) {
  launch_reduce_mean(x, y, n, out, red, count, DType::Float32, stream);
}

// Element type conversion between float32 (0), int32 (1), int64 (2), float16 (3; through float,
// round to nearest even), bool (4; x != 0) and bfloat16 (5; through float, round to nearest
// even).
void launch_cast(const void* x, int from, void* y, int to, int64_t n, cudaStream_t stream);

// Gather along one axis: x [outer, size, inner] -> y [outer, count, inner] with y's (o, j, i)
// = x's (o, idx[j], i); negative indices count from the end; an index out of range gives
// zeros (it cannot be reported from the device). idx_int64: int64 indices, else int32.
void launch_gather_axis(const void* x, void* y, size_t elem, const void* idx, bool idx_int64, int64_t outer,
                        int64_t size, int64_t count, int64_t inner, cudaStream_t stream);
// Its gradient's keys (train/keyed_row_sums.h): keys[j] = idx[j] made non-negative, or `size`
// for an index out of range.
void launch_gather_axis_keys(const void* idx, bool idx_int64, int* keys, int64_t count, int64_t size,
                             cudaStream_t stream);

// Padding (or cropping, for negative amounts) of any rank up to kMaxGlueDims. Constant mode
// (0): y's element at index o reads x at o - begin in every dim, or is the value when that is
// outside x; the value: the element-sized one at `value` (a device pointer), or `bits` when
// null. Edge (1), reflect (2) and wrap (3): every element reads x at ops/layout/pad.h's
// pad_source_index (which needs `end` too), the value unused.
struct PadDims {
  int rank = 0;
  int mode = 0;
  int64_t out[kMaxGlueDims] = {}, in[kMaxGlueDims] = {}, begin[kMaxGlueDims] = {}, end[kMaxGlueDims] = {};
};
void launch_pad_nd(const void* x, void* y, size_t elem, int64_t n, const PadDims& dims, const void* value,
                   uint64_t bits, cudaStream_t stream);
// A computed constant_value's gradient (float32): *d_value = the sum of dY [n] over the constant
// cells, with atomic adds (the order, so the last bits, may vary between runs); 0 in a mode
// other than constant. Pad's dX is a gather (Note [separable adjoint], pad_cuda.cc).
void launch_pad_value_grad(const float* dy, float* d_value, int64_t n, const PadDims& dims, cudaStream_t stream);

// Tile's gradient (tile_kernels.cu), float32: X [size...] tiled `reps` times along each dim into
// Y [reps * size...] (y_stride: Y's packed strides); dx[i] = the sum of dy over i's tiles, one
// thread per element of dX, the tiles in row-major order: the CPU's order (backends/cpu/indexing/
// indexing_cpu.cc adds them as Y's index grows), so the same bits, and no atomics.
struct TileDims {
  int rank = 0;
  int64_t size[kMaxGlueDims] = {};
  int64_t reps[kMaxGlueDims] = {};
  int64_t y_stride[kMaxGlueDims] = {};
};
void launch_tile_grad(const float* dy, float* dx, int64_t n, const TileDims& t, cudaStream_t stream);

// Fills y[0..n) with the element-sized value at `value` (a device pointer) or `bits` when null.
void launch_fill(void* y, size_t elem, int64_t n, const void* value, uint64_t bits, cudaStream_t stream);

}  // namespace dnnx::cuda
