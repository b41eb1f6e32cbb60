// The small kernels of the layer gradients (grad_kernels.h).
#include <cfloat>

#include "backends/cuda/pool/avg_pool_divisor.cuh"
#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/train/grad_kernels.h"
#include "backends/cuda/runtime/launch.cuh"

namespace dnnx::cuda {

namespace {

// The input offset (within one plane) of the first maximum of output (od, oh, ow)'s window, or
// -1 when no tap lies inside X. Mirrors max_pool_grad's CPU scan: x > best, or the first tap.
__device__ int64_t window_argmax(const float* __restrict__ x, const Window3d& w, int64_t od, int64_t oh, int64_t ow) {
  float best = -FLT_MAX;
  int64_t at = -1;
  for (int64_t kd = 0; kd < w.kernel[0]; ++kd) {
    const int64_t id = od * w.stride[0] - w.pad_begin[0] + kd * w.dilation[0];
    if (id < 0 || id >= w.in[0]) continue;
    for (int64_t kh = 0; kh < w.kernel[1]; ++kh) {
      const int64_t ih = oh * w.stride[1] - w.pad_begin[1] + kh * w.dilation[1];
      if (ih < 0 || ih >= w.in[1]) continue;
      for (int64_t kw = 0; kw < w.kernel[2]; ++kw) {
        const int64_t iw = ow * w.stride[2] - w.pad_begin[2] + kw * w.dilation[2];
        if (iw < 0 || iw >= w.in[2]) continue;
        const int64_t i = (id * w.in[1] + ih) * w.in[2] + iw;
        if (at < 0 || x[i] > best) {
          best = x[i];
          at = i;
        }
      }
    }
  }
  return at;
}

// The outputs along one dim whose window can hold input position `i`: o * stride - pad + k *
// dilation == i for some tap k in [0, kernel). [lo, hi) clamped to [0, out).
__device__ void covering(int64_t i, int64_t stride, int64_t pad, int64_t dilation, int64_t kernel, int64_t out,
                         int64_t& lo, int64_t& hi) {
  const int64_t first = i + pad - (kernel - 1) * dilation;  // o * stride >= first
  lo = first <= 0 ? 0 : (first + stride - 1) / stride;
  hi = (i + pad) / stride + 1;  // o * stride <= i + pad (i + pad >= 0)
  if (hi > out) hi = out;
}

__global__ void max_pool_grad(const float* __restrict__ x, const float* __restrict__ dy, float* __restrict__ dx,
                              Window3d w) {
  const int64_t plane_in = w.in[0] * w.in[1] * w.in[2], plane_out = w.out[0] * w.out[1] * w.out[2];
  const int64_t n = w.planes * plane_in;
  for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < n; e += int64_t{gridDim.x} * blockDim.x) {
    const int64_t p = e / plane_in, i = e % plane_in;
    const int64_t iw = i % w.in[2], ih = i / w.in[2] % w.in[1], id = i / (w.in[2] * w.in[1]);
    const float* xp = x + p * plane_in;
    const float* dyp = dy + p * plane_out;
    int64_t lo[3], hi[3];
    const int64_t pos[3] = {id, ih, iw};
    for (int d = 0; d < 3; ++d) covering(pos[d], w.stride[d], w.pad_begin[d], w.dilation[d], w.kernel[d], w.out[d], lo[d], hi[d]);
    float sum = 0.0f;
    for (int64_t od = lo[0]; od < hi[0]; ++od) {
      if ((id + w.pad_begin[0] - od * w.stride[0]) % w.dilation[0] != 0) continue;
      for (int64_t oh = lo[1]; oh < hi[1]; ++oh) {
        if ((ih + w.pad_begin[1] - oh * w.stride[1]) % w.dilation[1] != 0) continue;
        for (int64_t ow = lo[2]; ow < hi[2]; ++ow) {
          if ((iw + w.pad_begin[2] - ow * w.stride[2]) % w.dilation[2] != 0) continue;
          if (window_argmax(xp, w, od, oh, ow) == i) sum += dyp[(od * w.out[1] + oh) * w.out[2] + ow];
        }
      }
    }
    dx[e] = sum;
  }
}

// Every dX element gathers dY / divisor of each window that holds it, in (od, oh, ow) order.
__global__ void avg_pool_grad(const float* __restrict__ dy, float* __restrict__ dx, Window3d w, int64_t pe0,
                              int64_t pe1, int64_t pe2, bool include_pad) {
  const int64_t plane_in = w.in[0] * w.in[1] * w.in[2], plane_out = w.out[0] * w.out[1] * w.out[2];
  const int64_t n = w.planes * plane_in;
  const int64_t pad_end[3] = {pe0, pe1, pe2};
  for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < n; e += int64_t{gridDim.x} * blockDim.x) {
    const int64_t p = e / plane_in, i = e % plane_in;
    const int64_t pos[3] = {i / (w.in[2] * w.in[1]), i / w.in[2] % w.in[1], i % w.in[2]};
    const float* dyp = dy + p * plane_out;
    int64_t lo[3], hi[3];
    for (int d = 0; d < 3; ++d) covering(pos[d], w.stride[d], w.pad_begin[d], w.dilation[d], w.kernel[d], w.out[d], lo[d], hi[d]);
    float sum = 0.0f;
    for (int64_t od = lo[0]; od < hi[0]; ++od) {
      if ((pos[0] + w.pad_begin[0] - od * w.stride[0]) % w.dilation[0] != 0) continue;
      const int64_t cd = avg_pool_counted(od, w.in[0], w.kernel[0], w.stride[0], w.dilation[0], w.pad_begin[0], pad_end[0], include_pad);
      for (int64_t oh = lo[1]; oh < hi[1]; ++oh) {
        if ((pos[1] + w.pad_begin[1] - oh * w.stride[1]) % w.dilation[1] != 0) continue;
        const int64_t ch = avg_pool_counted(oh, w.in[1], w.kernel[1], w.stride[1], w.dilation[1], w.pad_begin[1], pad_end[1], include_pad);
        for (int64_t ow = lo[2]; ow < hi[2]; ++ow) {
          if ((pos[2] + w.pad_begin[2] - ow * w.stride[2]) % w.dilation[2] != 0) continue;
          const int64_t cw = avg_pool_counted(ow, w.in[2], w.kernel[2], w.stride[2], w.dilation[2], w.pad_begin[2], pad_end[2], include_pad);
          sum += dyp[(od * w.out[1] + oh) * w.out[2] + ow] / static_cast<float>(cd * ch * cw);
        }
      }
    }
    dx[e] = sum;
  }
}

