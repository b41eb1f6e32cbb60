// Attention on the CPU (ops/attention/attention.h has the shapes): per (batch, query head), one
// GEMM for the scores, one row pass for softcap, the bias of Note [attention bias] and the
// softmax, and one GEMM for P V. With a past cache (or present_* asked for), K and V are first
// gathered into present [B, Hkv, T, D] (an output, or the workspace); packed 3-D inputs are
// read in place through their row strides, no transpose.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "backends/cpu/dense/blas.h"
#include "backends/cpu/runtime/thread_pool.h"
#include "ops/attention/attention.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

using namespace attention_slot;

// Row-major C[m, n] = alpha * A[m, k] op(B) (beta 0); float goes to OpenBLAS, other types
// (float64, float16 later) to a plain loop. k == 0 gives zeros.
template <class T>
void gemm(bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, const T* b, int64_t ldb,
          T* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      T sum = 0;
      for (int64_t p = 0; p < k; ++p) sum += a[i * lda + p] * (trans_b ? b[j * ldb + p] : b[p * ldb + j]);
      c[i * ldc + j] = alpha * sum;
    }
  }
}
template <>
void gemm<float>(bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                 const float* b, int64_t ldb, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, 0.0f);
    return;
  }
  sgemm_serial(false, trans_b, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), alpha, a,
               static_cast<int>(lda), b, static_cast<int>(ldb), 0.0f, c, static_cast<int>(ldc));
}

// Where head h's rows of one tensor lie: element (b, h, row, col) at b*batch + h*head + row*row_stride + col.
struct Layout {
  int64_t batch, head, row;
};
Layout heads_layout(int64_t heads, int64_t rows, int64_t cols) { return {heads * rows * cols, rows * cols, cols}; }
Layout packed_layout(int64_t heads, int64_t rows, int64_t cols) { return {rows * heads * cols, cols, heads * cols}; }

template <class T>
class AttentionKernel final : public Kernel {
 public:
  AttentionKernel(AttentionGeometry g, bool want_present_k, bool want_present_v, bool want_qk, int workers)
      : g_(std::move(g)), want_pk_(want_present_k), want_pv_(want_present_v), want_qk_(want_qk), workers_(workers) {}

  // Workspace: present K and V when they are gathered but not asked for, then per worker the
  // scores [S, T] and one bias row [T].
  size_t workspace_bytes() const {
    return (gathered_k_elems() + gathered_v_elems() + workers_ * row_scratch()) * sizeof(T);
  }

  void run(const KernelArgs& args) const override {
    T* ws = static_cast<T*>(args.workspace);
    const T* k = args.in<T>(kK);
    const T* v = args.in<T>(kV);
    Layout kl = g_.packed ? packed_layout(g_.kv_heads, g_.kv_new, g_.head) : heads_layout(g_.kv_heads, g_.kv_new, g_.head);
    Layout vl = g_.packed ? packed_layout(g_.kv_heads, g_.kv_new, g_.v_head)
                          : heads_layout(g_.kv_heads, g_.kv_new, g_.v_head);
    if (gathers()) {
      T* pk = want_pk_ ? args.out<T>(kPresentKey) : ws;
      T* pv = want_pv_ ? args.out<T>(kPresentValue) : ws + gathered_k_elems();
      concat_cache(g_.has_past ? args.in<T>(kPastKey) : nullptr, k, kl, g_.head, pk);
      concat_cache(g_.has_past ? args.in<T>(kPastValue) : nullptr, v, vl, g_.v_head, pv);
      k = pk;
      v = pv;
      kl = heads_layout(g_.kv_heads, g_.total(), g_.head);
      vl = heads_layout(g_.kv_heads, g_.total(), g_.v_head);
    }
    T* scratch = ws + gathered_k_elems() + gathered_v_elems();
    const int64_t* nonpad = g_.has_nonpad ? args.in<int64_t>(kNonpad) : nullptr;
    cpu_thread_pool().parallel_for(g_.batch * g_.q_heads, [&](int64_t begin, int64_t end, int worker) {
      for (int64_t item = begin; item < end; ++item) {
        run_head(args, k, kl, v, vl, nonpad, item / g_.q_heads, item % g_.q_heads, scratch + worker * row_scratch());
      }
    }, workers_);
  }

 private:
  bool gathers() const { return g_.has_past || want_pk_ || want_pv_; }
  int64_t gathered_k_elems() const {
    return gathers() && !want_pk_ ? g_.batch * g_.kv_heads * g_.total() * g_.head : 0;
  }
  int64_t gathered_v_elems() const {
    return gathers() && !want_pv_ ? g_.batch * g_.kv_heads * g_.total() * g_.v_head : 0;
  }
  int64_t row_scratch() const { return g_.q_seq * g_.total() + g_.total(); }

  // present [B, Hkv, T, cols] = past [B, Hkv, P, cols] then the new rows (in layout `nl`).
  void concat_cache(const T* past, const T* fresh, const Layout& nl, int64_t cols, T* present) const {
    const int64_t t = g_.total();
    for (int64_t b = 0; b < g_.batch; ++b) {
      for (int64_t h = 0; h < g_.kv_heads; ++h) {
        T* dst = present + (b * g_.kv_heads + h) * t * cols;
        if (past) std::copy_n(past + (b * g_.kv_heads + h) * g_.past * cols, g_.past * cols, dst);
        for (int64_t r = 0; r < g_.kv_new; ++r) {
          std::copy_n(fresh + b * nl.batch + h * nl.head + r * nl.row, cols, dst + (g_.past + r) * cols);
        }
      }
    }
  }

