// Note [gather gradient by sorted indices]
// Gather's gradient adds each dY row into the dX row its index read. Atomics would make the
// order of those adds (so the float result) vary from run to run, and deterministic training
// (and dnnx's rule for its own gradient kernels, train/grad_kernels.h) forbids that. So:
//   1. keys: each index normalized (negative from the end; out of range -> size, a key no row
//      has), with its position j as the value;
//   2. cub's radix sort of the (key, j) pairs: stable, so equal keys keep j order;
//   3. one thread per (o, sorted position p, inner element) whose p starts a run of equal keys
//      sums dY over the run, in j order, and writes dX's row once. Rows no index reads stay 0.
// The sums are the CPU's ((0 + dY_j1) + dY_j2) + ...: the same bits on both backends. Work is
// outer * count * inner reads, as the forward's; a heavily repeated index is one thread's loop.
#include <cub/device/device_radix_sort.cuh>

#include "backends/cuda/layout/gather_grad_kernels.h"
#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/runtime/grid_loop.cuh"
#include "backends/cuda/runtime/launch.cuh"

namespace dnnx::cuda {

namespace {

template <class T>
T* part(void* base, size_t offset) {
  return reinterpret_cast<T*>(static_cast<char*>(base) + offset);
}

template <class I>
__global__ void gather_grad_keys(const I* __restrict__ idx, int* keys, int* rows, int64_t count, int64_t size) {
  DNNX_GRID_LOOP(j, count) {
    int64_t k = static_cast<int64_t>(idx[j]);
    if (k < 0) k += size;
    keys[j] = static_cast<int>(k >= 0 && k < size ? k : size);
    rows[j] = static_cast<int>(j);
  }
}

__global__ void gather_grad_runs(const float* __restrict__ dy, const int* __restrict__ keys,
                                 const int* __restrict__ rows, float* __restrict__ dx, int64_t n, int64_t size,
                                 int64_t count, int64_t inner) {
  DNNX_GRID_LOOP(i, n) {
    const int64_t in = i % inner, p = i / inner % count, o = i / (inner * count);
    const int key = keys[p];
    if (key == size || (p > 0 && keys[p - 1] == key)) continue;  // out of range, or not a run's start
    const float* from = dy + o * count * inner + in;
    float sum = 0.0f;
    for (int64_t q = p; q < count && keys[q] == key; ++q) sum += from[static_cast<int64_t>(rows[q]) * inner];
    dx[(o * size + key) * inner + in] = sum;
  }
}

size_t aligned(size_t bytes) { return (bytes + 255) / 256 * 256; }

}  // namespace

GatherGradWorkspace gather_grad_workspace(int64_t count, int64_t size) {
  GatherGradWorkspace w;
  while ((int64_t{1} << w.key_bits) <= size) ++w.key_bits;
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

void launch_gather_axis_grad(const float* dy, const void* idx, bool idx_int64, float* dx, int64_t outer,
                             int64_t size, int64_t count, int64_t inner, const GatherGradWorkspace& w,
                             void* workspace, cudaStream_t stream) {
  const size_t dx_bytes = static_cast<size_t>(outer * size * inner) * sizeof(float);
  if (dx_bytes > 0) check(cudaMemsetAsync(dx, 0, dx_bytes, stream), "cudaMemsetAsync (Gather's gradient)");
  const int64_t n = outer * count * inner;
  if (n == 0) return;
  int* keys_in = part<int>(workspace, w.keys_in);
  int* rows_in = part<int>(workspace, w.rows_in);
  if (idx_int64) {
    gather_grad_keys<<<grid_for(count), kBlock, 0, stream>>>(static_cast<const int64_t*>(idx), keys_in, rows_in,
                                                             count, size);
  } else {
    gather_grad_keys<<<grid_for(count), kBlock, 0, stream>>>(static_cast<const int32_t*>(idx), keys_in, rows_in,
                                                             count, size);
  }
  check_launch("Gather gradient keys");
  int* keys_out = part<int>(workspace, w.keys_out);
  int* rows_out = part<int>(workspace, w.rows_out);
  size_t temp_bytes = w.sort_temp_bytes;
  check(cub::DeviceRadixSort::SortPairs(part<void>(workspace, w.sort_temp), temp_bytes, keys_in, keys_out, rows_in,
                                        rows_out, static_cast<int>(count), 0, w.key_bits, stream),
        "cub::DeviceRadixSort (Gather's gradient)");
  gather_grad_runs<<<grid_for(n), kBlock, 0, stream>>>(dy, keys_out, rows_out, dx, n, size, count, inner);
  check_launch("Gather gradient sums");
}

}  // namespace dnnx::cuda
