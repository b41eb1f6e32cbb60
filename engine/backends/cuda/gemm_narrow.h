// Gemm with few output columns (N <= kNarrowColumns: a classifier's last layer, LeNet's fc2 with
// N = 10) in fp32, forward and backward, as plain kernels (gemm_narrow_kernels.cu). cuBLAS's
// picks for these shapes are tiled for wide outputs: on an H200 LeNet's fc2 at batch 256
// (M 256, K 500, N 10) took 17.6 us forward (three kernels: a scaling, a large-K SGEMM and a
// separate bias epilogue) and 14 us backward (two split-K SGEMMs and their reductions) for 1.3
// million multiply-adds each way. Here each is memory-bound work of a few microseconds:
//   forward   Y[M,N] = alpha * A[M,K] op(B) (+ beta * c[N]) (Relu): one warp per row of Y, its
//             lanes over K, the N sums reduced across the warp
//   dA        dA[M,K] = alpha * dY[M,N] op(B)^T: one thread per element of dA, a loop over N
//   dB, dc    d op(B)[K,N] = alpha * A^T dY, dc[N] = beta * the column sums of dY: one thread
//             column per k (and one more for dc, as if A had a column of ones), the rows split
//             over the block's warps and added in a fixed order
// A is row-major and not transposed; op(B) is B [K,N], or B^T for B [N,K] (transB). Every sum
// runs in a fixed order, so the results are deterministic.
#pragma once
#include <cstdint>

#include <cuda_runtime.h>

namespace dnnx::cuda {

constexpr int kNarrowColumns = 16;
constexpr int kNarrowMaxK = 1 << 14;  // each warp loops over K: a bound on that serial work

struct NarrowGemm {
  int m = 0, n = 0, k = 0;   // Y [m, n], A [m, k]; 1 <= n <= kNarrowColumns
  bool trans_b = false;      // B is [n, k] (else [k, n])
  float alpha = 1.0f, beta = 0.0f;
};

// c: the row vector C [n] (nullptr: none); relu applies max(., 0) last.
void launch_narrow_gemm(const NarrowGemm& g, const float* a, const float* b, const float* c, bool relu, float* y,
                        cudaStream_t stream);
void launch_narrow_gemm_da(const NarrowGemm& g, const float* dy, const float* b, float* da, cudaStream_t stream);
// db (nullptr: not wanted) in B's layout; dc [n] (nullptr: not wanted).
void launch_narrow_gemm_db_dc(const NarrowGemm& g, const float* a, const float* dy, float* db, float* dc,
                              cudaStream_t stream);

}  // namespace dnnx::cuda
