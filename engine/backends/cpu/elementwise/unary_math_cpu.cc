// The unary float ops of ops/elementwise/unary_math.h on the CPU, forward and gradient side by side: one
// kernel template per direction over the op's kind, so that each kind compiles to its own loop.
//   forward   y = f(x)
//   gradient  dX = dY * f'(x) (f' from x and the kept y: ops/elementwise/unary_math.h's unary_slope)
// Abs's forward is activation_cpu.cc's (it also takes integers); its float gradient is here.
#include <algorithm>

#include "backends/cpu/elementwise/exp_rows_cpu.h"
#include "backends/cpu/elementwise/fixed_chunks.h"
#include "backends/cpu/elementwise/hard_swish_cpu.h"
#include "backends/cpu/elementwise/tanh_rows_cpu.h"
#include "backends/cpu/elementwise/vector_math.h"
#include "backends/cpu/runtime/fast_math.h"
#include "ops/elementwise/unary_math.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

// HardSigmoid and HardSwish in 8 lanes where the CPU has AVX2 (unary_math.h's fmaxf/fminf form
// stays scalar in GCC, for fmaxf's NaN rule). HardSigmoid clamps with comparisons, so a NaN
// passes through as in onnxruntime (fmaxf(0, fminf(1, NaN)) would give 1); HardSwish is
// x * clamp(x / 6 + 0.5), NaN for a NaN x either way (hard_swish_cpu.h).
DNNX_VECTOR_CLONES void hard_sigmoid_rows(const float* x, float* y, int64_t n, float alpha, float beta) {
  for (int64_t i = 0; i < n; ++i) {
    float v = alpha * x[i] + beta;
    v = v < 0.0f ? 0.0f : v;
    y[i] = v > 1.0f ? 1.0f : v;
  }
}

// Erf and Gelu on vector_math.h's erf, in the compiler's vector clones (libm's erff is a scalar
// call; the formula is unary_math.h's, as onnxruntime's Gelu: 0.5 x (1 + erf(x / sqrt 2))). The
// tanh form, 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), is tanh_rows_cpu.cc's.
DNNX_VECTOR_CLONES_AVX512 void erf_rows(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = fast_erff(x[i]);
}

DNNX_VECTOR_CLONES_AVX512 void gelu_rows(const float* x, float* y, int64_t n) {
  using namespace unary_detail;
  for (int64_t i = 0; i < n; ++i) y[i] = 0.5f * x[i] * (1.0f + fast_erff(x[i] * kInvSqrt2));
}

template <UnaryMath K>
class UnaryMathKernel final : public Kernel {
 public:
  UnaryMathKernel(UnaryParams params, int64_t n) : params_(params), n_(n) {}
  void run(const KernelArgs& args) const override {
    const float* x = args.in(0);
    float* y = args.out(0);
    if constexpr (K == UnaryMath::HardSigmoid) {
      hard_sigmoid_rows(x, y, n_, params_.alpha, params_.beta);
    } else if constexpr (K == UnaryMath::HardSwish) {
      hard_swish_rows(x, y, n_);
    } else if constexpr (K == UnaryMath::Exp) {
      exp_rows(x, y, n_);  // Note [exp rows]
    } else if constexpr (K == UnaryMath::Erf || K == UnaryMath::Gelu || K == UnaryMath::GeluTanh) {
      // Note [fixed chunks]: the same bits at any thread count
      for_fixed_chunks(n_, kTranscendentalChunk, [&](int64_t b, int64_t e) {
        if constexpr (K == UnaryMath::Erf) erf_rows(x + b, y + b, e - b);
        if constexpr (K == UnaryMath::Gelu) gelu_rows(x + b, y + b, e - b);
        if constexpr (K == UnaryMath::GeluTanh) gelu_tanh_rows(x + b, y + b, e - b);
      });
    } else {
      for (int64_t i = 0; i < n_; ++i) y[i] = unary_value<K>(x[i], params_);
    }
  }

 private:
  UnaryParams params_;
  int64_t n_;
};

template <UnaryMath K>
class UnaryMathGradKernel final : public GradKernel {
 public:
  UnaryMathGradKernel(UnaryParams params, int64_t n) : params_(params), n_(n) {}
  void run(const GradArgs& args) const override {
    float* dx = args.d_inputs[0];
    if (!dx) return;
    const float *x = args.in(0), *y = args.out(0), *dy = args.d_outputs[0];
    for (int64_t i = 0; i < n_; ++i) dx[i] = dy[i] * unary_slope<K>(x[i], y[i], params_);
  }

 private:
  UnaryParams params_;
  int64_t n_;
};

KernelChoice plan_unary_math(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
  KernelChoice choice;
  choice.algorithm = "elementwise";
  with_unary_math(unary_math_kind(node), [&](auto tag) {
    choice.kernel = std::make_unique<UnaryMathKernel<decltype(tag)::kind>>(unary_math_params(node),
                                                                          numel(inputs[0].info.shape));
  });
  return choice;
}

GradChoice plan_unary_math_grad(const GradRequest& r) {
  GradChoice choice;
  choice.algorithm = "elementwise";
  with_unary_math(unary_math_kind(r.node), [&](auto tag) {
    choice.kernel = std::make_unique<UnaryMathGradKernel<decltype(tag)::kind>>(unary_math_params(r.node),
                                                                              numel(r.inputs[0].info.shape));
  });
  return choice;
}

}  // namespace

void register_cpu_unary_math_kernels(KernelRegistry& r) {
  for (const char* op : {"Exp", "Log", "Sqrt", "Reciprocal", "Erf", "Gelu", "HardSigmoid", "HardSwish", "Softplus",
                         "Mish"}) {
    r.add(op, plan_unary_math).with_gradient(plan_unary_math_grad);
  }
  r.at("Abs").with_gradient(plan_unary_math_grad);  // float Abs (the forward: activation_cpu.cc)
}

}  // namespace dnnx
