// The normalization kernels (normalization_cuda.cc), as backends/cpu/normalization/normalization_cpu.cc
// computes them: one block per row for the statistics, the output and dX (block sums in a fixed
// order: deterministic), and one block per parameter for dscale and dbias (no atomics).
#include "backends/cuda/elementwise/normalization_kernels.h"
#include "backends/cuda/runtime/block_reduce.cuh"
#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/runtime/element_dispatch.cuh"
#include "backends/cuda/runtime/grid_loop.cuh"
#include "backends/cuda/runtime/launch.cuh"

namespace dnnx::cuda {

namespace {

constexpr int kWarp = 32;

// The sum of every thread's v over the block (blockDim.x a multiple of 32, at most 1024), the
// same value returned to all threads. shared: kBlock / 32 floats.
__device__ float block_sum(float v, float* shared) {
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  for (int o = kWarp / 2; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < blockDim.x / kWarp ? shared[lane] : 0.0f;
    for (int o = kWarp / 2; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
    if (lane == 0) shared[0] = v;
  }
  __syncthreads();
  const float total = shared[0];
  __syncthreads();  // shared is reused by the next call
  return total;
}

struct Stats {
  float mean, inv_std;
};

// The row's mean and 1 / sqrt(var + eps), two passes (the biased variance).
template <class T>
__device__ Stats row_stats(const T* xr, int64_t n, float epsilon, float* shared) {
  float s = 0.0f;
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) s += float(xr[j]);
  const float mean = n ? block_sum(s, shared) / float(n) : 0.0f;
  float q = 0.0f;
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
    const float d = float(xr[j]) - mean;
    q += d * d;
  }
  const float var = n ? block_sum(q, shared) / float(n) : 0.0f;
  return {mean, rsqrtf(var + epsilon)};
}

// One block per row (rows longer than kWarpRowMax). T: float, __half or __nv_bfloat16 for x,
// scale, bias, y, mean and inv_std alike (half storage converts them all); sums in float.
template <class T>
__global__ void norm_forward(NormGeometry g, const T* __restrict__ x, const T* __restrict__ scale,
                             const T* __restrict__ bias, T* __restrict__ y, T* __restrict__ mean,
                             T* __restrict__ inv_std) {
  __shared__ float shared[kBlock / kWarp];
  for (int64_t r = blockIdx.x; r < g.rows; r += gridDim.x) {
    const T* xr = x + r * g.row_len;
    const Stats s = row_stats(xr, g.row_len, g.epsilon, shared);
    if (threadIdx.x == 0) {
      if (mean) mean[r] = T(s.mean);
      if (inv_std) inv_std[r] = T(s.inv_std);
    }
    const int64_t p0 = (r % g.row_groups) * g.chunks;
    for (int64_t j = threadIdx.x; j < g.row_len; j += blockDim.x) {
      const int64_t p = p0 + j / g.chunk_len;
      y[r * g.row_len + j] = T((float(xr[j]) - s.mean) * s.inv_std * float(scale[p]) + (bias ? float(bias[p]) : 0.0f));
    }
  }
}

// Note [warp rows]: a row of at most kWarpRowMax elements is one warp's, its values held in
// registers (K per lane, lane-strided: coalesced), the sums by xor shuffles (a fixed order).
// ConvNeXt's LayerNormalization over 96-768 channels had one 256-thread block per row of 96:
// 160 threads idle and three reads of the row (H100, fp32: 0.37 ms per layer at batch 64).
constexpr int64_t kWarpRowMax = 1024;

__device__ float warp_sum_all(float v) {
  for (int o = kWarp / 2; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

template <class T, int K>
__global__ void norm_forward_warp(NormGeometry g, const T* __restrict__ x, const T* __restrict__ scale,
                                  const T* __restrict__ bias, T* __restrict__ y, T* __restrict__ mean,
                                  T* __restrict__ inv_std) {
  const int lane = threadIdx.x % kWarp;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / kWarp);
  const int n = static_cast<int>(g.row_len);
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * (blockDim.x / kWarp) + threadIdx.x / kWarp; r < g.rows;
       r += warps) {
    const T* xr = x + r * g.row_len;
    float v[K];
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const int j = lane + k * kWarp;
      v[k] = j < n ? float(xr[j]) : 0.0f;
      s += v[k];
    }
    const float m = warp_sum_all(s) / float(n);
    float q = 0.0f;
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const float d = lane + k * kWarp < n ? v[k] - m : 0.0f;
      q += d * d;
    }
    const float is = rsqrtf(warp_sum_all(q) / float(n) + g.epsilon);
    if (lane == 0) {
      if (mean) mean[r] = T(m);
      if (inv_std) inv_std[r] = T(is);
    }
    const int64_t p0 = (r % g.row_groups) * g.chunks;
    T* yr = y + r * g.row_len;
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const int j = lane + k * kWarp;
      if (j < n) {
        const int64_t p = p0 + j / g.chunk_len;
        yr[j] = T((v[k] - m) * is * float(scale[p]) + (bias ? float(bias[p]) : 0.0f));
      }
    }
  }
}

