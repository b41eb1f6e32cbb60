// QuantizeLinear's and DequantizeLinear's kernels (quant_kernels.h): one thread per element of x,
// grid-stride. The division, the rounding (rintf: half to even) and the saturation are the CPU
// codec's, written with __fdiv_rn and __fmul_rn so that the results are its bits.
#include <cstdint>
#include <limits>

#include "backends/cuda/quant/quant_kernels.h"
#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/runtime/grid_loop.cuh"
#include "backends/cuda/runtime/launch.cuh"

namespace dnnx::cuda {

namespace {

// QuantLayout's fields, passed by value to the kernels (QuantLayout::index is host code).
struct Layout {
  int granularity;  // 0 per tensor, 1 per axis, 2 blocked
  int64_t axis_len, inner, block_size, blocks;
};

Layout device_layout(const QuantLayout& l) {
  const int g = l.granularity == QuantGranularity::PerTensor ? 0 : l.granularity == QuantGranularity::PerAxis ? 1 : 2;
  return Layout{g, l.axis_len, l.inner, l.block_size, l.blocks};
}

// The parameter entry of x's element n = (o * axis_len + a) * inner + i (QuantLayout::index).
__device__ inline int64_t param_index(const Layout& l, int64_t n) {
  if (l.granularity == 0) return 0;
  const int64_t a = n / l.inner % l.axis_len;
  if (l.granularity == 1) return a;
  const int64_t o = n / (l.inner * l.axis_len), i = n % l.inner;
  return (o * l.blocks + a / l.block_size) * l.inner + i;
}

template <class X, class Q>
__global__ void quantize_kernel(const X* __restrict__ x, const float* __restrict__ scale, const Q* __restrict__ zp,
                                Q* __restrict__ y, int64_t n, Layout l, float lo, float hi) {
  DNNX_GRID_LOOP(e, n) {
    const int64_t k = param_index(l, e);
    const float v = __fdiv_rn(static_cast<float>(x[e]), scale[k]);
    const float r = rintf(v) + static_cast<float>(zp ? zp[k] : Q{0});
    y[e] = isnan(r) ? Q{0} : static_cast<Q>(fminf(fmaxf(r, lo), hi));
  }
}

template <class Q>
__global__ void dequantize_kernel(const Q* __restrict__ x, const float* __restrict__ scale, const Q* __restrict__ zp,
                                  float* __restrict__ y, int64_t n, Layout l) {
  DNNX_GRID_LOOP(e, n) {
    const int64_t k = param_index(l, e);
    const int64_t z = zp ? static_cast<int64_t>(zp[k]) : 0;
    y[e] = __fmul_rn(static_cast<float>(static_cast<int64_t>(x[e]) - z), scale[k]);
  }
}

// Calls run(Q{}) with Q the stored type of `type`.
template <class Run>
void with_int(QuantInt type, Run&& run) {
  switch (type) {
    case QuantInt::Int8: run(int8_t{}); break;
    case QuantInt::UInt8: run(uint8_t{}); break;
    case QuantInt::Int16: run(int16_t{}); break;
    case QuantInt::UInt16: run(uint16_t{}); break;
    case QuantInt::Int32: run(int32_t{}); break;
  }
}

}  // namespace

void launch_quantize(const void* x, bool x_int32, const float* scale, const void* zero_point, void* y, QuantInt type,
                     const QuantLayout& layout, cudaStream_t stream) {
  const int64_t n = layout.outer * layout.axis_len * layout.inner;
  if (n == 0) return;
  const Layout l = device_layout(layout);
  with_int(type, [&](auto q) {
    using Q = decltype(q);
    // Q's range, the saturation bounds (read on the host: numeric_limits is host code).
    const float lo = static_cast<float>(std::numeric_limits<Q>::min()), hi = static_cast<float>(std::numeric_limits<Q>::max());
    if (x_int32) {
      quantize_kernel<int32_t, Q><<<grid_for(n), kBlock, 0, stream>>>(
          static_cast<const int32_t*>(x), scale, static_cast<const Q*>(zero_point), static_cast<Q*>(y), n, l, lo, hi);
    } else {
      quantize_kernel<float, Q><<<grid_for(n), kBlock, 0, stream>>>(
          static_cast<const float*>(x), scale, static_cast<const Q*>(zero_point), static_cast<Q*>(y), n, l, lo, hi);
    }
  });
  check_launch("QuantizeLinear kernel");
}

void launch_dequantize(const void* x, const float* scale, const void* zero_point, float* y, QuantInt type,
                       const QuantLayout& layout, cudaStream_t stream) {
  const int64_t n = layout.outer * layout.axis_len * layout.inner;
  if (n == 0) return;
  const Layout l = device_layout(layout);
  with_int(type, [&](auto q) {
    using Q = decltype(q);
    dequantize_kernel<Q><<<grid_for(n), kBlock, 0, stream>>>(static_cast<const Q*>(x), scale,
                                                             static_cast<const Q*>(zero_point), y, n, l);
  });
  check_launch("DequantizeLinear kernel");
}

}  // namespace dnnx::cuda