__device__ int64_t walk(int64_t index, const BroadcastDims& dims) {
  int64_t offset = 0;
  for (int d = dims.rank - 1; d >= 0; --d) {
    offset += index % dims.size[d] * dims.stride_a[d];
    index /= dims.size[d];
  }
  return offset;
}

__global__ void strided_scatter(const float* __restrict__ src, float* __restrict__ dst, int64_t n, BroadcastDims dims) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    dst[walk(i, dims)] = src[i];
  }
}

// The block's sum of `value` (every thread gets it); a fixed tree, so a fixed rounding.
__device__ float block_sum(float value) {
  __shared__ float partial[kBlock];
  partial[threadIdx.x] = value;
  __syncthreads();
  for (int half = kBlock / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  const float total = partial[0];
  __syncthreads();  // partial is reused by the caller's next call
  return total;
}

// One block per dst element (grid-stride over them).
__global__ void reduce_sum(const float* __restrict__ src, float* __restrict__ dst, int64_t n, BroadcastDims kept,
                           BroadcastDims reduced, int64_t count, float scale) {
  for (int64_t j = blockIdx.x; j < n; j += gridDim.x) {
    const float* base = src + walk(j, kept);
    float sum = 0.0f;
    for (int64_t r = threadIdx.x; r < count; r += blockDim.x) sum += base[walk(r, reduced)];
    sum = block_sum(sum);
    if (threadIdx.x == 0) dst[j] = scale * sum;
  }
}

__global__ void scale_copy(const float* __restrict__ src, float* __restrict__ dst, int64_t n, BroadcastDims kept,
                           float scale) {
  for (int64_t j = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; j < n; j += int64_t{gridDim.x} * blockDim.x) {
    dst[j] = scale * src[walk(j, kept)];
  }
}

// One block per channel: the two sums over batch and plane.
__global__ void batchnorm_grad_sums(const float* __restrict__ x, const float* __restrict__ dy,
                                    const float* __restrict__ mean, const float* __restrict__ var,
                                    float* __restrict__ dscale, float* __restrict__ dbias, int64_t batch,
                                    int64_t channels, int64_t plane, float epsilon) {
  for (int64_t c = blockIdx.x; c < channels; c += gridDim.x) {
    const float inv_std = 1.0f / sqrtf(var[c] + epsilon), m = mean[c];
    float sum_dy = 0.0f, sum_dy_xhat = 0.0f;
    const int64_t count = batch * plane;
    for (int64_t k = threadIdx.x; k < count; k += blockDim.x) {
      const int64_t at = (k / plane * channels + c) * plane + k % plane;
      sum_dy += dy[at];
      sum_dy_xhat += dy[at] * (x[at] - m) * inv_std;
    }
    sum_dy = block_sum(sum_dy);
    sum_dy_xhat = block_sum(sum_dy_xhat);
    if (threadIdx.x == 0) {
      if (dbias) dbias[c] = sum_dy;
      if (dscale) dscale[c] = sum_dy_xhat;
    }
  }
}

__global__ void batchnorm_grad_x(const float* __restrict__ dy, const float* __restrict__ scale,
                                 const float* __restrict__ var, float* __restrict__ dx, int64_t n, int64_t channels,
                                 int64_t plane, float epsilon) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t c = i / plane % channels;
    dx[i] = dy[i] * (scale[c] / sqrtf(var[c] + epsilon));
  }
}

