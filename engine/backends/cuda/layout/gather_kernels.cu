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
// shared memory. The other gathers index in 32 bits where every output index and input offset
// fits (a 64-bit division per dim cost more than the load). The bytes moved are the same.
//
// Note [gathers by wide units]: ShuffleNetV2's channels-last halves (Slices of the last axis:
// 58 fp16 channels of 116, and so on) and its channel shuffles (the last two axes of [P, 2, C/2]
// swapped) went through the gather one 2-byte element a thread, with one 32-bit division per
// output dim: 0.71 ms of its 1.84 ms at fp16, batch 64 (H100, RESULTS_CUDA.md session 18), about
// 10x the time their bytes take (0.35 ms after this note, session 19). Before it picks a kernel,
// launch_gather now (1) drops size-1 dims and merges neighbours that stay neighbours in x (a
// Slice of [N, H, W, C]'s last axis is a [N*H*W, c] gather); (2) where the innermost dim reads x
// contiguously, moves units of 16, 8 or 4 bytes (the row length, every stride and both pointers
// permitting): a copy of a contiguous range is a cudaMemcpyAsync; (3) where the innermost dim is
// short and strided (the shuffle's 2), gives a thread the whole group, written as one 4-, 8- or
// 16-byte store.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>

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

// A short strided innermost dim as one store (Note [gathers by wide units]): output group i
// (G elements, one aligned unit) reads its first element where the outer rank-1 dims map i, then
// G elements `step` apart.
template <class T, int G>
struct alignas(sizeof(T) * G) Group {
  T v[G];
};

