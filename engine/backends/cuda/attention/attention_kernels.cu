// The attention family's kernels (attention_kernels.h): RotaryEmbedding one thread per output
// element; the key/value gather one thread per element; the masked softmax one block per score
// row, in three passes over the row (max, sum, write), the logits recomputed in each from the
// stored score (softcap and bias are cheap) so that a half type's scores are rounded once.
#include "backends/cuda/attention/attention_kernels.h"
#include "backends/cuda/runtime/block_reduce.cuh"
#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/runtime/element_dispatch.cuh"
#include "backends/cuda/runtime/grid_loop.cuh"
#include "backends/cuda/runtime/launch.cuh"

namespace dnnx::cuda {

namespace {

// --- RotaryEmbedding ---------------------------------------------------------------------------

template <class T>
__global__ void rotary_kernel(RotaryGeometry g, const T* __restrict__ x, const T* __restrict__ cos,
                              const T* __restrict__ sin, const int64_t* __restrict__ positions, T* __restrict__ y,
                              int64_t n) {
  const int64_t half = g.rotary / 2;
  DNNX_GRID_LOOP(i, n) {
    const int64_t f = i % g.head;
    int64_t rest = i / g.head, b, s;
    if (g.packed) {  // [B, S, H, D]
      rest /= g.heads;
      s = rest % g.seq;
      b = rest / g.seq;
    } else {  // [B, H, S, D]
      s = rest % g.seq;
      b = rest / g.seq / g.heads;
    }
    int64_t row = b * g.seq + s;  // the caches' row for (b, s)
    if (positions) {
      row = positions[b * g.seq + s];
      if (row < 0 || row >= g.max_position) {  // the CPU raises; the whole head vector reads 0 here
        y[i] = T(0.0f);
        continue;
      }
    }
    if (f >= g.rotary) {
      y[i] = x[i];
      continue;
    }
    // The pair (x1, x2) this feature belongs to, and which of the two it is.
    const int64_t k = g.interleaved ? f / 2 : f % half;
    const bool first = g.interleaved ? f % 2 == 0 : f < half;
    const int64_t i1 = i - f + (g.interleaved ? 2 * k : k), i2 = i - f + (g.interleaved ? 2 * k + 1 : k + half);
    const float x1 = float(x[i1]), x2 = float(x[i2]);
    const float c = float(cos[row * half + k]), sn = float(sin[row * half + k]);
    y[i] = T(first ? c * x1 - sn * x2 : sn * x1 + c * x2);
  }
}

// --- the key/value gather ----------------------------------------------------------------------

template <class T>
__global__ void heads_concat_kernel(const T* __restrict__ past, const T* __restrict__ fresh, HeadsView fv,
                                    T* __restrict__ out, int64_t heads, int64_t past_rows, int64_t fresh_rows,
                                    int64_t cols, int64_t n) {
  const int64_t rows = past_rows + fresh_rows;
  DNNX_GRID_LOOP(i, n) {
    const int64_t c = i % cols, r = (i / cols) % rows, bh = i / cols / rows;
    if (r < past_rows) {
      out[i] = past[(bh * past_rows + r) * cols + c];
    } else {
      const int64_t b = bh / heads, h = bh % heads;
      out[i] = fresh[b * fv.batch + h * fv.head + (r - past_rows) * fv.row + c];
    }
  }
}

// --- the masked softmax ------------------------------------------------------------------------

// AttentionGeometry's device half: what one score row needs.
struct SoftmaxRows {
  int64_t q_heads, q_seq, total, past;
  float softcap;
  bool causal, has_past;
  int64_t left_window, right_window;
  int qk_mode;
  bool has_mask, mask_bool;
  int64_t mask[4];
};

// Score j of row (b, h, i) as a logit: softcapped, plus the bias of Note [attention bias];
// `masked` when the bias is -inf. `capped`: the score after softcap (for qk_matmul_output).
template <class T>
__device__ float logit(const SoftmaxRows& g, const T* row, const void* mask, const int64_t* nonpad, int64_t b,
                       int64_t h, int64_t i, int64_t j, float& capped, bool& masked) {
  float v = float(row[j]);
  if (g.softcap > 0.0f) v = g.softcap * tanhf(v / g.softcap);
  capped = v;
  const float ninf = -__int_as_float(0x7f800000);
  float bias = 0.0f;
  if (g.has_mask) {
    if (j < g.mask[3]) {
      const int64_t at = (((g.mask[0] == 1 ? 0 : b) * g.mask[1] + (g.mask[1] == 1 ? 0 : h)) * g.mask[2] +
                          (g.mask[2] == 1 ? 0 : i)) * g.mask[3] + j;
      bias = g.mask_bool ? (static_cast<const bool*>(mask)[at] ? 0.0f : ninf) : float(static_cast<const T*>(mask)[at]);
    } else {
      bias = ninf;
    }
  }
  const int64_t offset = g.has_past ? g.past : nonpad ? nonpad[b] - g.q_seq : 0;
  const int64_t diff = i + offset - j;  // how far key j lies before the query's position
  bool out = g.causal && diff < 0;
  out = out || (g.left_window >= 0 && diff > g.left_window);
  out = out || (g.right_window >= 0 && -diff > g.right_window);
  out = out || (nonpad && j >= nonpad[b]);
  if (out) bias = ninf;
  masked = bias == ninf;
  return v + bias;
}

constexpr int kScores = 0, kSoftcapped = 1, kWithBias = 2, kProbabilities = 3;

template <class T>
__global__ void attention_softmax_kernel(SoftmaxRows g, T* __restrict__ scores, const void* __restrict__ mask,
                                         const int64_t* __restrict__ nonpad, T* __restrict__ qk_out, int64_t rows) {
  __shared__ float shared[kBlock / kWarpSize];
  const float ninf = -__int_as_float(0x7f800000);
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int64_t i = r % g.q_seq, h = (r / g.q_seq) % g.q_heads, b = r / g.q_seq / g.q_heads;
    T* row = scores + r * g.total;
    T* qk = qk_out ? qk_out + r * g.total : nullptr;
    float max = ninf, any = 0.0f;
    for (int64_t j = threadIdx.x; j < g.total; j += blockDim.x) {
      float capped;
      bool masked;
      const float v = logit(g, row, mask, nonpad, b, h, i, j, capped, masked);
      if (qk && g.qk_mode == kScores) qk[j] = row[j];  // the scaled scores, before softcap
      if (qk && g.qk_mode == kSoftcapped) qk[j] = T(capped);
      if (qk && g.qk_mode == kWithBias) qk[j] = T(v);
      if (!masked) {
        max = fmaxf(max, v);
        any = 1.0f;
      }
    }
    max = block_max_all(max, shared);
    const bool anyone = block_max_all(any, shared) > 0.0f;
    float sum = 0.0f;
    for (int64_t j = threadIdx.x; j < g.total; j += blockDim.x) {
      float capped;
      bool masked;
      const float v = logit(g, row, mask, nonpad, b, h, i, j, capped, masked);
      if (!masked) sum += expf(v - max);
    }
    sum = block_sum_all(sum, shared);
    // Each thread reads and writes only its own keys j: the row is overwritten in place.
    const float divisor = anyone && sum != 0.0f ? sum : 1.0f;
    for (int64_t j = threadIdx.x; j < g.total; j += blockDim.x) {
      float capped;
      bool masked;
      const float v = logit(g, row, mask, nonpad, b, h, i, j, capped, masked);
      const float p = masked ? 0.0f : expf(v - max) / divisor;
      row[j] = T(p);
      if (qk && g.qk_mode == kProbabilities) qk[j] = T(p);
    }
  }
}

unsigned blocks_for(int64_t n) { return static_cast<unsigned>(std::max<int64_t>(1, std::min(n, kMaxBlocks))); }

}  // namespace