  // Note [attention bias]: row i of (b, h) into bias[T].
  void bias_row(const KernelArgs& args, const int64_t* nonpad, int64_t b, int64_t h, int64_t i, T* bias) const {
    const int64_t t = g_.total();
    const T ninf = -std::numeric_limits<T>::infinity();
    std::fill(bias, bias + t, T(0));
    if (g_.has_mask) {
      const Shape& m = g_.mask4;
      const int64_t offset = (((m[0] == 1 ? 0 : b) * m[1] + (m[1] == 1 ? 0 : h)) * m[2] + (m[2] == 1 ? 0 : i)) * m[3];
      if (g_.mask_bool) {
        const bool* row = args.in<bool>(kMask) + offset;
        for (int64_t j = 0; j < m[3]; ++j) bias[j] = row[j] ? T(0) : ninf;
      } else {
        std::copy_n(args.in<T>(kMask) + offset, m[3], bias);
      }
      std::fill(bias + m[3], bias + t, ninf);
    }
    const int64_t offset = g_.has_past ? g_.past : nonpad ? nonpad[b] - g_.q_seq : 0;
    for (int64_t j = 0; j < t; ++j) {
      const int64_t diff = i + offset - j;  // how far key j lies before the query's position
      bool masked = g_.causal && diff < 0;
      masked = masked || (g_.left_window >= 0 && diff > g_.left_window);
      masked = masked || (g_.right_window >= 0 && -diff > g_.right_window);
      masked = masked || (nonpad && j >= nonpad[b]);
      if (masked) bias[j] = ninf;
    }
  }

  void run_head(const KernelArgs& args, const T* k, const Layout& kl, const T* v, const Layout& vl,
                const int64_t* nonpad, int64_t b, int64_t h, T* scratch) const {
    const int64_t t = g_.total(), s = g_.q_seq;
    const int64_t kvh = h / (g_.q_heads / g_.kv_heads);
    const Layout ql = g_.packed ? packed_layout(g_.q_heads, s, g_.head) : heads_layout(g_.q_heads, s, g_.head);
    const Layout yl = g_.packed ? packed_layout(g_.q_heads, s, g_.v_head) : heads_layout(g_.q_heads, s, g_.v_head);
    const T* q = args.in<T>(kQ) + b * ql.batch + h * ql.head;
    T* scores = scratch;       // [S, T]
    T* bias = scratch + s * t;  // [T]
    gemm<T>(true, s, t, g_.head, static_cast<T>(g_.scale), q, ql.row, k + b * kl.batch + kvh * kl.head, kl.row,
            scores, t);
    T* qk_out = want_qk_ ? args.out<T>(kQk) + ((b * g_.q_heads + h) * s) * t : nullptr;
    for (int64_t i = 0; i < s; ++i) {
      bias_row(args, nonpad, b, h, i, bias);
      softmax_row(scores + i * t, bias, qk_out ? qk_out + i * t : nullptr);
    }
    gemm<T>(false, s, g_.v_head, t, T(1), scores, t, v + b * vl.batch + kvh * vl.head, vl.row,
            args.out<T>(kY) + b * yl.batch + h * yl.head, yl.row);
  }

  // Scores row -> probabilities in place: softcap, + bias, softmax over the unmasked keys (a
  // masked key's probability is 0 whatever its score; a fully masked row is all 0).
  void softmax_row(T* row, const T* bias, T* qk_out) const {
    const int64_t t = g_.total();
    if (qk_out && g_.qk_mode == QkOutput::Scores) std::copy_n(row, t, qk_out);  // before softcap (onnxruntime's)
    if (g_.softcap > 0) {
      const T cap = static_cast<T>(g_.softcap);
      for (int64_t j = 0; j < t; ++j) row[j] = cap * std::tanh(row[j] / cap);
    }
    if (qk_out && g_.qk_mode == QkOutput::Softcapped) std::copy_n(row, t, qk_out);
    const T ninf = -std::numeric_limits<T>::infinity();
    T max = ninf;
    bool any = false;
    for (int64_t j = 0; j < t; ++j) {
      row[j] += bias[j];
      if (bias[j] != ninf) {
        max = any ? std::max(max, row[j]) : row[j];
        any = true;
      }
    }
    if (qk_out && g_.qk_mode == QkOutput::WithBias) std::copy_n(row, t, qk_out);
    T sum = 0;
    for (int64_t j = 0; j < t; ++j) {
      row[j] = bias[j] == ninf ? T(0) : std::exp(row[j] - max);
      sum += row[j];
    }
    if (any && sum != T(0)) {
      for (int64_t j = 0; j < t; ++j) row[j] /= sum;
    }
    if (qk_out && g_.qk_mode == QkOutput::Probabilities) std::copy_n(row, t, qk_out);
  }

  AttentionGeometry g_;
  bool want_pk_, want_pv_, want_qk_;
  int workers_;
};

template <class T>
KernelChoice plan_attention_typed(const Node& node, const std::vector<ValueInfo>& inputs) {
  AttentionGeometry g = attention_geometry(node, inputs);
  const int workers = plan_workers(g.batch * g.q_heads, g.q_seq * g.total() * (g.head + g.v_head));
  auto kernel = std::make_unique<AttentionKernel<T>>(g, node.has_output(kPresentKey), node.has_output(kPresentValue),
                                                     node.has_output(kQk), workers);
  KernelChoice choice;
  choice.workspace_bytes = kernel->workspace_bytes();
  choice.algorithm = with_threads("gemm+softmax+gemm", workers);
  choice.kernel = std::move(kernel);
  return choice;
}

KernelChoice plan_attention(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
  return plan_attention_typed<float>(node, inputs);
}

}  // namespace

void register_cpu_attention_kernels(KernelRegistry& r) { r.add("Attention", plan_attention); }

}  // namespace dnnx
