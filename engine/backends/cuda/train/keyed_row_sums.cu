// Note [keyed row sums]
// Gather's and GatherND's gradients add each dY row into the dX row it was read from. Atomics
// would make the order of those adds (so the float result) vary from run to run, and
// deterministic training (and dnnx's rule for its own gradient kernels, grad_kernels.h) forbids
// that. So:
//   1. keys: the caller's kernel writes each dY row's dX row (rows, a key no row has, for an index
//      out of range); the positions j are the values;
//   2. cub's radix sort of the (key, j) pairs: stable, so equal keys keep j order;
//   3. one thread per (o, sorted position p, inner element) whose p starts a run of equal keys
//      sums dY over the run, in j order, and writes dX's element once. Rows no key names stay 0.
// The sums are ((0 + dY_j1) + dY_j2) + ...: the CPU's Gather gradient, bit for bit. Work is
// outer * count * inner reads, as the forward's; a heavily repeated index is one thread's loop.
#include "backends/cuda/train/keyed_row_sums.h"

#include <cub/device/device_radix_sort.cuh>

#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/runtime/grid_loop.cuh"
#include "backends/cuda/runtime/launch.cuh"

namespace dnnx::cuda {

namespace {

int* part(void* base, size_t offset) { return reinterpret_cast<int*>(static_cast<char*>(base) + offset); }

__global__ void positions(int* rows, int64_t count) {
  DNNX_GRID_LOOP(j, count) rows[j] = static_cast<int>(j);
}

__global__ void run_sums(const float* __restrict__ dy, const int* __restrict__ keys, const int* __restrict__ order,
                         float* __restrict__ dx, int64_t n, int64_t rows, int64_t count, int64_t inner) {
  DNNX_GRID_LOOP(i, n) {
    const int64_t in = i % inner, p = i / inner % count, o = i / (inner * count);
    const int key = keys[p];
    if (key == rows || (p > 0 && keys[p - 1] == key)) continue;  // no row, or not a run's start
    const float* from = dy + o * count * inner + in;
    float sum = 0.0f;
    for (int64_t q = p; q < count && keys[q] == key; ++q) sum += from[static_cast<int64_t>(order[q]) * inner];
    dx[(o * rows + key) * inner + in] = sum;
  }
}

size_t aligned(size_t bytes) { return (bytes + 255) / 256 * 256; }

}  // namespace

KeyedRowSumsWorkspace keyed_row_sums_workspace(int64_t count, int64_t rows) {
  KeyedRowSumsWorkspace w;
  while ((int64_t{1} << w.key_bits) <= rows) ++w.key_bits;
  const size_t list = aligned(static_cast<size_t>(count) * sizeof(int));
  w.keys_in = 0;
  w.keys_out = w.keys_in + list;
  w.rows_in = w.keys_out + list;
  w.rows_out = w.rows_in + list;
  w.sort_temp = w.rows_out + list;
  if (count > 0) {
    check(cub::DeviceRadixSort::SortPairs(nullptr, w.sort_temp_bytes, static_cast<const int*>(nullptr),
                                          static_cast<int*>(nullptr), static_cast<const int*>(nullptr),
                                          static_cast<int*>(nullptr), static_cast<int>(count), 0, w.key_bits),
          "cub::DeviceRadixSort (temporary storage)");
  }
  w.bytes = w.sort_temp + aligned(w.sort_temp_bytes);
  return w;
}

void launch_keyed_row_sums(const float* dy, float* dx, int64_t outer, int64_t rows, int64_t count, int64_t inner,
                           const KeyedRowSumsWorkspace& w, void* workspace, cudaStream_t stream) {
  const size_t dx_bytes = static_cast<size_t>(outer * rows * inner) * sizeof(float);
  if (dx_bytes > 0) check(cudaMemsetAsync(dx, 0, dx_bytes, stream), "cudaMemsetAsync (a row scatter's dX)");
  const int64_t n = outer * count * inner;
  if (n == 0) return;
  int* order_in = part(workspace, w.rows_in);
  positions<<<grid_for(count), kBlock, 0, stream>>>(order_in, count);
  check_launch("keyed row sums: positions");
  int* keys_out = part(workspace, w.keys_out);
  int* order_out = part(workspace, w.rows_out);
  size_t temp_bytes = w.sort_temp_bytes;
  check(cub::DeviceRadixSort::SortPairs(part(workspace, w.sort_temp), temp_bytes, part(workspace, w.keys_in),
                                        keys_out, order_in, order_out, static_cast<int>(count), 0, w.key_bits,
                                        stream),
        "cub::DeviceRadixSort (a row scatter's keys)");
  run_sums<<<grid_for(n), kBlock, 0, stream>>>(dy, keys_out, order_out, dx, n, rows, count, inner);
  check_launch("keyed row sums");
}

}  // namespace dnnx::cuda
