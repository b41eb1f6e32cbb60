// Launchers of the LayerNormalization / InstanceNormalization / GroupNormalization kernels
// (normalization_kernels.cu), over ops/normalization/normalization.h's form: x [rows, row_len], parameters of
// index p(r, j) = (r % row_groups) * chunks + j / chunk_len. float32 (the forward also the half
// types). Each queues on `stream` and
// checks the launch.
#pragma once
#include <cstdint>

#include <cuda_runtime.h>

#include "ir/tensor.h"
#include "ops/normalization/normalization.h"

namespace dnnx::cuda {

// y = (x - mean) * inv_std * scale[p] + bias[p] per row (bias null: 0); mean and inv_std [rows]
// are written when not null. Every pointer of `dtype` (float32, float16 or bfloat16: half storage
// converts them all), the sums in float32; rows of up to 1024 elements one warp each (Note [warp
// rows] in normalization_kernels.cu).
void launch_norm(const NormGeometry& g, const void* x, const void* scale, const void* bias, void* y, void* mean,
                 void* inv_std, DType dtype, cudaStream_t stream);

// The gradient (backends/cpu/normalization/normalization_cpu.cc gives the formulas): dx, dscale, dbias may each
// be null (not asked for). stats: workspace of 2 * rows floats (each row's mean and inv_std, for
// the parameter sums).
void launch_norm_grad(const NormGeometry& g, const float* x, const float* scale, const float* dy, float* dx,
                      float* dscale, float* dbias, float* stats, cudaStream_t stream);

// RMSNormalization (ops/normalization/moment_norms.h): x, y [rows, row_len]; row element j reads
// scale[index(j)], index(j) = sum over d of ((j / inner[d]) % size[d]) * stride[d] (the scale's
// broadcast to the normalized dims, merged to at most kMaxScaleDims dims at plan time; rank 0:
// scale has one element).
constexpr int kMaxScaleDims = 8;
struct RmsScaleWalk {
  int rank = 0;
  int64_t size[kMaxScaleDims] = {}, stride[kMaxScaleDims] = {}, inner[kMaxScaleDims] = {};
};
// y = x / sqrt(mean(x^2 over the row) + epsilon) * scale, in float; x, scale and y of `dtype`
// (float32, float16 or bfloat16).
void launch_rms_norm(const void* x, const void* scale, void* y, int64_t rows, int64_t row_len, float epsilon,
                     const RmsScaleWalk& walk, DType dtype, cudaStream_t stream);
// Its gradient, float32 (backends/cpu/normalization/moment_norms_grad_cpu.cc gives the formulas):
// dx [rows, row_len] and dscale [scale_numel] may each be null (not asked for). workspace:
// rms_norm_grad_workspace floats (each row's 1 / rms, and the per-column sums when the scale
// is broadcast).
size_t rms_norm_grad_workspace(int64_t rows, int64_t row_len, const RmsScaleWalk& walk);
void launch_rms_norm_grad(const float* x, const float* scale, const float* dy, float* dx, float* dscale, int64_t rows,
                          int64_t row_len, float epsilon, const RmsScaleWalk& walk, int64_t scale_numel,
                          float* workspace, cudaStream_t stream);

}  // namespace dnnx::cuda
