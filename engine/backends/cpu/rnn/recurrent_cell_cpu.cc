// GRU and RNN cell math on the CPU (recurrent_cell_cpu.h). Per step, the products with R are
// dot products or GEMMs over the whole batch (gemm_abt); the gate math is a plain loop per batch
// row, written branch-free so that it vectorises.
#include "backends/cpu/rnn/recurrent_cell_cpu.h"

#include <algorithm>
#include <cstring>

#include "backends/cpu/elementwise/activation_cpu.h"
#include "backends/cpu/dense/blas.h"
#include "backends/cpu/conv/tap_gemm_cpu.h"
#include "backends/cpu/rnn/recurrent_panels_cpu.h"
#include "backends/cpu/rnn/recurrent_product_cpu.h"

namespace dnnx {

namespace {

inline float clamp(float x, float limit) { return std::min(std::max(x, -limit), limit); }

// tanh(x) = 2·sigmoid(2x) - 1: several times cheaper than tanhf, absolute error below 2e-7
// (as in lstm_cpu.cc).
inline float tanh_fast(float x) { return 2.0f * sigmoidf(2.0f * x) - 1.0f; }

// R up to 1 MB, or any R at a batch of a few rows: dot products over R as the node gives it
// (Note [recurrent dot product]); OpenBLAS's sgemm packs R on every step, and at batch 1 its
// call overhead on every step was most of a GRU layer's time.
constexpr int64_t kMaxDotWeights = int64_t{1} << 18;
constexpr int64_t kFewRows = 16;
// A projection of at most this many rows of X runs its sgemm in at most 2 blocks of columns (for
// 2 threads): each block repacks X (as in lstm_cpu.cc).
constexpr int64_t kFewProjectionRows = 256;

// c [m, n] (row stride ldc) = a [m, k] (row stride lda) · b^T, b [n, k] dense. The choice between
// the two depends on the shape only, so a batch gives the same bits on any thread count.
void gemm_abt(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, float* c,
              int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, 0.0f);
    return;
  }
  if (m <= kFewRows || n * k <= kMaxDotWeights) {
    recurrent_product(m, n, k, a, lda, b, c, ldc);
    return;
  }
  sgemm(false, true, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0f, a, static_cast<int>(lda),
        b, static_cast<int>(k), 0.0f, c, static_cast<int>(ldc));
}

// GRU, z and r of one row: acts[0:2H] = sigmoid(x + hr); rh = r ⊙ h_prev.
DNNX_VECTOR_CLONES
void gru_zr_row(int64_t n, float clip, const float* __restrict xg, const float* __restrict hr,
                const float* __restrict h_prev, float* __restrict acts, float* __restrict rh) {
  for (int64_t j = 0; j < 2 * n; ++j) acts[j] = sigmoidf(clamp(xg[j] + hr[j], clip));
  for (int64_t j = 0; j < n; ++j) rh[j] = acts[n + j] * h_prev[j];
}

// GRU, h~ and the new state of one row. hr_h is (r ⊙ h_prev)·Rh^T (linear_before_reset = 0,
// rbh then zeros: Rbh is in xg) or h_prev·Rh^T (= 1, with Rbh added here inside r ⊙ (...)).
DNNX_VECTOR_CLONES
void gru_h_row(int64_t n, float clip, bool lbr, const float* __restrict xh, const float* __restrict hr_h,
               const float* __restrict rbh, const float* h_prev, float* __restrict acts, float* __restrict hh,
               float* h_next) {
  const float* z = acts;
  const float* r = acts + n;
  float* cand = acts + 2 * n;
  const float lin = lbr ? 1.0f : 0.0f;
  for (int64_t j = 0; j < n; ++j) {
    const float hrb = hr_h[j] + lin * rbh[j];
    const float reset = lin * r[j] + (1.0f - lin);  // r multiplies here only under linear_before_reset
    const float c = tanh_fast(clamp(xh[j] + reset * hrb, clip));
    cand[j] = c;
    hh[j] = hrb;
    h_next[j] = (1.0f - z[j]) * c + z[j] * h_prev[j];
  }
}

DNNX_VECTOR_CLONES
void rnn_row(int64_t n, float clip, RecurrentActivation f, const float* __restrict xg, const float* __restrict hr,
             float* h_next) {
  switch (f) {
    case RecurrentActivation::Tanh:
      for (int64_t j = 0; j < n; ++j) h_next[j] = tanh_fast(clamp(xg[j] + hr[j], clip));
      break;
    case RecurrentActivation::Sigmoid:
      for (int64_t j = 0; j < n; ++j) h_next[j] = sigmoidf(clamp(xg[j] + hr[j], clip));
      break;
    case RecurrentActivation::Relu:
      for (int64_t j = 0; j < n; ++j) h_next[j] = std::max(clamp(xg[j] + hr[j], clip), 0.0f);
      break;
  }
}

// Ended sequences keep their state.
void carry_row(int64_t n, const float* h_prev, float* h_next) {
  if (h_next != h_prev) std::memcpy(h_next, h_prev, n * sizeof(float));
}

