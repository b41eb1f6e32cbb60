// Block-wide reductions for the row kernels (one block per row: the normalizations, the
// attention softmax). blockDim.x a multiple of 32, at most 1024; every thread of the block must
// call, and every thread gets the same total. `shared`: at least blockDim.x / 32 floats, reused
// by the next call (each call ends with a barrier). Warp shuffles in a fixed order: the result
// does not depend on timing (deterministic).
#pragma once

namespace dnnx::cuda {

constexpr int kWarpSize = 32;

template <class Op>
__device__ float block_reduce(float v, float* shared, Op op, float identity) {
  const int lane = threadIdx.x % kWarpSize, warp = threadIdx.x / kWarpSize;
  for (int o = kWarpSize / 2; o > 0; o /= 2) v = op(v, __shfl_down_sync(0xffffffffu, v, o));
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < static_cast<int>(blockDim.x / kWarpSize) ? shared[lane] : identity;
    for (int o = kWarpSize / 2; o > 0; o /= 2) v = op(v, __shfl_down_sync(0xffffffffu, v, o));
    if (lane == 0) shared[0] = v;
  }
  __syncthreads();
  const float total = shared[0];
  __syncthreads();
  return total;
}

struct SumOp {
  __device__ float operator()(float a, float b) const { return a + b; }
};
struct MaxOp {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

__device__ inline float block_sum_all(float v, float* shared) { return block_reduce(v, shared, SumOp{}, 0.0f); }
__device__ inline float block_max_all(float v, float* shared) {
  return block_reduce(v, shared, MaxOp{}, -__int_as_float(0x7f800000));
}

}  // namespace dnnx::cuda
