// Sum, Max, Min on the CPU for float32, float64 and every integer type (the halves through float32): y starts as input 0 broadcast to the
// output, then folds in each further input (broadcast the same way, see broadcast_walk.h).
// Mean (float types) is the Sum, divided by the number of inputs at the end.
// Max and Min propagate NaN, as numpy's maximum/minimum and onnxruntime do.
// The gradients of Sum and Mean (float32): input i receives dY summed over the dims it was
// broadcast along (broadcast_reduce, the broadcast's adjoint), times 1 for Sum and 1 / n for Mean
// (n inputs).
#include <cmath>
#include <cstring>
#include <vector>

#include "backends/cpu/elementwise/broadcast_sum.h"
#include "backends/cpu/elementwise/broadcast_walk.h"
#include "runtime/kernel_registry.h"
#include "backends/cpu/runtime/element_type.h"

namespace dnnx {

namespace {

enum class Fold { Sum, Max, Min, Mean };

template <class T>
bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) return std::isnan(v);
  return false;
}

template <Fold F, class T>
inline T fold(T acc, T v) {
  if constexpr ((F == Fold::Sum || F == Fold::Mean) && std::is_integral_v<T>) {
    return static_cast<T>(static_cast<uint64_t>(acc) + static_cast<uint64_t>(v));  // wraps, as Add
  } else if constexpr (F == Fold::Sum || F == Fold::Mean) {
    return acc + v;
  } else if constexpr (F == Fold::Max) {
    return (v > acc || is_nan(v)) ? v : acc;
  } else {
    return (v < acc || is_nan(v)) ? v : acc;
  }
}

template <Fold F, class T>
class VariadicKernel final : public Kernel {
 public:
  explicit VariadicKernel(std::vector<BroadcastWalk> walks) : walks_(std::move(walks)) {}

  void run(const KernelArgs& args) const override {
    T* y = args.out<T>(0);
    for (size_t i = 0; i < walks_.size(); ++i) {
      const T* x = args.in<T>(i);
      for_each_run(walks_[i], [&](int64_t out, int64_t in, int64_t count, int64_t step) {
        T* dst = y + out;
        const T* src = x + in;
        if (i == 0 && step) {
          std::memcpy(dst, src, static_cast<size_t>(count) * sizeof(T));
        } else if (i == 0) {
          std::fill(dst, dst + count, *src);
        } else if (step) {
          for (int64_t k = 0; k < count; ++k) dst[k] = fold<F>(dst[k], src[k]);
        } else {
          const T v = *src;
          for (int64_t k = 0; k < count; ++k) dst[k] = fold<F>(dst[k], v);
        }
      });
    }
    if constexpr (F == Fold::Mean) {
      const T count = static_cast<T>(walks_.size());
      const int64_t n = walks_.empty() ? 0 : walks_[0].total;
      for (int64_t k = 0; k < n; ++k) y[k] /= count;
    }
  }

 private:
  std::vector<BroadcastWalk> walks_;  // one per input, to the output's shape
};

template <Fold F>
KernelChoice plan_variadic(const Node&, const std::vector<ValueInfo>& inputs,
                           const std::vector<TensorInfo>& outputs) {
  std::vector<BroadcastWalk> walks;
  bool broadcast = false;
  for (const ValueInfo& v : inputs) {
    walks.push_back(broadcast_walk(v.info.shape, outputs[0].shape));
    broadcast = broadcast || v.info.shape != outputs[0].shape;
  }
  KernelChoice choice;
  choice.algorithm = broadcast ? "broadcast" : "elementwise";
  choice.kernel = with_number(outputs[0].dtype, [&](auto t) -> std::unique_ptr<Kernel> {
    return std::make_unique<VariadicKernel<F, decltype(t)>>(std::move(walks));
  });
  return choice;
}

class VariadicSumGradKernel final : public GradKernel {
 public:
  VariadicSumGradKernel(std::vector<BroadcastWalk> walks, std::vector<int64_t> sizes, float scale)
      : walks_(std::move(walks)), sizes_(std::move(sizes)), scale_(scale) {}

  void run(const GradArgs& args) const override {
    const float* dy = args.d_outputs[0];
    for (size_t i = 0; i < walks_.size(); ++i) {
      float* dx = args.d_inputs[i];
      if (!dx) continue;
      broadcast_reduce(walks_[i], dy, dx, sizes_[i]);
      if (scale_ != 1.0f) {
        for (int64_t k = 0; k < sizes_[i]; ++k) dx[k] *= scale_;
      }
    }
  }

 private:
  std::vector<BroadcastWalk> walks_;  // one per input, to the output's shape
  std::vector<int64_t> sizes_;        // each input's element count
  float scale_;                       // 1 (Sum) or 1 / n (Mean)
};

template <Fold F>
GradChoice plan_variadic_sum_grad(const GradRequest& r) {
  static_assert(F == Fold::Sum || F == Fold::Mean, "only Sum and Mean are linear");
  std::vector<BroadcastWalk> walks;
  std::vector<int64_t> sizes;
  for (const ValueInfo& v : r.inputs) {
    walks.push_back(broadcast_walk(v.info.shape, r.outputs[0].shape));
    sizes.push_back(numel(v.info.shape));
  }
  const float scale = F == Fold::Mean ? 1.0f / static_cast<float>(r.inputs.size()) : 1.0f;
  GradChoice choice;
  choice.algorithm = "broadcast reduce";
  choice.kernel = std::make_unique<VariadicSumGradKernel>(std::move(walks), std::move(sizes), scale);
  return choice;
}

}  // namespace

void register_cpu_variadic_kernels(KernelRegistry& r) {
  r.add("Sum", plan_variadic<Fold::Sum>).with_dtypes(number_types()).with_gradient(plan_variadic_sum_grad<Fold::Sum>);
  r.add("Max", plan_variadic<Fold::Max>).with_dtypes(number_types());
  r.add("Min", plan_variadic<Fold::Min>).with_dtypes(number_types());
  r.add("Mean", plan_variadic<Fold::Mean>).with_dtypes(number_types()).with_gradient(plan_variadic_sum_grad<Fold::Mean>);
}

}  // namespace dnnx
