// LinearAttention on the CPU (ops/attention/linear_attention.h has the shapes and the rules):
// the (batch, key/value head) pairs are independent, split across workers; each runs its tokens
// in order on a state [Dk, Dv] kept in present_state (or the workspace when present_state is not
// asked for), then reads it once per query head of its group.
#include <algorithm>
#include <cmath>
#include <vector>

#include "backends/cpu/runtime/thread_pool.h"
#include "ops/attention/linear_attention.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

using namespace linear_attention_slot;

template <class T>
class LinearAttentionKernel final : public Kernel {
 public:
  LinearAttentionKernel(LinearAttentionGeometry g, bool want_state, int workers)
      : g_(g), want_state_(want_state), workers_(workers) {}

  size_t state_elements() const { return static_cast<size_t>(g_.batch * g_.kv_heads * g_.key_head * g_.value_head); }
  size_t workspace_bytes() const { return want_state_ ? 0 : state_elements() * sizeof(T); }

  void run(const KernelArgs& args) const override {
    T* state = want_state_ ? args.out<T>(kPresentState) : static_cast<T*>(args.workspace);
    const T* past = g_.has_past ? args.in<T>(kPastState) : nullptr;
    if (past) {
      std::copy_n(past, state_elements(), state);
    } else {
      std::fill_n(state, state_elements(), T(0));
    }
    const int64_t pairs = g_.batch * g_.kv_heads;
    cpu_thread_pool().parallel_for(
        pairs,
        [&](int64_t begin, int64_t end, int) {
          std::vector<T> update(static_cast<size_t>(g_.value_head));
          for (int64_t pair = begin; pair < end; ++pair) {
            run_pair(args, pair / g_.kv_heads, pair % g_.kv_heads, state + pair * g_.key_head * g_.value_head,
                     update.data());
          }
        },
        workers_);
  }

 private:
  // Key/value head h of batch b over every token; s: its state [Dk, Dv], u: Dv scratch.
  void run_pair(const KernelArgs& args, int64_t b, int64_t h, T* s, T* u) const {
    const int64_t dk = g_.key_head, dv = g_.value_head, group = g_.q_heads / g_.kv_heads;
    const T scale = static_cast<T>(g_.scale);
    for (int64_t t = 0; t < g_.tokens; ++t) {
      const int64_t token = b * g_.tokens + t;  // the row of [B, T, ...]
      const T* k = args.in<T>(kKey) + (token * g_.kv_heads + h) * dk;
      const T* v = args.in<T>(kValue) + (token * g_.kv_heads + h) * dv;
      if (g_.gated) {
        // decay [B, T, Hkv] or [B, T, Hkv*Dk]: row i of S scaled by exp(g[i]).
        const T* decay = args.in<T>(kDecay) + (g_.decay_per_key ? (token * g_.kv_heads + h) * dk : token * g_.kv_heads + h);
        for (int64_t i = 0; i < dk; ++i) {
          const T factor = std::exp(decay[g_.decay_per_key ? i : 0]);
          for (int64_t m = 0; m < dv; ++m) s[i * dv + m] *= factor;
        }
      }
      if (g_.delta) {
        // u = beta * (v - S^T k), from the decayed state.
        const T beta = args.in<T>(kBeta)[g_.beta_shared ? token : token * g_.kv_heads + h];
        for (int64_t m = 0; m < dv; ++m) u[m] = 0;
        for (int64_t i = 0; i < dk; ++i) {
          for (int64_t m = 0; m < dv; ++m) u[m] += s[i * dv + m] * k[i];
        }
        for (int64_t m = 0; m < dv; ++m) u[m] = beta * (v[m] - u[m]);
      } else {
        std::copy_n(v, dv, u);
      }
      for (int64_t i = 0; i < dk; ++i) {
        for (int64_t m = 0; m < dv; ++m) s[i * dv + m] += k[i] * u[m];
      }
      for (int64_t j = 0; j < group; ++j) {
        const int64_t qh = h * group + j;
        const T* q = args.in<T>(kQuery) + (token * g_.q_heads + qh) * dk;
        T* o = args.out<T>(kOutput) + (token * g_.q_heads + qh) * dv;
        for (int64_t m = 0; m < dv; ++m) o[m] = 0;
        for (int64_t i = 0; i < dk; ++i) {
          for (int64_t m = 0; m < dv; ++m) o[m] += q[i] * s[i * dv + m];
        }
        for (int64_t m = 0; m < dv; ++m) o[m] *= scale;
      }
    }
  }

  LinearAttentionGeometry g_;
  bool want_state_;
  int workers_;
};

KernelChoice plan_linear_attention(const Node& node, const std::vector<ValueInfo>& inputs,
                                   const std::vector<TensorInfo>&) {
  const LinearAttentionGeometry g = linear_attention_geometry(node, inputs);
  const int workers = plan_workers(g.batch * g.kv_heads,
                                   g.tokens * g.key_head * g.value_head * (3 + g.q_heads / g.kv_heads));
  auto kernel = std::make_unique<LinearAttentionKernel<float>>(g, node.has_output(kPresentState), workers);
  KernelChoice choice;
  choice.workspace_bytes = kernel->workspace_bytes();
  choice.algorithm = with_threads("recurrent", workers);
  choice.kernel = std::move(kernel);
  return choice;
}

}  // namespace

void register_cpu_linear_attention_kernels(KernelRegistry& r) { r.add("LinearAttention", plan_linear_attention); }

}  // namespace dnnx
