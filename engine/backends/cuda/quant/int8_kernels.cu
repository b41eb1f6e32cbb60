// The fused int8 layers' pre- and epilogue kernels (int8_kernels.h): one thread per element,
// grid-stride. The epilogue's float steps are written with __fmul_rn / __fadd_rn (never
// contracted into an FMA: onnxruntime and the CPU kernel round the product and the sum apart)
// and __float2int_rn (round half to even, as nearbyint and cvtps2dq in the CPU's forms).
#include <cstdint>

#include "backends/cuda/quant/int8_kernels.h"
#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/runtime/grid_loop.cuh"
#include "backends/cuda/runtime/launch.cuh"

namespace dnnx::cuda {

namespace {

// x' of Note [int8 on tensor cores]: a uint8 byte minus 128 is the byte with its top bit flipped.
__device__ inline int8_t signed_byte(const uint8_t* x, int64_t i, uint8_t flip) {
  return static_cast<int8_t>(x[i] ^ flip);
}

__global__ void int8_rows_kernel(const uint8_t* __restrict__ x, uint8_t flip, int64_t rows, int64_t k, int64_t k_pad,
                                 int8_t* __restrict__ out) {
  DNNX_GRID_LOOP(e, rows * k_pad) {
    const int64_t r = e / k_pad, c = e % k_pad;
    out[e] = c < k ? signed_byte(x, r * k + c, flip) : int8_t{0};
  }
}

__global__ void int8_nhwc_pad_kernel(const uint8_t* __restrict__ x, uint8_t flip, int8_t zp, NhwcPad s,
                                     int8_t* __restrict__ out) {
  DNNX_GRID_LOOP(e, s.n * s.hp * s.wp * s.cp) {
    // e = ((n * hp + oh) * wp + ow) * cp + c
    const int64_t c = e % s.cp, ow = e / s.cp % s.wp, oh = e / (s.cp * s.wp) % s.hp, n = e / (s.cp * s.wp * s.hp);
    const int64_t h = oh - s.pad_h, w = ow - s.pad_w;
    int8_t v = 0;
    if (c < s.c) {
      const bool inside = h >= 0 && h < s.h && w >= 0 && w < s.w;
      v = inside ? signed_byte(x, ((n * s.c + c) * s.h + h) * s.w + w, flip) : zp;
    }
    out[e] = v;
  }
}

__device__ inline int32_t clamp_round(float v, int32_t lo, int32_t hi) {
  return __float2int_rn(fminf(fmaxf(v, static_cast<float>(lo)), static_cast<float>(hi)));
}

__global__ void int8_epilogue_kernel(Int8Epilogue p, void* __restrict__ y) {
  DNNX_GRID_LOOP(e, p.rows * p.channels) {
    // y's element e -> its row r of the sums and its channel m
    int64_t r = 0, m = 0;
    if (p.plane > 0) {  // y [N, channels, plane]: e = (n * channels + m) * plane + q, r = n * plane + q
      const int64_t q = e % p.plane, nm = e / p.plane;
      m = nm % p.channels;
      r = nm / p.channels * p.plane + q;
    } else {  // y [rows, channels]
      r = e / p.channels;
      m = e % p.channels;
    }
    const auto a = static_cast<int32_t>(static_cast<uint32_t>(p.sums[r * p.ld + m]) + static_cast<uint32_t>(p.ibias[m]));
    const float v = __fadd_rn(__fmul_rn(__int2float_rn(a), p.mult[m]), p.add[m]);
    if (p.float_out) {
      static_cast<float*>(y)[e] = p.relu && !(v > 0.0f) ? 0.0f : v;
      continue;
    }
    int32_t q = 0;
    if (!p.residual) {
      q = clamp_round(v, p.y_lo - p.y_zp, p.y_hi - p.y_zp) + p.y_zp;
    } else {
      const int32_t rq = clamp_round(v, p.r_lo - p.r_zp, p.r_hi - p.r_zp);  // r - r_zp
      const int32_t zq = (p.z_signed ? static_cast<int32_t>(static_cast<const int8_t*>(p.z)[e])
                                     : static_cast<int32_t>(static_cast<const uint8_t*>(p.z)[e])) -
                         p.z_zp;
      const float sum = __fadd_rn(__fmul_rn(p.r_ratio, __int2float_rn(rq)), __fmul_rn(p.z_ratio, __int2float_rn(zq)));
      q = clamp_round(__fadd_rn(sum, static_cast<float>(p.y_zp)), p.y_lo, p.y_hi);
    }
    static_cast<uint8_t*>(y)[e] = static_cast<uint8_t>(q);  // int8 and uint8: the low byte
  }
}

}  // namespace

void launch_int8_rows(const void* x, bool x_unsigned, int64_t rows, int64_t k, int64_t k_pad, int8_t* out,
                      cudaStream_t stream) {
  const int64_t n = rows * k_pad;
  if (n <= 0) return;
  int8_rows_kernel<<<grid_for(n), kBlock, 0, stream>>>(static_cast<const uint8_t*>(x), x_unsigned ? 0x80 : 0, rows, k,
                                                       k_pad, out);
  check_launch("int8_rows_kernel");
}

void launch_int8_nhwc_pad(const void* x, bool x_unsigned, int8_t zp, const NhwcPad& shape, int8_t* out,
                          cudaStream_t stream) {
  const int64_t n = shape.n * shape.hp * shape.wp * shape.cp;
  if (n <= 0) return;
  int8_nhwc_pad_kernel<<<grid_for(n), kBlock, 0, stream>>>(static_cast<const uint8_t*>(x), x_unsigned ? 0x80 : 0, zp,
                                                           shape, out);
  check_launch("int8_nhwc_pad_kernel");
}

void launch_int8_epilogue(const Int8Epilogue& e, void* y, cudaStream_t stream) {
  const int64_t n = e.rows * e.channels;
  if (n <= 0) return;
  int8_epilogue_kernel<<<grid_for(n), kBlock, 0, stream>>>(e, y);
  check_launch("int8_epilogue_kernel");
}

}  // namespace dnnx::cuda
