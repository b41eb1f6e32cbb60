// The one place the CPU backend touches OpenBLAS (scipy-openblas32: every symbol is prefixed).
#pragma once
#include <cblas.h>

namespace dnnx {

// Row-major C[M,N] = alpha * op(A) * op(B) + beta * C, on the calling thread alone.
inline void sgemm_serial(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a,
                         int lda, const float* b, int ldb, float beta, float* c, int ldc) {
  scipy_cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                    trans_b ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

// The same product; a large one is split into blocks of C's columns (or rows) across the CPU
// thread pool, each block one sgemm_serial (Note [cpu threads] in thread_pool.cc). Called from
// inside a pool job (a conv's per-image GEMM), it runs serially.
void sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda,
           const float* b, int ldb, float beta, float* c, int ldc);

}  // namespace dnnx
