// CausalConvWithState on the CPU (ops/conv/causal_conv_with_state.h has the shapes): one pass
// per (batch, channel) row, split across workers. The padded row concat(past_state, input) is
// never built: position j < k-1 reads the past (or 0), the others the input.
#include <algorithm>
#include <cmath>

#include "backends/cpu/runtime/thread_pool.h"
#include "ops/conv/causal_conv_with_state.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

using namespace causal_conv_slot;

template <class T>
class CausalConvKernel final : public Kernel {
 public:
  CausalConvKernel(CausalConvGeometry g, bool want_state, int workers) : g_(g), want_state_(want_state), workers_(workers) {}

  void run(const KernelArgs& args) const override {
    cpu_thread_pool().parallel_for(
        g_.batch * g_.channels,
        [&](int64_t begin, int64_t end, int) {
          for (int64_t row = begin; row < end; ++row) run_row(args, row);
        },
        workers_);
  }

 private:
  // Row (b, c) = row of [B, C, ...].
  void run_row(const KernelArgs& args, int64_t row) const {
    const int64_t k = g_.kernel, pad = k - 1, len = g_.length, c = row % g_.channels;
    const T* x = args.in<T>(kInput) + row * len;
    const T* past = g_.has_past ? args.in<T>(kPastState) + row * pad : nullptr;
    const T* w = args.in<T>(kWeight) + c * k;
    const T bias = g_.has_bias ? args.in<T>(kBias)[c] : T(0);
    // p[j] of the padded row [k-1+L].
    auto padded = [&](int64_t j) { return j >= pad ? x[j - pad] : past ? past[j] : T(0); };
    T* y = args.out<T>(kOutput) + row * len;
    for (int64_t l = 0; l < len; ++l) {
      T sum = bias;
      if (l >= pad) {
        const T* window = x + (l - pad);  // inside the input: no branch per tap
        for (int64_t i = 0; i < k; ++i) sum += w[i] * window[i];
      } else {
        for (int64_t i = 0; i < k; ++i) sum += w[i] * padded(l + i);
      }
      y[l] = g_.silu ? sum / (T(1) + std::exp(-sum)) : sum;
    }
    if (want_state_) {
      T* state = args.out<T>(kPresentState) + row * pad;
      for (int64_t j = 0; j < pad; ++j) state[j] = padded(len + j);
    }
  }

  CausalConvGeometry g_;
  bool want_state_;
  int workers_;
};

KernelChoice plan_causal_conv(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
  const CausalConvGeometry g = causal_conv_geometry(node, inputs);
  const int workers = plan_workers(g.batch * g.channels, g.length * g.kernel);
  KernelChoice choice;
  choice.algorithm = with_threads("direct", workers);
  choice.kernel = std::make_unique<CausalConvKernel<float>>(g, node.has_output(kPresentState), workers);
  return choice;
}

}  // namespace

void register_cpu_causal_conv_with_state_kernels(KernelRegistry& r) {
  r.add("CausalConvWithState", plan_causal_conv);
}

}  // namespace dnnx
