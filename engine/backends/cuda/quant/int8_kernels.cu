// The fused int8 layers' pre- and epilogue kernels (int8_kernels.h): the row-major ones one
// thread per element, grid-stride; the layout-changing ones through tiles (Note [int8 tiles]).
// The epilogue's float steps are written with __fmul_rn / __fadd_rn (never contracted into an
// FMA: onnxruntime and the CPU kernel round the product and the sum apart) and __float2int_rn
// (round half to even, as nearbyint and cvtps2dq in the CPU's forms).
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

// Note [int8 tiles]: the pre-kernel and the conv's epilogue change the layout (NCHW X to the padded
// channels-last copy; channels-last sums to NCHW Y), so one thread per output element reads its
// input with a stride of a plane (the pre-kernel) or of a row of channels (the epilogue): every
// load its own memory transaction. On an H100 that made ResNet-50's int8 layers slower than its
// fp32 ones (73 ms at batch 256 against 49). Both go through a 32 x 32 tile in shared memory
// instead: read along the input's contiguous dim, written along the output's, 32 x 8 threads a
// block. The values and the arithmetic are the same as one thread per element.
constexpr int kTile = 32, kTileRows = 8;

// grid (ceil(wp / 32), ceil(cp / 32), up to n * hp rows of out, looping past gridDim.z)
__global__ void __launch_bounds__(kTile * kTileRows)
    int8_nhwc_pad_kernel(const uint8_t* __restrict__ x, uint8_t flip, int8_t zp, NhwcPad s, int8_t* __restrict__ out) {
  __shared__ int8_t tile[kTile][kTile + 4];  // [c][w]; rows of 36 bytes: column reads hit 32 banks
  const int64_t w0 = int64_t{blockIdx.x} * kTile, c0 = int64_t{blockIdx.y} * kTile;
  for (int64_t row = blockIdx.z; row < s.n * s.hp; row += gridDim.z) {
    const int64_t n = row / s.hp, oh = row % s.hp, h = oh - s.pad_h;
    const int64_t ow = w0 + threadIdx.x, w = ow - s.pad_w;
    for (int j = threadIdx.y; j < kTile; j += kTileRows) {  // read along X's W
      const int64_t c = c0 + j;
      int8_t v = 0;  // the padded channels c >= C
      if (c < s.c) {
        const bool inside = h >= 0 && h < s.h && w >= 0 && w < s.w;
        v = inside ? signed_byte(x, ((n * s.c + c) * s.h + h) * s.w + w, flip) : zp;
      }
      tile[j][threadIdx.x] = v;
    }
    __syncthreads();
    const int64_t c = c0 + threadIdx.x;
    for (int j = threadIdx.y; j < kTile; j += kTileRows) {  // write along out's C
      const int64_t ow_j = w0 + j;
      if (ow_j < s.wp && c < s.cp) out[(row * s.wp + ow_j) * s.cp + c] = tile[threadIdx.x][j];
    }
    __syncthreads();  // the tile is read before the next row fills it
  }
}

__device__ inline int32_t clamp_round(float v, int32_t lo, int32_t hi) {
  return __float2int_rn(fminf(fmaxf(v, static_cast<float>(lo)), static_cast<float>(hi)));
}

// y's element e (channel m) from its int32 sum: Int8Epilogue's arithmetic (int8_kernels.h).
__device__ inline void epilogue_element(const Int8Epilogue& p, int32_t sum, int64_t m, int64_t e, void* y) {
  const auto a = static_cast<int32_t>(static_cast<uint32_t>(sum) + static_cast<uint32_t>(p.ibias[m]));
  const float v = __fadd_rn(__fmul_rn(__int2float_rn(a), p.mult[m]), p.add[m]);
  if (p.float_out) {
    static_cast<float*>(y)[e] = p.relu && !(v > 0.0f) ? 0.0f : v;
    return;
  }
  int32_t q = 0;
  if (!p.residual) {
    q = clamp_round(v, p.y_lo - p.y_zp, p.y_hi - p.y_zp) + p.y_zp;
  } else {
    const int32_t rq = clamp_round(v, p.r_lo - p.r_zp, p.r_hi - p.r_zp);  // r - r_zp
    const int32_t zq = (p.z_signed ? static_cast<int32_t>(static_cast<const int8_t*>(p.z)[e])
                                   : static_cast<int32_t>(static_cast<const uint8_t*>(p.z)[e])) -
                       p.z_zp;
    const float sum_f = __fadd_rn(__fmul_rn(p.r_ratio, __int2float_rn(rq)), __fmul_rn(p.z_ratio, __int2float_rn(zq)));
    q = clamp_round(__fadd_rn(sum_f, static_cast<float>(p.y_zp)), p.y_lo, p.y_hi);
  }
  static_cast<uint8_t*>(y)[e] = static_cast<uint8_t>(q);  // int8 and uint8: the low byte
}

