// LeakyRelu, Elu, Selu (float32) and Clip (every number type but the halves) on the CPU. Clip's
// bounds come from its attributes (opset < 11) or, when given, its scalar inputs, read as the kernel runs.
#include <cmath>
#include <limits>

#include "ops/elementwise/param_activation_grad.h"  // kSeluAlpha, kSeluGamma
#include "runtime/kernel_registry.h"
#include "backends/cpu/runtime/element_type.h"

namespace dnnx {

namespace {

constexpr int kClipBoundsAsInputsOpset = 11;
constexpr size_t kClipMin = 1, kClipMax = 2;

enum class AlphaActivation { LeakyRelu, Elu, Selu };

class AlphaActivationKernel final : public Kernel {
 public:
  AlphaActivationKernel(AlphaActivation kind, float alpha, float gamma, int64_t n)
      : kind_(kind), alpha_(alpha), gamma_(gamma), n_(n) {}

  void run(const KernelArgs& args) const override {
    const float* x = args.in(0);
    float* y = args.out(0);
    if (kind_ == AlphaActivation::LeakyRelu) {
      for (int64_t i = 0; i < n_; ++i) y[i] = x[i] >= 0.0f ? x[i] : alpha_ * x[i];
    } else if (kind_ == AlphaActivation::Selu) {
      for (int64_t i = 0; i < n_; ++i) y[i] = gamma_ * (x[i] > 0.0f ? x[i] : alpha_ * std::expm1(x[i]));
    } else {
      for (int64_t i = 0; i < n_; ++i) y[i] = x[i] >= 0.0f ? x[i] : alpha_ * std::expm1(x[i]);
    }
  }

 private:
  AlphaActivation kind_;
  float alpha_, gamma_;
  int64_t n_;
};

KernelFactory alpha_factory(AlphaActivation kind, float default_alpha) {
  return [kind, default_alpha](const Node& node, const std::vector<ValueInfo>& inputs,
                               const std::vector<TensorInfo>&) {
    KernelChoice choice;
    choice.algorithm = "elementwise";
    choice.kernel = std::make_unique<AlphaActivationKernel>(kind, node.attr_float("alpha", default_alpha),
                                                            node.attr_float("gamma", kSeluGamma),
                                                            numel(inputs[0].info.shape));
    return choice;
  };
}

// Clip's bounds before the run: attribute values (opset < 11), or the type's limits, replaced by
// the min/max inputs when those are given.
template <class T>
class ClipKernel final : public Kernel {
 public:
  ClipKernel(int64_t n, T lo, T hi, bool min_input, bool max_input)
      : n_(n), lo_(lo), hi_(hi), min_input_(min_input), max_input_(max_input) {}

  void run(const KernelArgs& args) const override {
    const T* x = args.in<T>(0);
    T* y = args.out<T>(0);
    const T lo = min_input_ ? *args.in<T>(kClipMin) : lo_;
    const T hi = max_input_ ? *args.in<T>(kClipMax) : hi_;
    // max first, then min: with lo > hi every element becomes hi, as ONNX specifies.
    for (int64_t i = 0; i < n_; ++i) {
      const T v = x[i] < lo ? lo : x[i];
      y[i] = v > hi ? hi : v;
    }
  }

 private:
  int64_t n_;
  T lo_, hi_;
  bool min_input_, max_input_;
};

KernelChoice plan_clip(const Node& node, const std::vector<ValueInfo>& inputs,
                       const std::vector<TensorInfo>& outputs) {
  const bool attrs = node.opset < kClipBoundsAsInputsOpset;
  const bool min_input = !attrs && kClipMin < inputs.size() && inputs[kClipMin].present;
  const bool max_input = !attrs && kClipMax < inputs.size() && inputs[kClipMax].present;
  KernelChoice choice;
  choice.algorithm = "elementwise";
  choice.kernel = with_number(outputs[0].dtype, [&](auto t) -> std::unique_ptr<Kernel> {
    using T = decltype(t);
    T lo = std::numeric_limits<T>::lowest(), hi = std::numeric_limits<T>::max();
    if constexpr (std::is_floating_point_v<T>) {  // the attributes (opset < 11, float types only)
      if (node.has_attr("min")) lo = static_cast<T>(node.attr_float("min", 0.0f));
      if (node.has_attr("max")) hi = static_cast<T>(node.attr_float("max", 0.0f));
    }
    return std::make_unique<ClipKernel<T>>(numel(outputs[0].shape), lo, hi, min_input, max_input);
  });
  return choice;
}

}  // namespace

void register_cpu_param_activation_kernels(KernelRegistry& r) {
  r.add("LeakyRelu", alpha_factory(AlphaActivation::LeakyRelu, 0.01f));
  r.add("Elu", alpha_factory(AlphaActivation::Elu, 1.0f));
  r.add("Selu", alpha_factory(AlphaActivation::Selu, kSeluAlpha));
  r.add("Clip", plan_clip).with_dtypes(number_types());
}

}  // namespace dnnx
