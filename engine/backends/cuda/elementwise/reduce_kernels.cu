// The Reduce* kernels (reduce_cuda.cc): each output element reduces its elements, both walked
// by BroadcastDims. One thread per output element, grid-stride loops (a block per element where
// it has many: Note [reduce by block]), arithmetic as the CPU
// kernels do it (backends/cpu/reduce/reduce_cpu.cc, its gradients too; LogSumExp as max +
// log(sum e^(x - max)), an infinite max the answer). ReduceMean takes float32, float16 or
// bfloat16 elements (element_dispatch.cuh: float arithmetic either way), the others float32.
#include <cuda_runtime.h>

#include "backends/cuda/elementwise/reduce_kernels.h"
#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/runtime/element_dispatch.cuh"
#include "backends/cuda/runtime/grid_loop.cuh"
#include "backends/cuda/layout/glue_kernels.h"
#include "backends/cuda/runtime/block_reduce.cuh"
#include "backends/cuda/runtime/launch.cuh"

namespace dnnx::cuda {

namespace {

__device__ __forceinline__ int64_t walk(int64_t i, const BroadcastDims& dims) {
  int64_t offset = 0;
  for (int d = dims.rank - 1; d >= 0; --d) {
    offset += i % dims.size[d] * dims.stride_a[d];
    i /= dims.size[d];
  }
  return offset;
}

template <class T>
__global__ void reduce_mean(const T* __restrict__ x, T* __restrict__ y, int64_t n, BroadcastDims out,
                            BroadcastDims red, int64_t count) {
  DNNX_GRID_LOOP(i, n) {
    const T* base = x + walk(i, out);
    float sum = 0.0f;
    for (int64_t j = 0; j < count; ++j) sum += float(base[walk(j, red)]);
    y[i] = T(sum / static_cast<float>(count));
  }
}

__device__ __forceinline__ float reduce_identity(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::Prod: return 1.0f;
    case ReduceKind::Max: return -INFINITY;
    case ReduceKind::Min: return INFINITY;
    default: return 0.0f;
  }
}

// What a cell's elements add up as they are read: |v| (L1), v² (L2, SumSquare), else v.
__device__ __forceinline__ float term(ReduceKind kind, float v) {
  switch (kind) {
    case ReduceKind::L1: return fabsf(v);
    case ReduceKind::L2:
    case ReduceKind::SumSquare: return v * v;
    default: return v;
  }
}

// The cell's value from its folded terms: sqrt (L2), log (LogSum), / count (Mean).
__device__ __forceinline__ float finish(ReduceKind kind, float acc, int64_t count) {
  if (kind == ReduceKind::L2) return sqrtf(acc);
  if (kind == ReduceKind::LogSum) return logf(acc);
  if (kind == ReduceKind::Mean) return acc / static_cast<float>(count);
  return acc;
}

__global__ void reduce_cells(ReduceKind kind, const float* __restrict__ x, float* __restrict__ y, int64_t n,
                             BroadcastDims out, BroadcastDims red, int64_t count) {
  DNNX_GRID_LOOP(i, n) {
    const float* base = x + walk(i, out);
    if (kind == ReduceKind::LogSumExp) {  // max + log(sum e^(x - max)); an infinite max is the answer (the CPU's)
      float top = -INFINITY;
      for (int64_t j = 0; j < count; ++j) top = fmaxf(top, base[walk(j, red)]);
      float sum = 0.0f;
      if (isfinite(top)) {
        for (int64_t j = 0; j < count; ++j) sum += expf(base[walk(j, red)] - top);
      }
      y[i] = isfinite(top) ? top + logf(sum) : top;
      continue;
    }
    float acc = reduce_identity(kind);
    for (int64_t j = 0; j < count; ++j) {
      const float v = base[walk(j, red)];
      switch (kind) {
        case ReduceKind::Max: acc = fmaxf(acc, v); break;
        case ReduceKind::Min: acc = fminf(acc, v); break;
        case ReduceKind::Prod: acc *= v; break;
        default: acc += term(kind, v); break;
      }
    }
    y[i] = finish(kind, acc, count);
  }
}

__device__ __forceinline__ float combine(ReduceKind kind, float acc, float v) {
  switch (kind) {
    case ReduceKind::Max: return fmaxf(acc, v);
    case ReduceKind::Min: return fminf(acc, v);
    case ReduceKind::Prod: return acc * v;
    default: return acc + v;  // Sum, Mean, L1, L2, SumSquare, LogSum (their terms taken as they are read)
  }
}

// Note [reduce by block]: a cell of many elements (count >= kBlockReduceMin) takes a block of
// kReduceThreads: each thread folds a strided share of the elements, the block folds the
// partials with warp shuffles (runtime/block_reduce.cuh, deterministic). One thread per cell
// left a few cells of many elements to a few threads: SSDlite's max over its 27,000 boxes
// (torchvision's batched NMS offsets) took 37 ms of an H100 run in one thread; a block per
// cell, 0.45 ms. A sum's order differs from the serial one (both within float rounding of the
// exact sum); max and min are exact either way.
__global__ void __launch_bounds__(kReduceThreads)
    reduce_cells_by_block(ReduceKind kind, const float* __restrict__ x, float* __restrict__ y, int64_t n,
                          BroadcastDims out, BroadcastDims red, int64_t count) {
  __shared__ float partial[kReduceThreads / kWarpSize];
  const auto op = [kind](float a, float b) { return combine(kind, a, b); };
  for (int64_t i = blockIdx.x; i < n; i += gridDim.x) {
    const float* base = x + walk(i, out);
    if (kind == ReduceKind::LogSumExp) {  // the block's max, then the sum of e^(x - max)
      float top = -INFINITY;
      for (int64_t j = threadIdx.x; j < count; j += blockDim.x) top = fmaxf(top, base[walk(j, red)]);
      top = block_max_all(top, partial);
      float sum = 0.0f;
      if (isfinite(top)) {
        for (int64_t j = threadIdx.x; j < count; j += blockDim.x) sum += expf(base[walk(j, red)] - top);
      }
      sum = block_sum_all(sum, partial);
      if (threadIdx.x == 0) y[i] = isfinite(top) ? top + logf(sum) : top;
      continue;
    }
    float acc = reduce_identity(kind);
    for (int64_t j = threadIdx.x; j < count; j += blockDim.x) acc = combine(kind, acc, term(kind, base[walk(j, red)]));
    const float r = block_reduce(acc, partial, op, reduce_identity(kind));
    if (threadIdx.x == 0) y[i] = finish(kind, r, count);
  }
}

template <class T>
__global__ void __launch_bounds__(kReduceThreads)
    reduce_mean_by_block(const T* __restrict__ x, T* __restrict__ y, int64_t n, BroadcastDims out, BroadcastDims red,
                         int64_t count) {
  __shared__ float partial[kReduceThreads / kWarpSize];
  for (int64_t i = blockIdx.x; i < n; i += gridDim.x) {
    const T* base = x + walk(i, out);
    float sum = 0.0f;
    for (int64_t j = threadIdx.x; j < count; j += blockDim.x) sum += float(base[walk(j, red)]);
    const float total = block_sum_all(sum, partial);
    if (threadIdx.x == 0) y[i] = T(total / static_cast<float>(count));
  }
}

unsigned cells_grid(int64_t n) { return static_cast<unsigned>(std::min<int64_t>(n, kMaxBlocks)); }

__global__ void reduce_cells_grad(ReduceKind kind, const float* __restrict__ x, const float* __restrict__ y,
                                  const float* __restrict__ dy, float* __restrict__ dx, int64_t n, BroadcastDims out,
                                  BroadcastDims red, int64_t count) {
  DNNX_GRID_LOOP(i, n) {
    const int64_t at = walk(i, out);
    const float* xc = x + at;
    float* dxc = dx + at;
    const float yi = y[i], g = dy[i];
    // Max / Min: the ties share g; Prod: the zeros and the product of the non-zeros.
    int64_t ties = 0, zeros = 0;
    float others = 1.0f;
    if (kind == ReduceKind::Max || kind == ReduceKind::Min || kind == ReduceKind::Prod) {
      for (int64_t j = 0; j < count; ++j) {
        const float v = xc[walk(j, red)];
        ties += v == yi;
        if (v == 0.0f) {
          ++zeros;
        } else {
          others *= v;
        }
      }
    }
    for (int64_t j = 0; j < count; ++j) {
      const int64_t k = walk(j, red);
      const float v = xc[k];
      float d = g;
      switch (kind) {
        case ReduceKind::Mean: d = g / static_cast<float>(count); break;
        case ReduceKind::L2: d = yi == 0.0f ? 0.0f : g * v / yi; break;
        case ReduceKind::L1: d = v > 0.0f ? g : v < 0.0f ? -g : 0.0f; break;  // the subgradient 0 at 0
        case ReduceKind::SumSquare: d = 2.0f * v * g; break;
        case ReduceKind::LogSum: d = g / expf(yi); break;                     // 1 / s, s = e^y
        case ReduceKind::LogSumExp: d = g * expf(v - yi); break;              // the cell's softmax
        case ReduceKind::Max:
        case ReduceKind::Min: d = v == yi ? g / static_cast<float>(ties) : 0.0f; break;
        case ReduceKind::Prod:
          d = zeros == 0 ? g * yi / v : (zeros == 1 && v == 0.0f ? g * others : 0.0f);
          break;
        default: break;
      }
      dxc[k] = d;
    }
  }
}

}  // namespace

