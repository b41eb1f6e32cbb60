// The recurrent product of one step of an LSTM, GRU or RNN on the CPU: out = H_prev · R^T with R
// as ONNX gives it ([G*H, H], each gate row contiguous), for the few batch rows of a small-batch
// step (recurrent_product_cpu.cc, Note [recurrent dot product]).
#pragma once
#include <cstdint>

namespace dnnx {

// out [m, n] (row stride ldo) = a [m, k] (row stride lda) · b^T, b [n, k] dense. Each output is
// a dot product whose summation order depends only on k (never on m, n, the rows around it or
// the thread that computes it), so any split of rows or columns gives the same bits.
void recurrent_product(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, float* out,
                       int64_t ldo);

// to [cols, rows] = from [rows, cols]^T, in 8 x 8 tiles (AVX2 shuffles where recurrent_vectorized):
// R^T for the LSTM's TapGemms. A plain loop, with its store stride a power of two (2 KB for
// hidden 128), took 400+ us for R [512, 128] on this project's CI machine; the tiles take ~10.
void recurrent_transpose(int64_t rows, int64_t cols, const float* from, float* to);

// Whether recurrent_product and the LSTM cell run their AVX2 and FMA code: the CPU has them and
// the environment variable DNNX_RNN_PORTABLE is unset or "0" (read once; it forces the portable
// loops, for tests and for comparing the two).
bool recurrent_vectorized();

}  // namespace dnnx