int64_t dims_count(const BroadcastDims& dims) {
  int64_t n = 1;
  for (int d = 0; d < dims.rank; ++d) n *= dims.size[d];
  return n;
}

unsigned blocks_for(int64_t n) { return static_cast<unsigned>(std::max<int64_t>(1, std::min(n, kMaxBlocks))); }

}  // namespace

void launch_max_pool_grad(const float* x, const float* dy, float* dx, const Window3d& w, cudaStream_t stream) {
  const int64_t n = w.planes * w.in[0] * w.in[1] * w.in[2];
  if (n == 0) return;
  max_pool_grad<<<grid_for(n), kBlock, 0, stream>>>(x, dy, dx, w);
  check_launch("max-pool gradient kernel");
}

void launch_avg_pool_grad(const float* dy, float* dx, const Window3d& w, const int64_t pad_end[3],
                          bool count_include_pad, cudaStream_t stream) {
  const int64_t n = w.planes * w.in[0] * w.in[1] * w.in[2];
  if (n == 0) return;
  avg_pool_grad<<<grid_for(n), kBlock, 0, stream>>>(dy, dx, w, pad_end[0], pad_end[1], pad_end[2], count_include_pad);
  check_launch("average-pool gradient kernel");
}

void launch_strided_scatter(const float* src, float* dst, int64_t n, const BroadcastDims& dims, cudaStream_t stream) {
  if (n == 0) return;
  strided_scatter<<<grid_for(n), kBlock, 0, stream>>>(src, dst, n, dims);
  check_launch("strided scatter kernel");
}

void launch_reduce_sum(const float* src, float* dst, int64_t n, const BroadcastDims& kept,
                       const BroadcastDims& reduced, float scale, cudaStream_t stream) {
  if (n == 0) return;
  if (reduced.rank == 0) {
    scale_copy<<<grid_for(n), kBlock, 0, stream>>>(src, dst, n, kept, scale);
  } else {
    reduce_sum<<<blocks_for(n), kBlock, 0, stream>>>(src, dst, n, kept, reduced, dims_count(reduced), scale);
  }
  check_launch("reduce-sum kernel");
}

void launch_batchnorm_grad(const float* x, const float* dy, const float* scale, const float* mean, const float* var,
                           float* dx, float* dscale, float* dbias, int64_t batch, int64_t channels, int64_t plane,
                           float epsilon, cudaStream_t stream) {
  if (dscale || dbias) {
    if (channels > 0) {
      batchnorm_grad_sums<<<blocks_for(channels), kBlock, 0, stream>>>(x, dy, mean, var, dscale, dbias, batch,
                                                                       channels, plane, epsilon);
      check_launch("batch-norm gradient sums kernel");
    }
  }
  const int64_t n = batch * channels * plane;
  if (dx && n > 0) {
    batchnorm_grad_x<<<grid_for(n), kBlock, 0, stream>>>(dy, scale, var, dx, n, channels, plane, epsilon);
    check_launch("batch-norm gradient kernel");
  }
}

}  // namespace dnnx::cuda