template <class T>
void launch_norm_typed(const NormGeometry& g, const void* x, const void* scale, const void* bias, void* y, void* mean,
                       void* inv_std, cudaStream_t stream) {
  const T *xt = static_cast<const T*>(x), *st = static_cast<const T*>(scale), *bt = static_cast<const T*>(bias);
  T *yt = static_cast<T*>(y), *mt = static_cast<T*>(mean), *it = static_cast<T*>(inv_std);
  if (g.row_len == 0 || g.row_len > kWarpRowMax) {
    norm_forward<T><<<static_cast<unsigned>(std::max<int64_t>(1, std::min(g.rows, kMaxBlocks))), kBlock, 0, stream>>>(
        g, xt, st, bt, yt, mt, it);
    return;
  }
  constexpr int kWarpsPerBlock = kBlock / kWarp;
  const unsigned blocks =
      static_cast<unsigned>(std::max<int64_t>(1, std::min((g.rows + kWarpsPerBlock - 1) / kWarpsPerBlock, kMaxBlocks)));
  const int64_t per_lane = (g.row_len + kWarp - 1) / kWarp;
  if (per_lane <= 4) {
    norm_forward_warp<T, 4><<<blocks, kBlock, 0, stream>>>(g, xt, st, bt, yt, mt, it);
  } else if (per_lane <= 8) {
    norm_forward_warp<T, 8><<<blocks, kBlock, 0, stream>>>(g, xt, st, bt, yt, mt, it);
  } else if (per_lane <= 16) {
    norm_forward_warp<T, 16><<<blocks, kBlock, 0, stream>>>(g, xt, st, bt, yt, mt, it);
  } else {
    norm_forward_warp<T, 32><<<blocks, kBlock, 0, stream>>>(g, xt, st, bt, yt, mt, it);
  }
}

// Per row: the statistics into `stats` and, when dx is asked for, dX.
__global__ void norm_backward_rows(NormGeometry g, const float* __restrict__ x, const float* __restrict__ scale,
                                   const float* __restrict__ dy, float* __restrict__ dx, float* __restrict__ stats) {
  __shared__ float shared[kBlock / kWarp];
  for (int64_t r = blockIdx.x; r < g.rows; r += gridDim.x) {
    const float *xr = x + r * g.row_len, *dyr = dy + r * g.row_len;
    const Stats s = row_stats(xr, g.row_len, g.epsilon, shared);
    if (threadIdx.x == 0) {
      stats[2 * r] = s.mean;
      stats[2 * r + 1] = s.inv_std;
    }
    if (!dx) continue;
    const int64_t p0 = (r % g.row_groups) * g.chunks;
    float sg = 0.0f, sgx = 0.0f;
    for (int64_t j = threadIdx.x; j < g.row_len; j += blockDim.x) {
      const float gj = dyr[j] * scale[p0 + j / g.chunk_len];
      sg += gj;
      sgx += gj * (xr[j] - s.mean) * s.inv_std;
    }
    const float mean_g = block_sum(sg, shared) / float(g.row_len);
    const float mean_gx = block_sum(sgx, shared) / float(g.row_len);
    for (int64_t j = threadIdx.x; j < g.row_len; j += blockDim.x) {
      const float xhat = (xr[j] - s.mean) * s.inv_std;
      dx[r * g.row_len + j] = s.inv_std * (dyr[j] * scale[p0 + j / g.chunk_len] - mean_g - xhat * mean_gx);
    }
  }
}