// y [rows, channels] row-major (plane 0): the sums' rows in y's order, one thread per element.
__global__ void int8_epilogue_rows_kernel(Int8Epilogue p, void* __restrict__ y) {
  DNNX_GRID_LOOP(e, p.rows * p.channels) {
    const int64_t r = e / p.channels, m = e % p.channels;
    epilogue_element(p, p.sums[r * p.ld + m], m, e, y);
  }
}

// y [N, channels, plane] (NCHW) from channels-last sums, through a tile (Note [int8 tiles]):
// grid (ceil(plane / 32), ceil(channels / 32), up to N images, looping past gridDim.z).
__global__ void __launch_bounds__(kTile * kTileRows) int8_epilogue_nchw_kernel(Int8Epilogue p, void* __restrict__ y) {
  __shared__ int32_t tile[kTile][kTile + 1];  // [pixel][channel]
  const int64_t q0 = int64_t{blockIdx.x} * kTile, m0 = int64_t{blockIdx.y} * kTile;
  const int64_t images = p.rows / p.plane;
  for (int64_t n = blockIdx.z; n < images; n += gridDim.z) {
    const int64_t m_read = m0 + threadIdx.x;
    for (int j = threadIdx.y; j < kTile; j += kTileRows) {  // read along the sums' channels
      const int64_t q = q0 + j;
      if (q < p.plane && m_read < p.channels) tile[j][threadIdx.x] = p.sums[(n * p.plane + q) * p.ld + m_read];
    }
    __syncthreads();
    const int64_t q = q0 + threadIdx.x;
    for (int j = threadIdx.y; j < kTile; j += kTileRows) {  // write along y's pixels
      const int64_t m = m0 + j;
      if (q < p.plane && m < p.channels) epilogue_element(p, tile[threadIdx.x][j], m, (n * p.channels + m) * p.plane + q, y);
    }
    __syncthreads();
  }
}

// A grid dim of `count` tiles, and the z extent of one looping over `rows` (CUDA's limit 65535).
unsigned tiles(int64_t count) { return static_cast<unsigned>((count + kTile - 1) / kTile); }
unsigned z_extent(int64_t rows) { return static_cast<unsigned>(rows < 65535 ? rows : 65535); }

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
  if (shape.n * shape.hp * shape.wp * shape.cp <= 0) return;
  const dim3 grid(tiles(shape.wp), tiles(shape.cp), z_extent(shape.n * shape.hp)), block(kTile, kTileRows);
  int8_nhwc_pad_kernel<<<grid, block, 0, stream>>>(static_cast<const uint8_t*>(x), x_unsigned ? 0x80 : 0, zp, shape,
                                                   out);
  check_launch("int8_nhwc_pad_kernel");
}

void launch_int8_epilogue(const Int8Epilogue& e, void* y, cudaStream_t stream) {
  const int64_t n = e.rows * e.channels;
  if (n <= 0) return;
  if (e.plane > 0) {
    const dim3 grid(tiles(e.plane), tiles(e.channels), z_extent(e.rows / e.plane)), block(kTile, kTileRows);
    int8_epilogue_nchw_kernel<<<grid, block, 0, stream>>>(e, y);
  } else {
    int8_epilogue_rows_kernel<<<grid_for(n), kBlock, 0, stream>>>(e, y);
  }
  check_launch("int8_epilogue_kernel");
}

}  // namespace dnnx::cuda