void launch_reduce(ReduceKind kind, const float* x, float* y, int64_t n, const BroadcastDims& out,
                   const BroadcastDims& red, int64_t count, cudaStream_t stream) {
  if (n == 0) return;
  if (reduce_by_block(count)) {
    reduce_cells_by_block<<<cells_grid(n), kReduceThreads, 0, stream>>>(kind, x, y, n, out, red, count);
    check_launch("reduce kernel (a block per cell)");
    return;
  }
  reduce_cells<<<grid_for(n), kBlock, 0, stream>>>(kind, x, y, n, out, red, count);
  check_launch("reduce kernel");
}

void launch_reduce_grad(ReduceKind kind, const float* x, const float* y, const float* dy, float* dx, int64_t n,
                        const BroadcastDims& out, const BroadcastDims& red, int64_t count, cudaStream_t stream) {
  if (n == 0) return;
  reduce_cells_grad<<<grid_for(n), kBlock, 0, stream>>>(kind, x, y, dy, dx, n, out, red, count);
  check_launch("reduce gradient kernel");
}

void launch_reduce_mean(const void* x, void* y, int64_t n, const BroadcastDims& out, const BroadcastDims& red,
                        int64_t count, DType dtype, cudaStream_t stream) {
  if (n == 0) return;
  with_element(dtype, [&](auto e) {
    using T = decltype(e);
    if (reduce_by_block(count)) {
      reduce_mean_by_block<T><<<cells_grid(n), kReduceThreads, 0, stream>>>(static_cast<const T*>(x),
                                                                             static_cast<T*>(y), n, out, red, count);
      return;
    }
    reduce_mean<T><<<grid_for(n), kBlock, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), n, out, red,
                                                        count);
  });
  check_launch("reduce mean kernel");
}

}  // namespace dnnx::cuda
