// The strided gather behind Transpose, Slice, Expand (and Gemm's broadcast of C): each output
// element reads the input at the offset its index maps to, one thread per element, moved as an
// unsigned integer of the element's width; a batch of 2-D transposes through shared-memory tiles
// (Note [transposed by tiles]).
//
// Note [transposed by tiles]: a layout conversion (NCHW <-> NHWC: y [B, R, C] = x [B, C, R]
// transposed) read one element a thread at a stride of R or C elements, so each warp's loads
// touched 32 cache lines for 128 useful bytes: DenseNet-121's conversions at its channels-last
// regions' edges took 6.6 ms in 122 launches at tf32, batch 64 (H100, RESULTS_CUDA.md session 12).
// Where the merged dims are exactly that pattern, R and C at least kTileMin, a block moves a 32x32
// tile: it reads 32 rows of x along R (whole cache lines), and writes 32 rows of y along C from
// shared memory. The other gathers index in 32 bits where the output has fewer than 2^31
// elements (a 64-bit division per dim cost more than the load). The bytes moved are the same.
#include <algorithm>
#include <cstdint>

#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/layout/glue_kernels.h"
#include "backends/cuda/runtime/launch.cuh"

namespace dnnx::cuda {

namespace {

constexpr int kTile = 32;
constexpr int kTileRows = 8;     // a block: 32 x 8 threads, each moving 4 elements of its tile
constexpr int64_t kTileMin = 16;  // narrower matrices keep the gather (most of a tile would idle)
constexpr int64_t kMaxGridYZ = 65535;

template <class T, class Index>
__global__ void gather(const T* __restrict__ x, T* __restrict__ y, Index n, int rank, BroadcastDims dims) {
  for (Index i = blockIdx.x * Index(blockDim.x) + threadIdx.x; i < n; i += Index(gridDim.x) * blockDim.x) {
    Index rest = i, offset = 0;
    for (int d = rank - 1; d >= 0; --d) {  // dims stays in the parameter space: no local copy
      const Index size = Index(dims.size[d]);
      offset += rest % size * Index(dims.stride_a[d]);
      rest /= size;
    }
    y[i] = x[offset];
  }
}

// y [batches, rows, cols] = x [batches, cols, rows] transposed, by 32x32 tiles: tile (blockIdx.x,
// blockIdx.y) holds rows [32 bx, +32) and cols [32 by, +32) of y.
template <class T>
__global__ void transpose_tiles(const T* __restrict__ x, T* __restrict__ y, int64_t batches, int64_t rows,
                                int64_t cols) {
  __shared__ T tile[kTile][kTile + 1];  // +1: the column reads fall in different banks
  const int64_t r0 = int64_t{blockIdx.x} * kTile, c0 = int64_t{blockIdx.y} * kTile;
  for (int64_t b = blockIdx.z; b < batches; b += gridDim.z) {
    const T* xb = x + b * rows * cols;
    T* yb = y + b * rows * cols;
    for (int j = threadIdx.y; j < kTile; j += kTileRows) {  // x's rows c0 + j, along R
      const int64_t c = c0 + j, r = r0 + threadIdx.x;
      if (c < cols && r < rows) tile[j][threadIdx.x] = xb[c * rows + r];
    }
    __syncthreads();
    for (int j = threadIdx.y; j < kTile; j += kTileRows) {  // y's rows r0 + j, along C
      const int64_t r = r0 + j, c = c0 + threadIdx.x;
      if (r < rows && c < cols) yb[r * cols + c] = tile[threadIdx.x][j];
    }
    __syncthreads();
  }
}

// Whether dims are y [B, R, C] (or [R, C]) reading x [B, C, R] (or [C, R]): B, R, C out.
bool batched_transpose(const BroadcastDims& dims, int64_t& batches, int64_t& rows, int64_t& cols) {
  const int r = dims.rank;
  if (r != 2 && r != 3) return false;
  const int64_t R = dims.size[r - 2], C = dims.size[r - 1];
  if (dims.stride_a[r - 2] != 1 || dims.stride_a[r - 1] != R) return false;
  if (r == 3 && dims.stride_a[0] != R * C) return false;
  batches = r == 3 ? dims.size[0] : 1, rows = R, cols = C;
  return true;
}

template <class T>
void launch(const void* x, void* y, int64_t n, const BroadcastDims& dims, cudaStream_t stream) {
  const T* tx = static_cast<const T*>(x);
  T* ty = static_cast<T*>(y);
  int64_t batches = 0, rows = 0, cols = 0;
  if (batched_transpose(dims, batches, rows, cols) && rows >= kTileMin && cols >= kTileMin &&
      (cols + kTile - 1) / kTile <= kMaxGridYZ) {  // Note [transposed by tiles]
    const dim3 grid(static_cast<unsigned>((rows + kTile - 1) / kTile), static_cast<unsigned>((cols + kTile - 1) / kTile),
                    static_cast<unsigned>(std::min(batches, kMaxGridYZ)));
    transpose_tiles<T><<<grid, dim3(kTile, kTileRows), 0, stream>>>(tx, ty, batches, rows, cols);
    return;
  }
  if (n < (int64_t{1} << 31)) {
    gather<T, int32_t><<<grid_for(n), kBlock, 0, stream>>>(tx, ty, static_cast<int32_t>(n), dims.rank, dims);
  } else {
    gather<T, int64_t><<<grid_for(n), kBlock, 0, stream>>>(tx, ty, n, dims.rank, dims);
  }
}

}  // namespace

void launch_gather(const void* x, void* y, size_t elem, int64_t n, const BroadcastDims& dims,
                   cudaStream_t stream) {
  if (n == 0) return;
  switch (elem) {
    case 1: launch<uint8_t>(x, y, n, dims, stream); break;
    case 2: launch<uint16_t>(x, y, n, dims, stream); break;
    case 4: launch<uint32_t>(x, y, n, dims, stream); break;
    case 8: launch<uint64_t>(x, y, n, dims, stream); break;
    default: throw DeviceError("gather kernel: element size " + std::to_string(elem) + " is not supported");
  }
  check_launch("gather kernel");
}

}  // namespace dnnx::cuda