void launch_rotary(const RotaryGeometry& g, const void* x, const void* cos, const void* sin, const int64_t* positions,
                   void* y, DType dtype, cudaStream_t stream) {
  const int64_t n = g.batch * g.heads * g.seq * g.head;
  if (n == 0) return;
  with_element(dtype, [&](auto e) {
    using T = decltype(e);
    rotary_kernel<T><<<grid_for(n), kBlock, 0, stream>>>(g, static_cast<const T*>(x), static_cast<const T*>(cos),
                                                         static_cast<const T*>(sin), positions, static_cast<T*>(y), n);
  });
  check_launch("RotaryEmbedding kernel");
}

void launch_heads_concat(const void* past, const void* fresh, const HeadsView& fresh_view, void* out, int64_t batch,
                         int64_t heads, int64_t past_rows, int64_t fresh_rows, int64_t cols, DType dtype,
                         cudaStream_t stream) {
  const int64_t n = batch * heads * (past_rows + fresh_rows) * cols;
  if (n == 0) return;
  with_element(dtype, [&](auto e) {
    using T = decltype(e);
    heads_concat_kernel<T><<<grid_for(n), kBlock, 0, stream>>>(static_cast<const T*>(past),
                                                               static_cast<const T*>(fresh), fresh_view,
                                                               static_cast<T*>(out), heads, past_rows, fresh_rows,
                                                               cols, n);
  });
  check_launch("attention key/value gather kernel");
}

void launch_attention_softmax(const AttentionGeometry& g, void* scores, const void* mask, const int64_t* nonpad,
                              void* qk_out, DType dtype, cudaStream_t stream) {
  const int64_t rows = g.batch * g.q_heads * g.q_seq;
  if (rows == 0 || g.total() == 0) return;
  SoftmaxRows s{};
  s.q_heads = g.q_heads;
  s.q_seq = g.q_seq;
  s.total = g.total();
  s.past = g.past;
  s.softcap = g.softcap;
  s.causal = g.causal;
  s.has_past = g.has_past;
  s.left_window = g.left_window;
  s.right_window = g.right_window;
  s.qk_mode = static_cast<int>(g.qk_mode);
  s.has_mask = g.has_mask;
  s.mask_bool = g.mask_bool;
  for (int d = 0; d < 4; ++d) s.mask[d] = g.has_mask ? g.mask4[d] : 1;
  with_element(dtype, [&](auto e) {
    using T = decltype(e);
    attention_softmax_kernel<T><<<blocks_for(rows), kBlock, 0, stream>>>(s, static_cast<T*>(scores), mask, nonpad,
                                                                         static_cast<T*>(qk_out), rows);
  });
  check_launch("attention softmax kernel");
}

}  // namespace dnnx::cuda