// Per parameter p = group * chunks + k: the sums over rows r = group + m * row_groups and the
// chunk's elements j = k * chunk_len + i.
__global__ void norm_backward_params(NormGeometry g, const float* __restrict__ x, const float* __restrict__ dy,
                                     const float* __restrict__ stats, float* __restrict__ dscale,
                                     float* __restrict__ dbias) {
  __shared__ float shared[kBlock / kWarp];
  const int64_t per_group_rows = g.rows / g.row_groups;
  const int64_t count = per_group_rows * g.chunk_len;
  for (int64_t p = blockIdx.x; p < g.params; p += gridDim.x) {
    const int64_t group = p / g.chunks, k = p % g.chunks;
    float s_xhat = 0.0f, s_dy = 0.0f;
    for (int64_t e = threadIdx.x; e < count; e += blockDim.x) {
      const int64_t r = group + (e / g.chunk_len) * g.row_groups;
      const int64_t at = r * g.row_len + k * g.chunk_len + e % g.chunk_len;
      s_xhat += dy[at] * (x[at] - stats[2 * r]) * stats[2 * r + 1];
      s_dy += dy[at];
    }
    const float total_xhat = block_sum(s_xhat, shared);
    const float total_dy = block_sum(s_dy, shared);
    if (threadIdx.x == 0) {
      if (dscale) dscale[p] = total_xhat;
      if (dbias) dbias[p] = total_dy;
    }
  }
}

__device__ int64_t scale_index(const RmsScaleWalk& w, int64_t j) {
  int64_t index = 0;
  for (int d = 0; d < w.rank; ++d) index += ((j / w.inner[d]) % w.size[d]) * w.stride[d];
  return index;
}

// One block per row: the sum of squares in float (a fixed-order block sum), then the row scaled.
template <class T>
__global__ void rms_norm_forward(const T* __restrict__ x, const T* __restrict__ scale, T* __restrict__ y, int64_t rows,
                                 int64_t row_len, float epsilon, RmsScaleWalk walk) {
  __shared__ float shared[kBlock / kWarp];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = x + r * row_len;
    float q = 0.0f;
    for (int64_t j = threadIdx.x; j < row_len; j += blockDim.x) {
      const float v = float(xr[j]);
      q += v * v;
    }
    const float inv = 1.0f / sqrtf(block_sum_all(q, shared) / float(row_len) + epsilon);
    for (int64_t j = threadIdx.x; j < row_len; j += blockDim.x) {
      y[r * row_len + j] = T(float(xr[j]) * inv * float(scale[scale_index(walk, j)]));
    }
  }
}

// The gradient's row pass: each row's r = 1 / rms into inv, and dx_j = r g_j - (r^3 / L) x_j
// sum_k(g_k x_k) with g = dy * scale when dx is asked for.
__global__ void rms_norm_backward_rows(const float* __restrict__ x, const float* __restrict__ scale,
                                       const float* __restrict__ dy, float* __restrict__ dx, float* __restrict__ inv,
                                       int64_t rows, int64_t row_len, float epsilon, RmsScaleWalk walk) {
  __shared__ float shared[kBlock / kWarp];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float *xr = x + r * row_len, *dyr = dy + r * row_len;
    float q = 0.0f, dot = 0.0f;
    for (int64_t j = threadIdx.x; j < row_len; j += blockDim.x) {
      q += xr[j] * xr[j];
      dot += dyr[j] * scale[scale_index(walk, j)] * xr[j];
    }
    const float rinv = 1.0f / sqrtf(block_sum_all(q, shared) / float(row_len) + epsilon);
    const float total_dot = block_sum_all(dot, shared);
    if (threadIdx.x == 0) inv[r] = rinv;
    if (!dx) continue;
    const float k = rinv * rinv * rinv * total_dot / float(row_len);
    for (int64_t j = threadIdx.x; j < row_len; j += blockDim.x) {
      dx[r * row_len + j] = rinv * dyr[j] * scale[scale_index(walk, j)] - k * xr[j];
    }
  }
}

// col[j] = sum over rows of dy x r (one thread per column, the rows in order: deterministic).
__global__ void rms_norm_backward_columns(const float* __restrict__ x, const float* __restrict__ dy,
                                          const float* __restrict__ inv, float* __restrict__ col, int64_t rows,
                                          int64_t row_len) {
  DNNX_GRID_LOOP(j, row_len) {
    float s = 0.0f;
    for (int64_t r = 0; r < rows; ++r) s += dy[r * row_len + j] * x[r * row_len + j] * inv[r];
    col[j] = s;
  }
}

