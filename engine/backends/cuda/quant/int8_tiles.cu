// The int8 conv's two layout-changing kernels (int8_kernels.h): the pre-kernel, X [N, C, H, W] to
// the padded channels-last xp [N, Hp, Wp, Cp], and the epilogue's NCHW form, sums [N*OH*OW, ld]
// to y [N, M, OH, OW]. The epilogue's arithmetic is int8_epilogue.cuh's.
//
// Note [int8 tiles]: both kernels transpose bytes between a pixel-major and a channel-major
// layout, and each moves ~360 MB for one ResNet-50 layer at batch 256 (1x1 conv 64->64 at 56x56).
// One thread per byte (the first form: 32 x 32 shared-memory tiles, a warp reading or writing 32
// bytes an instruction, int64 index math per byte) ran at 25-30% of an H100's bandwidth. Now
// each thread moves a block of 4-byte words and transposes it in registers (__byte_perm), no
// shared memory, with the lanes of a warp laid out so that every load and every store of the
// warp fills whole 32-byte sectors:
//   pre-kernel: a thread holds 8 pixels x 4 channels. It reads 8 bytes (one uint2 where aligned,
//     else two words) of each of its 4 channels along X's pixels, and writes each pixel's 4
//     channels as one word. A warp is 4 x 8 threads (pixels x channel quads: 32 pixels x 32
//     channels); a load covers 8 channels x 32 bytes, a store 4 pixels x 32 bytes. Fewer than 32
//     channels (cp 4 to 28) give the warp's lanes to pixels instead (lanes_c 1, 2 or 4).
//   epilogue: a thread holds 4 pixels x 4 channels of int32 sums. It reads each pixel's 4 sums
//     as one int4 along the sums' channels, and writes each channel's 4 pixels as one word
//     (uchar4; float4 for the float output; the residual z read the same way). A warp is 8 x 4
//     threads (32 pixels x 16 channels); a load covers 8 pixels x 64 bytes, a store 4 channels x
//     32 bytes (4 x 128 for floats).
// A block is 8 warps stacked along pixels and channels (warps_c / warps_m, chosen by the channel
// count so that narrow layers do not leave most lanes idle); it loops over tiles on both grid
// dims, so no dim meets CUDA's limits. Pixels are numbered over the whole batch (n * plane + p),
// not per image: a 7x7 plane would leave most of a per-image tile empty.
// Edges fall back to narrower accesses with the same values: a pre-kernel word whose 4 pixels
// are not 4 consecutive bytes of X (the padding's border, a row's end, the batch's end) is
// gathered byte by byte, zp where a pixel is padding; one that is consecutive but not 4-aligned
// (odd W, odd pads) is cut out of the two aligned words around it. An epilogue row whose 4
// channels are not 16-aligned (ld not a multiple of 4) reads scalars; 4 pixels that cross an
// image or are not 4-aligned in y (plane not a multiple of 4) are stored one by one.
// tests/test_int8_tile_index.py replays both kernels' index math on the host (a copy of it: keep
// the two in step); tests/cuda/test_cuda_int8.py's tile edges check the bits against the CPU.
#include <cstdint>
#include <string>

#include "backends/cuda/quant/int8_epilogue.cuh"
#include "backends/cuda/quant/int8_kernels.h"
#include "backends/cuda/runtime/cuda_check.h"
#include "ir/errors.h"

