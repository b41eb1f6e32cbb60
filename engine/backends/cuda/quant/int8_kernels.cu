// The fused int8 layers' row-major pre- and epilogue kernels (int8_kernels.h): one thread per
// element, grid-stride. The layout-changing ones of the conv are int8_tiles.cu's (Note [int8
// tiles]); both epilogues do the arithmetic of int8_epilogue.cuh.
#include <cstdint>

#include "backends/cuda/quant/int8_epilogue.cuh"
#include "backends/cuda/quant/int8_kernels.h"
#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/runtime/grid_loop.cuh"
#include "backends/cuda/runtime/launch.cuh"

namespace dnnx::cuda {

namespace {

// x' of Note [int8 on tensor cores]: a uint8 byte minus 128 is the byte with its top bit flipped.
__global__ void int8_rows_kernel(const uint8_t* __restrict__ x, uint8_t flip, int64_t rows, int64_t k, int64_t k_pad,
                                 int8_t* __restrict__ out) {
  DNNX_GRID_LOOP(e, rows * k_pad) {
    const int64_t r = e / k_pad, c = e % k_pad;
    out[e] = c < k ? static_cast<int8_t>(x[r * k + c] ^ flip) : int8_t{0};
  }
}

// y [rows, channels] row-major (plane 0): the sums' rows in y's order, one thread per element.
__global__ void int8_epilogue_rows_kernel(Int8Epilogue p, void* __restrict__ y) {
  DNNX_GRID_LOOP(e, p.rows * p.channels) {
    const int64_t r = e / p.channels, m = e % p.channels;
    epilogue_element(p, p.sums[r * p.ld + m], m, e, y);
  }
}

// The same, 4 channels a thread: one int4 of sums, one float4 or 4-byte store (and the residual's
// 4 bytes read as one word). channels and ld multiples of 4; sums 16-byte, y (float: 16-byte) and
// z 4-byte aligned (launch_int8_epilogue checks).
__global__ void int8_epilogue_rows4_kernel(Int8Epilogue p, void* __restrict__ y) {
  const int64_t quads = p.channels / 4;
  DNNX_GRID_LOOP(e4, p.rows * quads) {
    const int64_t r = e4 / quads, m = (e4 - r * quads) * 4, e = r * p.channels + m;
    const int4 s = *reinterpret_cast<const int4*>(p.sums + r * p.ld + m);
    const int32_t sums[4] = {s.x, s.y, s.z, s.w};
    float v[4];
    for (int i = 0; i < 4; ++i) v[i] = epilogue_value(sums[i], p.ibias[m + i], p.mult[m + i], p.add[m + i]);
    if (p.float_out) {
      *reinterpret_cast<float4*>(static_cast<float*>(y) + e) =
          make_float4(epilogue_float(p, v[0]), epilogue_float(p, v[1]), epilogue_float(p, v[2]), epilogue_float(p, v[3]));
      continue;
    }
    const uint32_t z = p.residual ? *reinterpret_cast<const uint32_t*>(static_cast<const uint8_t*>(p.z) + e) : 0u;
    uint32_t word = 0;
    for (int i = 0; i < 4; ++i) {
      word |= static_cast<uint32_t>(epilogue_byte(p, v[i], static_cast<uint8_t>(z >> (8 * i)))) << (8 * i);
    }
    *reinterpret_cast<uint32_t*>(static_cast<uint8_t*>(y) + e) = word;
  }
}

// Int8Conv@NHWC's padded operand (int8_kernels.h): one thread per output word (4 channels).
__global__ void int8_nhwc_repad_kernel(const uint32_t* __restrict__ x, uint32_t flip, uint32_t zp_word, NhwcPad s,
                                       uint32_t* __restrict__ out) {
  const int64_t words = s.c / 4;
  DNNX_GRID_LOOP(o, s.n * s.hp * s.wp * words) {
    int64_t rest = o / words;
    const int64_t c4 = o - rest * words;
    const int64_t wp = rest % s.wp;
    rest /= s.wp;
    const int64_t hp = rest % s.hp, n = rest / s.hp;
    const int64_t h = hp - s.pad_h, w = wp - s.pad_w;
    out[o] = (h >= 0 && h < s.h && w >= 0 && w < s.w) ? (x[((n * s.h + h) * s.w + w) * words + c4] ^ flip) : zp_word;
  }
}

bool aligned_to(const void* p, uintptr_t bytes) { return (reinterpret_cast<uintptr_t>(p) & (bytes - 1)) == 0; }

}  // namespace

void launch_int8_nhwc_repad(const void* x, bool x_unsigned, int8_t zp, const NhwcPad& shape, int8_t* out,
                            cudaStream_t stream) {
  const int64_t n = shape.n * shape.hp * shape.wp * (shape.c / 4);
  if (n <= 0) return;
  const uint32_t zp_byte = static_cast<uint8_t>(zp);
  int8_nhwc_repad_kernel<<<grid_for(n), kBlock, 0, stream>>>(static_cast<const uint32_t*>(x),
                                                             x_unsigned ? 0x80808080u : 0u, zp_byte * 0x01010101u,
                                                             shape, reinterpret_cast<uint32_t*>(out));
  check_launch("int8_nhwc_repad_kernel");
}

void launch_int8_rows(const void* x, bool x_unsigned, int64_t rows, int64_t k, int64_t k_pad, int8_t* out,
                      cudaStream_t stream) {
  const int64_t n = rows * k_pad;
  if (n <= 0) return;
  int8_rows_kernel<<<grid_for(n), kBlock, 0, stream>>>(static_cast<const uint8_t*>(x), x_unsigned ? 0x80 : 0, rows, k,
                                                       k_pad, out);
  check_launch("int8_rows_kernel");
}

void launch_int8_epilogue(const Int8Epilogue& e, void* y, cudaStream_t stream) {
  const int64_t n = e.rows * e.channels;
  if (n <= 0) return;
  if (e.plane > 0) {
    launch_int8_epilogue_nchw(e, y, stream);
    return;
  }
  const bool quads = e.channels % 4 == 0 && e.ld % 4 == 0 && aligned_to(e.sums, 16) &&
                     aligned_to(y, e.float_out ? 16 : 4) && (!e.residual || aligned_to(e.z, 4));
  if (quads) {
    int8_epilogue_rows4_kernel<<<grid_for(n / 4), kBlock, 0, stream>>>(e, y);
    check_launch("int8_epilogue_rows4_kernel");
    return;
  }
  int8_epilogue_rows_kernel<<<grid_for(n), kBlock, 0, stream>>>(e, y);
  check_launch("int8_epilogue_rows_kernel");
}

}  // namespace dnnx::cuda
