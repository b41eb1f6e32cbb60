// The LSTM cell update of one batch row in 8-wide AVX2 code, 16-wide where AVX-512 runs (the same
// bits: Note [lstm cell in avx512] in lstm_cell_avx2_cpu.cc), for the plain cell: no peepholes,
// no clip, no coupled input and forget gates. lstm_cpu.cc's portable loop handles every other
// cell, and every CPU without AVX2 and FMA.
#pragma once
#include <cstdint>

namespace dnnx {

// Whether lstm_cell_avx2 runs: recurrent_vectorized() (AVX2 and FMA, DNNX_RNN_PORTABLE unset).
bool lstm_cell_avx2_available();

// xg = X_t·W^T + Wb + Rb and hg = H_{t-1}·R^T, each [4H] in gate order i, o, f, c; c [H] is
// updated in place and h [H] receives H_t:
//   c = sigmoid(f) * c + sigmoid(i) * tanh(g),  h = sigmoid(o) * tanh(c)
// with sigmoid(x) = 1 / (1 + e^-x) (e^x: fast_expf's algorithm) and tanh(x) = 2 sigmoid(2x) - 1,
// as in the portable loop.
void lstm_cell_avx2(int64_t hidden, const float* xg, const float* hg, float* c, float* h);

}  // namespace dnnx
