// The ops of ops/elementwise/float_math.h on the CPU, forward and gradient side by side: one
// kernel template per kind and element type, so that each compiles to its own loop.
//   forward   y = f(x)                         (T: the node's type)
//   gradient  dX = dY * f'(x)                  (float32; not for Ceil, Floor, Round, Sign)
#include <type_traits>

#include "backends/cpu/runtime/element_type.h"
#include "ops/elementwise/float_math.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

template <FloatMath K, class T>
class FloatMathKernel final : public Kernel {
 public:
  FloatMathKernel(FloatMathParams params, int64_t n) : params_(params), n_(n) {}
  void run(const KernelArgs& args) const override {
    const T* x = args.in<T>(0);
    T* y = args.out<T>(0);
    for (int64_t i = 0; i < n_; ++i) y[i] = float_math_value<K>(x[i], params_);
  }

 private:
  FloatMathParams params_;
  int64_t n_;
};

template <FloatMath K>
class FloatMathGradKernel final : public GradKernel {
 public:
  FloatMathGradKernel(FloatMathParams params, int64_t n) : params_(params), n_(n) {}
  void run(const GradArgs& args) const override {
    float* dx = args.d_inputs[0];
    if (!dx) return;
    const float *x = args.in(0), *dy = args.d_outputs[0];
    for (int64_t i = 0; i < n_; ++i) dx[i] = dy[i] * float_math_slope<K>(x[i], params_);
  }

 private:
  FloatMathParams params_;
  int64_t n_;
};

// Sign and Shrink take every numeric type; the others float types only (the OpDef refuses the rest).
constexpr bool takes_integers(FloatMath k) { return k == FloatMath::Sign || k == FloatMath::Shrink; }

KernelChoice plan_float_math(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
  KernelChoice choice;
  choice.algorithm = "elementwise";
  const int64_t n = numel(inputs[0].info.shape);
  with_float_math(float_math_kind(node), [&](auto tag) {
    constexpr FloatMath K = decltype(tag)::kind;
    choice.kernel = with_dtype(inputs[0].info.dtype, [&](auto t) -> std::unique_ptr<Kernel> {
      using T = decltype(t);
      if constexpr (std::is_floating_point_v<T> || takes_integers(K)) {
        return std::make_unique<FloatMathKernel<K, T>>(float_math_params(node), n);
      } else {
        node_fail<UnsupportedModelError>(node, std::string("input X must be a float type, got ") +
                                                   dtype_name(inputs[0].info.dtype));
      }
    });
  });
  return choice;
}

GradChoice plan_float_math_grad(const GradRequest& r) {
  GradChoice choice;
  choice.algorithm = "elementwise";
  with_float_math(float_math_kind(r.node), [&](auto tag) {
    choice.kernel = std::make_unique<FloatMathGradKernel<decltype(tag)::kind>>(float_math_params(r.node),
                                                                              numel(r.inputs[0].info.shape));
  });
  return choice;
}

}  // namespace

void register_cpu_float_math_kernels(KernelRegistry& r) {
  for (const char* op : {"Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh",
                         "Softsign", "Celu", "ThresholdedRelu", "Swish", "Shrink"}) {
    r.add(op, plan_float_math).with_gradient(plan_float_math_grad);
  }
  for (const char* op : {"Ceil", "Floor", "Round", "Sign"}) r.add(op, plan_float_math);  // flat: no gradient
}

}  // namespace dnnx