namespace dnnx::cuda {

namespace {

constexpr int kThreads = 256;            // 8 warps
constexpr int64_t kMaxGridX = 1 << 20;   // tiles past these loop
constexpr int64_t kMaxGridY = 65535;

template <int N>
__device__ inline bool aligned(const void* p) {
  return (reinterpret_cast<uintptr_t>(p) & (N - 1)) == 0;
}

// a / b and a % b, in 32 bits where both fit (a thread's one division a tile: int64 division is a
// long subroutine).
struct DivMod {
  int64_t q, r;
};
__device__ inline DivMod divmod(int64_t a, int64_t b) {
  if (((a | b) >> 31) == 0) {
    const auto a32 = static_cast<uint32_t>(a), b32 = static_cast<uint32_t>(b);
    return {a32 / b32, a32 % b32};
  }
  return {a / b, a % b};
}

__device__ inline uint32_t pack(uint32_t b0, uint32_t b1, uint32_t b2, uint32_t b3) {
  return b0 | b1 << 8 | b2 << 16 | b3 << 24;
}

// 4 consecutive bytes of X at a (all inside X, which ends at end) as one little-endian word: an
// aligned load, or the two aligned words around them, or (at X's ends) 4 byte loads.
__device__ inline uint32_t load_word(const uint8_t* a, const uint8_t* x, const uint8_t* end) {
  const int k = static_cast<int>(reinterpret_cast<uintptr_t>(a) & 3);
  if (k == 0) return __ldg(reinterpret_cast<const uint32_t*>(a));
  const uint8_t* a4 = a - k;
  if (a4 >= x && a4 + 8 <= end) {
    const auto* w = reinterpret_cast<const uint32_t*>(a4);
    return __byte_perm(__ldg(w), __ldg(w + 1), 0x3210 + 0x1111 * k);  // bytes k..k+3 of the pair
  }
  return pack(__ldg(a), __ldg(a + 1), __ldg(a + 2), __ldg(a + 3));
}

// The 4 x 4 byte transpose: v[i] holds channel i of pixels 0..3, o[j] gets pixel j of channels 0..3.
__device__ inline void transpose4(uint32_t v0, uint32_t v1, uint32_t v2, uint32_t v3, uint32_t (&o)[4]) {
  const uint32_t t0 = __byte_perm(v0, v1, 0x5140), t1 = __byte_perm(v0, v1, 0x7362);  // pixels 0,1 / 2,3 of ch 0,1
  const uint32_t t2 = __byte_perm(v2, v3, 0x5140), t3 = __byte_perm(v2, v3, 0x7362);  // the same of ch 2,3
  o[0] = __byte_perm(t0, t2, 0x5410);
  o[1] = __byte_perm(t0, t2, 0x7632);
  o[2] = __byte_perm(t1, t3, 0x5410);
  o[3] = __byte_perm(t1, t3, 0x7632);
}

// The pre-kernel (Note [int8 tiles]): a thread's 8 pixels q0..q0+7 of out (over n * hp * wp) and
// channels c4..c4+3. src[j]: pixel j's offset in X's channel 0, -1 in the padding (and past the
// batch's end, never stored).
__global__ void __launch_bounds__(kThreads)
    int8_nhwc_pad_kernel(const uint8_t* __restrict__ x, uint8_t flip, int8_t zp, NhwcPad s, int lanes_c_log2,
                         int warps_c, int8_t* __restrict__ out) {
  const int lane = static_cast<int>(threadIdx.x) & 31, warp = static_cast<int>(threadIdx.x) >> 5;
  const int lanes_c = 1 << lanes_c_log2, warp_pixels = 8 * (32 >> lanes_c_log2);
  const int tile_c = 4 * lanes_c * warps_c, tile_p = warp_pixels * (8 / warps_c);
  const int c_in_tile = (warp % warps_c) * 4 * lanes_c + (lane & (lanes_c - 1)) * 4;
  const int p_in_tile = (warp / warps_c) * warp_pixels + (lane >> lanes_c_log2) * 8;
  const int64_t plane = s.hp * s.wp, pixels = s.n * plane, hw = s.h * s.w;
  const uint8_t* end = x + s.n * s.c * hw;
  const uint32_t flip4 = flip * 0x01010101u;
  const int64_t p_tiles = (pixels + tile_p - 1) / tile_p, c_tiles = (s.cp + tile_c - 1) / tile_c;
  for (int64_t tp = blockIdx.x; tp < p_tiles; tp += gridDim.x) {
    const int64_t q0 = tp * tile_p + p_in_tile;
    if (q0 >= pixels) continue;
    int64_t src[8];
    const DivMod image = divmod(q0, plane), row = divmod(image.r, s.wp);
    int64_t n = image.q, oh = row.q, ow = row.r;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const int64_t h = oh - s.pad_h, w = ow - s.pad_w;
      src[j] = n < s.n && h >= 0 && h < s.h && w >= 0 && w < s.w ? n * s.c * hw + h * s.w + w : -1;
      if (++ow == s.wp) {
        ow = 0;
        if (++oh == s.hp) oh = 0, ++n;
      }
    }
    bool run[2];  // quad k's 4 pixels are 4 consecutive bytes of X
#pragma unroll
    for (int k = 0; k < 2; ++k) {
      run[k] = src[4 * k] >= 0 && src[4 * k + 1] == src[4 * k] + 1 && src[4 * k + 2] == src[4 * k] + 2 &&
               src[4 * k + 3] == src[4 * k] + 3;
    }
    const bool run8 = run[0] && run[1] && src[4] == src[0] + 4;
    for (int64_t tc = blockIdx.y; tc < c_tiles; tc += gridDim.y) {
      const int64_t c4 = tc * tile_c + c_in_tile;
      if (c4 >= s.cp) continue;
      uint32_t v[4][2];  // [channel i][quad k]: 4 pixels' bytes
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int64_t c = c4 + i;
        v[i][0] = v[i][1] = 0;  // the padded channels c >= C
        if (c >= s.c) continue;
        const uint8_t* xc = x + c * hw;
        if (run8 && aligned<8>(xc + src[0])) {
          const uint2 u = __ldg(reinterpret_cast<const uint2*>(xc + src[0]));
          v[i][0] = u.x ^ flip4;
          v[i][1] = u.y ^ flip4;
          continue;
        }
#pragma unroll
        for (int k = 0; k < 2; ++k) {
          if (run[k]) {
            v[i][k] = load_word(xc + src[4 * k], x, end) ^ flip4;
          } else {
            uint32_t b[4];
#pragma unroll
            for (int j = 0; j < 4; ++j) {
              const int64_t o = src[4 * k + j];
              b[j] = o >= 0 ? static_cast<uint32_t>(__ldg(xc + o) ^ flip) : static_cast<uint8_t>(zp);
            }
            v[i][k] = pack(b[0], b[1], b[2], b[3]);
          }
        }
      }
#pragma unroll
      for (int k = 0; k < 2; ++k) {
        uint32_t o[4];
        transpose4(v[0][k], v[1][k], v[2][k], v[3][k], o);
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const int64_t q = q0 + 4 * k + j;
          if (q < pixels) *reinterpret_cast<uint32_t*>(out + q * s.cp + c4) = o[j];
        }
      }
    }
  }
}