template <class T, int G, class Index>
__global__ void gather_groups(const T* __restrict__ x, Group<T, G>* __restrict__ y, Index groups, int rank,
                              BroadcastDims dims) {
  const Index step = Index(dims.stride_a[rank - 1]);
  for (Index i = blockIdx.x * Index(blockDim.x) + threadIdx.x; i < groups; i += Index(gridDim.x) * blockDim.x) {
    Index rest = i, offset = 0;
    for (int d = rank - 2; d >= 0; --d) {
      const Index size = Index(dims.size[d]);
      offset += rest % size * Index(dims.stride_a[d]);
      rest /= size;
    }
    Group<T, G> g;
#pragma unroll
    for (int j = 0; j < G; ++j) g.v[j] = x[offset + j * step];
    y[i] = g;
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

// Whether every output index and every input offset of dims fits in 32 bits (a Slice with a
// negative step walks x backwards from its start: the offsets' magnitudes count).
bool fits_int32(int64_t n, const BroadcastDims& dims) {
  int64_t reach = 0;
  for (int d = 0; d < dims.rank; ++d) reach += (dims.size[d] - 1) * std::llabs(dims.stride_a[d]);
  return n < (int64_t{1} << 31) && reach < (int64_t{1} << 31);
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
  if (fits_int32(n, dims)) {
    gather<T, int32_t><<<grid_for(n), kBlock, 0, stream>>>(tx, ty, static_cast<int32_t>(n), dims.rank, dims);
  } else {
    gather<T, int64_t><<<grid_for(n), kBlock, 0, stream>>>(tx, ty, n, dims.rank, dims);
  }
}

template <class T, int G>
void launch_groups(const void* x, void* y, int64_t n, const BroadcastDims& dims, cudaStream_t stream) {
  const T* tx = static_cast<const T*>(x);
  auto* ty = static_cast<Group<T, G>*>(y);
  const int64_t groups = n / G;
  if (fits_int32(n, dims)) {
    gather_groups<T, G, int32_t><<<grid_for(groups), kBlock, 0, stream>>>(tx, ty, static_cast<int32_t>(groups),
                                                                          dims.rank, dims);
  } else {
    gather_groups<T, G, int64_t><<<grid_for(groups), kBlock, 0, stream>>>(tx, ty, groups, dims.rank, dims);
  }
}

// Size-1 dims dropped and neighbours merged where stepping the outer one jumps over exactly the
// inner one in x. Returns false (dims untouched) where the dims do not describe n elements.
bool simplify(BroadcastDims& dims, int64_t n) {
  int64_t count = 1;
  for (int d = 0; d < dims.rank; ++d) count *= dims.size[d];
  if (dims.rank == 0 || count != n) return false;
  BroadcastDims out;
  for (int d = 0; d < dims.rank; ++d) {
    if (dims.size[d] == 1) continue;
    const int last = out.rank - 1;
    if (last >= 0 && out.stride_a[last] == dims.size[d] * dims.stride_a[d]) {
      out.size[last] *= dims.size[d];
      out.stride_a[last] = dims.stride_a[d];
      continue;
    }
    out.size[out.rank] = dims.size[d];
    out.stride_a[out.rank] = dims.stride_a[d];
    ++out.rank;
  }
  if (out.rank == 0) {  // one element
    out.rank = 1;
    out.size[0] = 1;
    out.stride_a[0] = 1;
  }
  dims = out;
  return true;
}

bool aligned(const void* p, size_t unit) { return reinterpret_cast<uintptr_t>(p) % unit == 0; }

// The widest unit (16, 8 or 4 bytes, wider than elem) that a contiguous innermost dim moves in:
// the row, every outer stride and both pointers divide by it; elem where none does.
size_t wide_unit(const void* x, const void* y, size_t elem, const BroadcastDims& dims) {
  const int last = dims.rank - 1;
  if (dims.stride_a[last] != 1) return elem;
  for (size_t unit = 16; unit > elem; unit /= 2) {
    const auto k = static_cast<int64_t>(unit / elem);
    bool fits = dims.size[last] % k == 0 && aligned(x, unit) && aligned(y, unit);
    for (int d = 0; d < last && fits; ++d) fits = dims.stride_a[d] % k == 0;
    if (fits) return unit;
  }
  return elem;
}

void launch_by_size(const void* x, void* y, size_t elem, int64_t n, const BroadcastDims& dims, cudaStream_t stream) {
  switch (elem) {
    case 1: launch<uint8_t>(x, y, n, dims, stream); break;
    case 2: launch<uint16_t>(x, y, n, dims, stream); break;
    case 4: launch<uint32_t>(x, y, n, dims, stream); break;
    case 8: launch<uint64_t>(x, y, n, dims, stream); break;
    case 16: launch<uint4>(x, y, n, dims, stream); break;
    default: throw DeviceError("gather kernel: element size " + std::to_string(elem) + " is not supported");
  }
}

// A short strided innermost dim of G elements, G * elem a 4-, 8- or 16-byte unit and y aligned
// to it: the group kernel. Returns false where it does not apply.
bool launch_short_groups(const void* x, void* y, size_t elem, int64_t n, const BroadcastDims& dims,
                         cudaStream_t stream) {
  const int last = dims.rank - 1;
  if (dims.rank < 2 || dims.stride_a[last] == 1) return false;
  const int64_t g = dims.size[last];
  const auto bytes = static_cast<size_t>(g) * elem;
  if ((bytes != 4 && bytes != 8 && bytes != 16) || !aligned(y, bytes)) return false;
  switch (elem * 100 + static_cast<size_t>(g)) {
    case 104: launch_groups<uint8_t, 4>(x, y, n, dims, stream); return true;
    case 108: launch_groups<uint8_t, 8>(x, y, n, dims, stream); return true;
    case 116: launch_groups<uint8_t, 16>(x, y, n, dims, stream); return true;
    case 202: launch_groups<uint16_t, 2>(x, y, n, dims, stream); return true;
    case 204: launch_groups<uint16_t, 4>(x, y, n, dims, stream); return true;
    case 208: launch_groups<uint16_t, 8>(x, y, n, dims, stream); return true;
    case 402: launch_groups<uint32_t, 2>(x, y, n, dims, stream); return true;
    case 404: launch_groups<uint32_t, 4>(x, y, n, dims, stream); return true;
    case 802: launch_groups<uint64_t, 2>(x, y, n, dims, stream); return true;
    default: return false;
  }
}

}  // namespace

void launch_gather(const void* x, void* y, size_t elem, int64_t n, const BroadcastDims& dims_in,
                   cudaStream_t stream) {
  if (n == 0) return;
  BroadcastDims dims = dims_in;
  if (simplify(dims, n)) {  // Note [gathers by wide units]
    const size_t unit = wide_unit(x, y, elem, dims);
    if (unit != elem) {
      const auto k = static_cast<int64_t>(unit / elem);
      dims.size[dims.rank - 1] /= k;
      for (int d = 0; d < dims.rank - 1; ++d) dims.stride_a[d] /= k;
      n /= k;
      elem = unit;
      simplify(dims, n);  // a row of one unit is a size-1 dim now
    }
    if (dims.rank == 1 && dims.stride_a[0] == 1) {  // a contiguous range
      check(cudaMemcpyAsync(y, x, static_cast<size_t>(n) * elem, cudaMemcpyDeviceToDevice, stream), "cudaMemcpyAsync");
      return;
    }
    if (launch_short_groups(x, y, elem, n, dims, stream)) {
      check_launch("gather kernel");
      return;
    }
  }
  launch_by_size(x, y, elem, n, dims, stream);
  check_launch("gather kernel");
}

}  // namespace dnnx::cuda
