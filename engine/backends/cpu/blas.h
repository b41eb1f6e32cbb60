// The one place the CPU backend touches OpenBLAS (scipy-openblas32: every symbol is prefixed).
#pragma once
#include <cblas.h>

namespace dnnx {

// Row-major C[M,N] = alpha * op(A) * op(B) + beta * C.
inline void sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a,
                  int lda, const float* b, int ldb, float beta, float* c, int ldc) {
  scipy_cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                    trans_b ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace dnnx
