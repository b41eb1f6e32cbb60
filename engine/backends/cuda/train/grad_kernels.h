// Launchers of the small CUDA kernels behind the layer gradients (grad_kernels.cu), for what
// cuDNN does not cover. Each queues on `stream` and checks the launch. Every kernel is
// deterministic: each output element is written by one thread or one block, summing in a fixed
// order (no atomics), so deterministic=True holds for these gradients too.
#pragma once
#include <cstdint>

#include <cuda_runtime.h>

#include "backends/cuda/layout/glue_kernels.h"

namespace dnnx::cuda {

// MaxPool's gradient as the direct forward kernel computes the max (launch_max_pool): every
// dX element gathers the dY of each window whose first maximum (taps in X only, in d, h, w
// order, as the CPU) it is. x, dx [planes, in...]; dy [planes, out...]. dx is overwritten.
void launch_max_pool_grad(const float* x, const float* dy, float* dx, const Window3d& w, cudaStream_t stream);

// The same for 2x2 windows of stride 2 without pads on even 2-D planes (w.in[0] == 1), one thread
// per window (Note [2x2 pool gradient] in pool/max_pool_2x2_grad_kernels.cu); fits: whether `w` is one.
bool max_pool_2x2_grad_fits(const Window3d& w);
void launch_max_pool_2x2_grad(const float* x, const float* dy, float* dx, const Window3d& w, cudaStream_t stream);

// AveragePool's gradient with the forward's divisor (launch_avg_pool): every dX element gathers
// dY / divisor of each window holding it (taps in X only; pads never receive). dx [planes, in...];
// dy [planes, out...]; pad_end and count_include_pad as the forward's. dx is overwritten.
void launch_avg_pool_grad(const float* dy, float* dx, const Window3d& w, const int64_t pad_end[3],
                          bool count_include_pad, cudaStream_t stream);

// dst[offset(i)] = src[i] for i < n, offset walking src's dims (`size`) with dst's strides
// (`stride_a`): launch_gather reversed, for Slice's gradient. Every offset must be distinct.
void launch_strided_scatter(const float* src, float* dst, int64_t n, const BroadcastDims& dims, cudaStream_t stream);

// dst[j] = scale * sum over the reduced elements of src: output j walks `kept` (size, and in
// stride_a its stride in src), the summed elements walk `reduced` (likewise). n: dst's
// elements. `reduced` of rank 0 is an elementwise dst = scale * src (src walked by `kept`).
void launch_reduce_sum(const float* src, float* dst, int64_t n, const BroadcastDims& kept,
                       const BroadcastDims& reduced, float scale, cudaStream_t stream);

// BatchNormalization's inference-form gradient, x, dy, dx [batch, channels, plane]; scale,
// mean, var [C] on the device: dx = dy * scale / sqrt(var + eps); dscale[c] = sum(dy * xhat);
// dbias[c] = sum(dy). Any of dx, dscale, dbias may be null (not asked for).
void launch_batchnorm_grad(const float* x, const float* dy, const float* scale, const float* mean, const float* var,
                           float* dx, float* dscale, float* dbias, int64_t batch, int64_t channels, int64_t plane,
                           float epsilon, cudaStream_t stream);

}  // namespace dnnx::cuda
