// Normalizer on the CPU (ops/ml/normalizer.cc has its semantics): one pass for the row's norm,
// one to divide, in float32 as onnxruntime.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

enum class Norm { Max, L1, L2 };

// x * x in T; an integer square wraps (two's complement) rather than overflow.
template <class T>
T square(T x) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(x) * static_cast<U>(x));
  } else {
    return x * x;
  }
}

template <class T>
class NormalizerKernel final : public Kernel {
 public:
  NormalizerKernel(Norm norm, int64_t rows, int64_t cols) : norm_(norm), rows_(rows), cols_(cols) {}
  void run(const KernelArgs& args) const override {
    const T* x = args.in<T>(0);
    float* y = args.out<float>(0);
    for (int64_t r = 0; r < rows_; ++r, x += cols_, y += cols_) {
      float z = norm_ == Norm::Max ? std::numeric_limits<float>::lowest() : 0.f;
      for (int64_t c = 0; c < cols_; ++c) {
        if (norm_ == Norm::Max) z = std::max(z, static_cast<float>(x[c]));
        else if (norm_ == Norm::L1) z += static_cast<float>(std::abs(x[c]));
        else z += static_cast<float>(square(x[c]));
      }
      for (int64_t c = 0; c < cols_; ++c) {
        if (z == 0.f) y[c] = static_cast<float>(x[c]);
        else if (norm_ == Norm::L2) {
          const float v = std::sqrt(static_cast<float>(square(x[c])) / z);
          y[c] = x[c] < 0 ? -v : v;
        } else {
          y[c] = static_cast<float>(x[c]) / z;
        }
      }
    }
  }

 private:
  Norm norm_;
  int64_t rows_, cols_;
};

KernelChoice plan_normalizer(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
  const Shape& x = inputs[0].info.shape;
  const int64_t rows = x.size() == 1 ? 1 : x[0], cols = x.back();
  const std::string name = node.attr_string("norm", "MAX");
  const Norm norm = name == "L1" ? Norm::L1 : name == "L2" ? Norm::L2 : Norm::Max;
  KernelChoice choice;
  choice.algorithm = "rows";
  switch (inputs[0].info.dtype) {
    case DType::Float64: choice.kernel = std::make_unique<NormalizerKernel<double>>(norm, rows, cols); break;
    case DType::Int64: choice.kernel = std::make_unique<NormalizerKernel<int64_t>>(norm, rows, cols); break;
    case DType::Int32: choice.kernel = std::make_unique<NormalizerKernel<int32_t>>(norm, rows, cols); break;
    default: choice.kernel = std::make_unique<NormalizerKernel<float>>(norm, rows, cols);
  }
  return choice;
}

}  // namespace

void register_cpu_normalizer_kernels(KernelRegistry& r) {
  r.add("ai.onnx.ml::Normalizer", plan_normalizer).with_dtypes({DType::Float32, DType::Float64});
}

}  // namespace dnnx
