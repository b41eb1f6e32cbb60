// An AVX-512 sgemm for MatMul and Gemm at small M (the transformer models at batch 1: ViT's
// [197 x 192] x [192 x 768], GPT-2's [32 x 128] x [128 x 512]), where OpenBLAS's SkylakeX kernels
// ran at ~1.3x onnxruntime's MLAS time (Note [avx512 gemm] in gemm_avx512.cc).
#pragma once

namespace dnnx {

// Whether sgemm_avx512 takes this product on this CPU: AVX-512F present, M >= 2 (one row stays
// OpenBLAS's sgemv), 1 <= K <= 4096 (a packed B panel stays in L2), op(B) packed within 16 MB.
bool sgemm_avx512_applies(int m, int n, int k);

// C = alpha * op(A) op(B) + beta * C, row-major (op: transposed when the flag says so); beta 0
// ignores C's old values (NaN included). The pool's threads take 32-column panels of C; every
// element is one FMA chain over k = 0..K-1 whatever the split, so any thread count gives the
// same bits.
void sgemm_avx512(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda,
                  const float* b, int ldb, float beta, float* c, int ldc);

}  // namespace dnnx
