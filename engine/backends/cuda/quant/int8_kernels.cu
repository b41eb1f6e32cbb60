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

}  // namespace

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
  int8_epilogue_rows_kernel<<<grid_for(n), kBlock, 0, stream>>>(e, y);
  check_launch("int8_epilogue_rows_kernel");
}

}  // namespace dnnx::cuda