// dscale[p] = the sum of the columns that read scale element p (a broadcast scale).
__global__ void rms_norm_scale_sums(const float* __restrict__ col, float* __restrict__ dscale, int64_t scale_numel,
                                    int64_t row_len, RmsScaleWalk walk) {
  DNNX_GRID_LOOP(p, scale_numel) {
    float s = 0.0f;
    for (int64_t j = 0; j < row_len; ++j) {
      if (scale_index(walk, j) == p) s += col[j];
    }
    dscale[p] = s;
  }
}

// Whether row element j reads scale element j (scale of the normalized dims' shape).
bool scale_is_row(const RmsScaleWalk& w, int64_t row_len) {
  return (w.rank == 1 && w.stride[0] == 1 && w.size[0] == row_len) || (w.rank == 0 && row_len == 1);
}

unsigned blocks_for(int64_t n) { return static_cast<unsigned>(std::max<int64_t>(1, std::min(n, kMaxBlocks))); }

}  // namespace

void launch_norm(const NormGeometry& g, const void* x, const void* scale, const void* bias, void* y, void* mean,
                 void* inv_std, DType dtype, cudaStream_t stream) {
  if (g.rows == 0) return;
  with_element(dtype, [&](auto t) { launch_norm_typed<decltype(t)>(g, x, scale, bias, y, mean, inv_std, stream); });
  check_launch("normalization kernel");
}

void launch_norm_grad(const NormGeometry& g, const float* x, const float* scale, const float* dy, float* dx,
                      float* dscale, float* dbias, float* stats, cudaStream_t stream) {
  if (g.rows == 0) return;
  norm_backward_rows<<<blocks_for(g.rows), kBlock, 0, stream>>>(g, x, scale, dy, dx, stats);
  check_launch("normalization gradient kernel (rows)");
  if (!dscale && !dbias) return;
  norm_backward_params<<<blocks_for(g.params), kBlock, 0, stream>>>(g, x, dy, stats, dscale, dbias);
  check_launch("normalization gradient kernel (parameters)");
}

void launch_rms_norm(const void* x, const void* scale, void* y, int64_t rows, int64_t row_len, float epsilon,
                     const RmsScaleWalk& walk, DType dtype, cudaStream_t stream) {
  if (rows == 0 || row_len == 0) return;
  with_element(dtype, [&](auto e) {
    using T = decltype(e);
    rms_norm_forward<T><<<blocks_for(rows), kBlock, 0, stream>>>(static_cast<const T*>(x), static_cast<const T*>(scale),
                                                                 static_cast<T*>(y), rows, row_len, epsilon, walk);
  });
  check_launch("RMSNormalization kernel");
}

size_t rms_norm_grad_workspace(int64_t rows, int64_t row_len, const RmsScaleWalk& walk) {
  return static_cast<size_t>(rows + (scale_is_row(walk, row_len) ? 0 : row_len));
}

void launch_rms_norm_grad(const float* x, const float* scale, const float* dy, float* dx, float* dscale, int64_t rows,
                          int64_t row_len, float epsilon, const RmsScaleWalk& walk, int64_t scale_numel,
                          float* workspace, cudaStream_t stream) {
  if (rows == 0 || row_len == 0) {
    if (dscale) check(cudaMemsetAsync(dscale, 0, static_cast<size_t>(scale_numel) * sizeof(float), stream), "cudaMemsetAsync");
    return;
  }
  float* inv = workspace;
  rms_norm_backward_rows<<<blocks_for(rows), kBlock, 0, stream>>>(x, scale, dy, dx, inv, rows, row_len, epsilon, walk);
  check_launch("RMSNormalization gradient kernel (rows)");
  if (!dscale) return;
  const bool direct = scale_is_row(walk, row_len);
  float* col = direct ? dscale : workspace + rows;
  rms_norm_backward_columns<<<grid_for(row_len), kBlock, 0, stream>>>(x, dy, inv, col, rows, row_len);
  check_launch("RMSNormalization gradient kernel (columns)");
  if (direct) return;
  rms_norm_scale_sums<<<grid_for(scale_numel), kBlock, 0, stream>>>(col, dscale, scale_numel, row_len, walk);
  check_launch("RMSNormalization gradient kernel (scale)");
}

}  // namespace dnnx::cuda
