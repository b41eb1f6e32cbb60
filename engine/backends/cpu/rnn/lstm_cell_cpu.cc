// The LSTM cell's portable loop (lstm_cell_cpu.h).
#include "backends/cpu/rnn/lstm_cell_cpu.h"

#include <algorithm>

#include "backends/cpu/elementwise/activation_cpu.h"
#include "backends/cpu/runtime/fast_math.h"

namespace dnnx {

namespace {

inline float clamp(float x, float limit) { return std::min(std::max(x, -limit), limit); }

// tanh(x) = 2·sigmoid(2x) - 1. glibc's tanhf goes through expm1f and took about half of an LSTM's
// time; expf is several times cheaper. The absolute error stays below 2e-7 (the relative error
// grows only where |x| < 1e-3), and absolute error is what the next step's GEMM sees.
inline float tanh_via_sigmoid(float x) { return 2.0f * sigmoidf(2.0f * x) - 1.0f; }

// One cell update of one batch row. xg is X_t·W^T + Wb + Rb and hg is H_{t-1}·R^T, each [4H] in
// gate order i, o, f, c; c is the cell state [H], updated in place; h [H] receives H_t.
// The loop is branch-free so that it vectorises (absent peepholes are zeros, input_forget is a
// 0/1 blend): with branches it ran scalar and took 80% of a small LSTM's time.
// Every buffer is distinct (restrict): without it the alias checks outnumber what GCC versions.
DNNX_VECTOR_CLONES
void cell_step_rows(const CellParams& p, const float* __restrict xg, const float* __restrict hg,
                    float* __restrict c, float* __restrict h) {
  const int64_t n = p.hidden;
  const float* xi = xg;
  const float* xo = xg + n;
  const float* xf = xg + 2 * n;
  const float* xc = xg + 3 * n;
  const float* hi = hg;
  const float* ho = hg + n;
  const float* hf = hg + 2 * n;
  const float* hc = hg + 3 * n;
  const float* pi = p.peephole;  // [3H]: i, o, f
  const float* po = p.peephole + n;
  const float* pf = p.peephole + 2 * n;
  const float coupled = p.input_forget ? 1.0f : 0.0f;
  const float clip = p.clip;
  for (int64_t j = 0; j < n; ++j) {
    const float c_prev = c[j];
    const float i = sigmoidf(clamp(xi[j] + hi[j] + pi[j] * c_prev, clip));
    const float f_own = sigmoidf(clamp(xf[j] + hf[j] + pf[j] * c_prev, clip));
    const float f = coupled * (1.0f - i) + (1.0f - coupled) * f_own;
    const float g = tanh_via_sigmoid(clamp(xc[j] + hc[j], clip));
    const float c_new = f * c_prev + i * g;
    // The output gate's peephole looks at the new cell state.
    const float o = sigmoidf(clamp(xo[j] + ho[j] + po[j] * c_new, clip));
    c[j] = c_new;
    h[j] = o * tanh_via_sigmoid(c_new);
  }
}

}  // namespace

void cell_step(const CellParams& p, const float* xg, const float* hg, float* c, float* h) { cell_step_rows(p, xg, hg, c, h); }

}  // namespace dnnx