void gru_step(const RecurrentStepParams& p, const RecurrentStepBuffers& buf) {
  const int64_t n = p.hidden, g = 3 * n;
  // linear_before_reset: all three blocks of h_prev·R^T at once; otherwise z and r first.
  if (p.panels) p.panels->product(buf.h_prev, buf.hr);  // batch 1
  else if (p.tap) p.tap->run(buf.h_prev, p.tap_b, ConvEpilogue(), buf.hr, g);
  else gemm_abt(p.batch, p.linear_before_reset ? g : 2 * n, n, buf.h_prev, n, p.r, buf.hr, g);
  for (int64_t b = 0; b < p.batch; ++b) {
    float* rh = buf.rh + b * n;
    if (buf.xg[b]) {
      gru_zr_row(n, p.clip, buf.xg[b], buf.hr + b * g, buf.h_prev + b * n, buf.acts + b * g, rh);
    } else {
      std::fill(rh, rh + n, 0.0f);
    }
  }
  // (r ⊙ h_prev)·Rh^T into hr's h block.
  if (!p.linear_before_reset) {
    if (p.panels_h) p.panels_h->product(buf.rh, buf.hr + 2 * n);
    else if (p.tap_h) p.tap_h->run(buf.rh, p.tap_h_b, ConvEpilogue(), buf.hr + 2 * n, g);
    else gemm_abt(p.batch, n, n, buf.rh, n, p.r + 2 * n * n, buf.hr + 2 * n, g);
  }
  for (int64_t b = 0; b < p.batch; ++b) {
    const float* h_prev = buf.h_prev + b * n;
    float* h_next = buf.h_next + b * n;
    if (!buf.xg[b]) {
      carry_row(n, h_prev, h_next);
      continue;
    }
    gru_h_row(n, p.clip, p.linear_before_reset, buf.xg[b] + 2 * n, buf.hr + b * g + 2 * n, p.rbh, h_prev,
              buf.acts + b * g, buf.hh + b * n, h_next);
  }
}

void rnn_step(const RecurrentStepParams& p, const RecurrentStepBuffers& buf) {
  const int64_t n = p.hidden;
  if (p.panels) p.panels->product(buf.h_prev, buf.hr);  // batch 1
  else if (p.tap) p.tap->run(buf.h_prev, p.tap_b, ConvEpilogue(), buf.hr, n);
  else gemm_abt(p.batch, n, n, buf.h_prev, n, p.r, buf.hr, n);
  for (int64_t b = 0; b < p.batch; ++b) {
    if (buf.xg[b]) rnn_row(n, p.clip, p.activation, buf.xg[b], buf.hr + b * n, buf.h_next + b * n);
    else carry_row(n, buf.h_prev + b * n, buf.h_next + b * n);
  }
}

}  // namespace

void recurrent_input_projection(const RecurrentAttributes& attrs, const LstmDims& d, const float* x,
                                const float* w, const float* b, int64_t dir_first, int64_t dir_count,
                                float* xw) {
  const int64_t rows = d.seq * d.batch;
  const int64_t gh = attrs.gates() * d.hidden;  // one direction's block
  const int64_t width = dir_count * gh;
  if (rows == 0) return;
  // Row 0 gets the biases, then every row a copy, then the GEMM adds X·W^T (beta = 1).
  recurrent_projection_bias(attrs, d, b, dir_first, dir_count, xw);
  for (int64_t r = 1; r < rows; ++r) std::memcpy(xw + r * width, xw, width * sizeof(float));
  if (d.input == 0) return;
  sgemm(false, true, static_cast<int>(rows), static_cast<int>(width), static_cast<int>(d.input), 1.0f, x,
        static_cast<int>(d.input), w + dir_first * gh * d.input, static_cast<int>(d.input), 1.0f, xw,
        static_cast<int>(width), rows <= kFewProjectionRows ? 2 : 64);
}

void recurrent_projection_bias(const RecurrentAttributes& attrs, const LstmDims& d, const float* b,
                               int64_t dir_first, int64_t dir_count, float* row) {
  const int64_t gh = attrs.gates() * d.hidden;  // one direction's block
  for (int64_t k = 0; k < dir_count; ++k) {
    float* out = row + k * gh;
    if (!b) {
      std::fill(out, out + gh, 0.0f);
      continue;
    }
    const float* wb = b + (dir_first + k) * 2 * gh;  // Wb then Rb
    const float* rb = wb + gh;
    // GRU under linear_before_reset: Rbh stays out (the step adds it inside r ⊙ (...)).
    const int64_t rb_end = attrs.cell == RecurrentCell::Gru && attrs.linear_before_reset ? 2 * d.hidden : gh;
    for (int64_t j = 0; j < gh; ++j) out[j] = wb[j] + (j < rb_end ? rb[j] : 0.0f);
  }
}

void recurrent_step(const RecurrentStepParams& p, const RecurrentStepBuffers& buf) {
  if (p.cell == RecurrentCell::Gru) gru_step(p, buf);
  else rnn_step(p, buf);
}

}  // namespace dnnx