// y's 4 pixels e0..e0+3 of channel m (consecutive in y: the same image) from sums s[j][i].
__device__ inline void store_run(const Int8Epilogue& p, const int32_t (&s)[4][4], int i, int32_t ibias, float mult,
                                 float add, int64_t e0, void* y) {
  if (p.float_out) {
    float4 f;
    f.x = epilogue_float(p, epilogue_value(s[0][i], ibias, mult, add));
    f.y = epilogue_float(p, epilogue_value(s[1][i], ibias, mult, add));
    f.z = epilogue_float(p, epilogue_value(s[2][i], ibias, mult, add));
    f.w = epilogue_float(p, epilogue_value(s[3][i], ibias, mult, add));
    float* yf = static_cast<float*>(y) + e0;
    if (aligned<16>(yf)) {
      *reinterpret_cast<float4*>(yf) = f;
    } else {
      yf[0] = f.x, yf[1] = f.y, yf[2] = f.z, yf[3] = f.w;
    }
    return;
  }
  uint32_t z = 0;
  if (p.residual) {
    const uint8_t* zb = static_cast<const uint8_t*>(p.z) + e0;
    z = aligned<4>(zb) ? __ldg(reinterpret_cast<const uint32_t*>(zb))
                       : pack(__ldg(zb), __ldg(zb + 1), __ldg(zb + 2), __ldg(zb + 3));
  }
  uint32_t word = 0;
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const uint8_t b = epilogue_byte(p, epilogue_value(s[j][i], ibias, mult, add), static_cast<uint8_t>(z >> 8 * j));
    word |= static_cast<uint32_t>(b) << 8 * j;
  }
  uint8_t* yb = static_cast<uint8_t*>(y) + e0;
  if (aligned<4>(yb)) {
    *reinterpret_cast<uint32_t*>(yb) = word;
  } else {
#pragma unroll
    for (int j = 0; j < 4; ++j) yb[j] = static_cast<uint8_t>(word >> 8 * j);
  }
}

