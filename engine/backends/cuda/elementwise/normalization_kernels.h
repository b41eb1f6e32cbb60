// Launchers of the LayerNormalization / InstanceNormalization / GroupNormalization kernels
// (normalization_kernels.cu), over ops/normalization/normalization.h's form: x [rows, row_len], parameters of
// index p(r, j) = (r % row_groups) * chunks + j / chunk_len. float32. Each queues on `stream` and
// checks the launch.
#pragma once
#include <cstdint>

#include <cuda_runtime.h>

#include "ops/normalization/normalization.h"

namespace dnnx::cuda {

// y = (x - mean) * inv_std * scale[p] + bias[p] per row (bias null: 0); mean and inv_std [rows]
// are written when not null.
void launch_norm(const NormGeometry& g, const float* x, const float* scale, const float* bias, float* y, float* mean,
                 float* inv_std, cudaStream_t stream);

// The gradient (backends/cpu/normalization/normalization_cpu.cc gives the formulas): dx, dscale, dbias may each
// be null (not asked for). stats: workspace of 2 * rows floats (each row's mean and inv_std, for
// the parameter sums).
void launch_norm_grad(const NormGeometry& g, const float* x, const float* scale, const float* dy, float* dx,
                      float* dscale, float* dbias, float* stats, cudaStream_t stream);

}  // namespace dnnx::cuda
