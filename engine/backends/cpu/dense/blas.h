// The one place the CPU backend touches OpenBLAS (scipy-openblas32: every symbol is prefixed).
#pragma once
#include <cblas.h>

namespace dnnx {

// Row-major C[M,N] = alpha * op(A) * op(B) + beta * C, on the calling thread alone.
//
// One row (M = 1: a Gemm or MatMul at batch 1) is a matrix-vector product, handed to sgemv:
// OpenBLAS's sgemm packs all of op(B) first, which for LeNet's fc1 (800 -> 500, 1.6 MB of
// weights) took 200 µs a call against sgemv's 35-50 µs on this project's 2-core CI machine.
// C's row = op(B)^T op(A)'s row: B [N,K] (trans_b) is sgemv's NoTrans, B [K,N] its Trans; op(A)'s
// row is A's row (stride 1) or A's column (stride lda). With beta 0, C is zeroed first: it may
// hold anything (arena memory), and 0 * NaN would stay NaN in a scaling sgemv.
inline void sgemm_serial(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a,
                         int lda, const float* b, int ldb, float beta, float* c, int ldc) {
  if (m == 0 || n == 0) return;  // C is empty (Note [empty tensors] in runtime/planner.cc)
  if (k == 0) {  // an empty sum: C = beta * C, no BLAS call (cblas refuses lda = 0)
    for (int i = 0; i < m; ++i) {
      for (int j = 0; j < n; ++j) {
        float& v = c[static_cast<long long>(i) * ldc + j];
        v = beta == 0.0f ? 0.0f : beta * v;
      }
    }
    return;
  }
  if (m == 1) {
    if (beta == 0.0f) {
      for (int j = 0; j < n; ++j) c[j] = 0.0f;
    }
    scipy_cblas_sgemv(CblasRowMajor, trans_b ? CblasNoTrans : CblasTrans, trans_b ? n : k, trans_b ? k : n, alpha,
                      b, ldb, a, trans_a ? lda : 1, beta, c, 1);
    return;
  }
  scipy_cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                    trans_b ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

// The same product; a large one is split into blocks of C's columns (or rows) across the CPU
// thread pool, each block one sgemm_serial (Note [cpu threads] in thread_pool.cc), at most
// max_blocks of them (at most 64). Called from inside a pool job (a conv's per-image GEMM), it
// runs serially.
void sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda,
           const float* b, int ldb, float beta, float* c, int ldc, int max_blocks = 64);

}  // namespace dnnx