// The NCHW epilogue (Note [int8 tiles]): a thread's sums rows r0..r0+3 (pixels over the batch)
// and channels m0..m0+3.
__global__ void __launch_bounds__(kThreads)
    int8_epilogue_nchw_kernel(Int8Epilogue p, int warps_m, void* __restrict__ y) {
  const int lane = static_cast<int>(threadIdx.x) & 31, warp = static_cast<int>(threadIdx.x) >> 5;
  const int tile_m = 16 * warps_m, tile_q = 32 * (8 / warps_m);
  const int m_in_tile = (warp % warps_m) * 16 + (lane & 3) * 4, q_in_tile = (warp / warps_m) * 32 + (lane >> 2) * 4;
  const int64_t m_tiles = (p.channels + tile_m - 1) / tile_m, q_tiles = (p.rows + tile_q - 1) / tile_q;
  for (int64_t tm = blockIdx.y; tm < m_tiles; tm += gridDim.y) {
    const int64_t m0 = tm * tile_m + m_in_tile;
    if (m0 >= p.channels) continue;
    int32_t ibias[4];
    float mult[4], add[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const bool in = m0 + i < p.channels;
      ibias[i] = in ? p.ibias[m0 + i] : 0;
      mult[i] = in ? p.mult[m0 + i] : 0.0f;
      add[i] = in ? p.add[m0 + i] : 0.0f;
    }
    for (int64_t tq = blockIdx.x; tq < q_tiles; tq += gridDim.x) {
      const int64_t r0 = tq * tile_q + q_in_tile;
      if (r0 >= p.rows) continue;
      int32_t s[4][4] = {};  // [pixel j][channel i]
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        if (r0 + j >= p.rows) continue;
        const int32_t* row = p.sums + (r0 + j) * p.ld + m0;
        if (m0 + 4 <= p.ld && aligned<16>(row)) {
          const int4 u = __ldg(reinterpret_cast<const int4*>(row));
          s[j][0] = u.x, s[j][1] = u.y, s[j][2] = u.z, s[j][3] = u.w;
        } else {
#pragma unroll
          for (int i = 0; i < 4; ++i) s[j][i] = m0 + i < p.channels ? __ldg(row + i) : 0;
        }
      }
      const DivMod image = divmod(r0, p.plane);
      const int64_t n = image.q, q = image.r;
      const bool run = q + 4 <= p.plane;  // the 4 pixels are consecutive in y
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int64_t m = m0 + i;
        if (m >= p.channels) continue;
        if (run) {
          store_run(p, s, i, ibias[i], mult[i], add[i], (n * p.channels + m) * p.plane + q, y);
          continue;
        }
        int64_t nj = n, qj = q;  // pixel j's image and place in it
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          if (r0 + j < p.rows) epilogue_element(p, s[j][i], m, (nj * p.channels + m) * p.plane + qj, y);
          if (++qj == p.plane) qj = 0, ++nj;
        }
      }
    }
  }
}

unsigned grid_dim(int64_t tiles, int64_t most) { return static_cast<unsigned>(tiles < most ? tiles : most); }

}  // namespace

void launch_int8_nhwc_pad(const void* x, bool x_unsigned, int8_t zp, const NhwcPad& shape, int8_t* out,
                          cudaStream_t stream) {
  const int64_t pixels = shape.n * shape.hp * shape.wp;
  if (pixels * shape.cp <= 0) return;
  DNNX_CHECK(shape.cp % 4 == 0 && reinterpret_cast<uintptr_t>(out) % 4 == 0, DeviceError,
             "int8_nhwc_pad: the padded channels (" + std::to_string(shape.cp) +
                 ") must be a multiple of 4 and the output 4-byte aligned");
  // lanes_c channel quads a warp (1..8), warps_c warps across channels: a block's tile is 4
  // channels x 2048 pixels for cp 4, 8 x 1024 for cp 8, 16 x 512 for cp 12..28, 32 x 256 for
  // cp 32, 64 x 128 past that.
  const int64_t quads = shape.cp / 4;
  const int lanes_c_log2 = quads >= 8 ? 3 : quads >= 3 ? 2 : quads - 1;
  const int warps_c = quads > 8 ? 2 : 1;
  const int64_t tile_c = int64_t{4} << lanes_c_log2, tile_p = (int64_t{256} >> lanes_c_log2) * (8 / warps_c);
  const dim3 grid(grid_dim((pixels + tile_p - 1) / tile_p, kMaxGridX),
                  grid_dim((shape.cp + tile_c * warps_c - 1) / (tile_c * warps_c), kMaxGridY));
  int8_nhwc_pad_kernel<<<grid, kThreads, 0, stream>>>(static_cast<const uint8_t*>(x), x_unsigned ? 0x80 : 0, zp,
                                                      shape, lanes_c_log2, warps_c, out);
  check_launch("int8_nhwc_pad_kernel");
}

void launch_int8_epilogue_nchw(const Int8Epilogue& e, void* y, cudaStream_t stream) {
  if (e.rows * e.channels <= 0) return;
  const int warps_m = e.channels > 32 ? 4 : e.channels > 16 ? 2 : 1;  // tiles of 64, 32 or 16 channels
  const int64_t tile_m = 16 * warps_m, tile_q = 32 * (8 / warps_m);
  const dim3 grid(grid_dim((e.rows + tile_q - 1) / tile_q, kMaxGridX),
                  grid_dim((e.channels + tile_m - 1) / tile_m, kMaxGridY));
  int8_epilogue_nchw_kernel<<<grid, kThreads, 0, stream>>>(e, warps_m, y);
  check_launch("int8_epilogue_nchw_kernel");
}

}  // namespace dnnx::cuda
