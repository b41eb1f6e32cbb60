// Deterministic scatter-adds of rows (Note [keyed row sums] in keyed_row_sums.cu): the gradients
// of Gather and GatherND on CUDA. dY [outer, count, inner] row j adds into dX [outer, rows,
// inner] row key[j]; the keys are written by the caller's own kernel, then sorted, and each dX
// row is one thread's sum per element, in j order, with no atomics.
#pragma once
#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

namespace dnnx::cuda {

// Where each buffer lies in the workspace, and its size in bytes (planned once).
struct KeyedRowSumsWorkspace {
  size_t keys_in = 0, keys_out = 0, rows_in = 0, rows_out = 0, sort_temp = 0;
  size_t sort_temp_bytes = 0;
  size_t bytes = 0;
  int key_bits = 1;  // the radix sort's bits: enough for 0..rows (rows: no row)
};

// The workspace for `count` dY rows into `rows` dX rows (both under 2^31: the caller checks).
KeyedRowSumsWorkspace keyed_row_sums_workspace(int64_t count, int64_t rows);

// Where the caller's kernel writes key[j] for j < count: the dX row that dY row j adds into,
// or `rows` for none (an index out of range).
inline int* keyed_row_sums_keys(const KeyedRowSumsWorkspace& w, void* workspace) {
  return reinterpret_cast<int*>(static_cast<char*>(workspace) + w.keys_in);
}

// dX = 0, then dX's (o, r, :) = the sum of dY's (o, j, :) over the j with key[j] = r, added in
// j order (the CPU's scatter-add order, so its bits where the CPU adds rows in that order).
void launch_keyed_row_sums(const float* dy, float* dx, int64_t outer, int64_t rows, int64_t count, int64_t inner,
                           const KeyedRowSumsWorkspace& w, void* workspace, cudaStream_t stream);

}  // namespace dnnx::cuda
