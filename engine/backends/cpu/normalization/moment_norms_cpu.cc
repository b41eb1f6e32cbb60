// RMSNormalization, LpNormalization and MeanVarianceNormalization on the CPU (the meaning:
// ops/normalization/moment_norms.h), one loop each over the element type T (float types),
// accumulating in T. Their gradients: moment_norms_grad_cpu.cc.
#include <cmath>
#include <type_traits>

#include "backends/cpu/reduce/reduce_cells.h"
#include "backends/cpu/runtime/element_type.h"
#include "ops/normalization/moment_norms.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

// x [rows, row_len] -> y = x / sqrt(mean(x^2) + epsilon) * scale[scale_index[j]].
template <class T>
class RmsNormKernel final : public Kernel {
 public:
  explicit RmsNormKernel(RmsNormGeometry g) : g_(std::move(g)) {}
  void run(const KernelArgs& args) const override {
    const T* x = args.in<T>(0);
    const T* scale = args.in<T>(1);
    T* y = args.out<T>(0);
    for (int64_t r = 0; r < g_.rows; ++r) {
      const T* row = x + r * g_.row_len;
      T* out = y + r * g_.row_len;
      T sum = 0;
      for (int64_t j = 0; j < g_.row_len; ++j) sum += row[j] * row[j];
      const T inv = T(1) / std::sqrt(sum / static_cast<T>(g_.row_len) + static_cast<T>(g_.epsilon));
      for (int64_t j = 0; j < g_.row_len; ++j) out[j] = row[j] * inv * scale[g_.scale_index[j]];
    }
  }

 private:
  RmsNormGeometry g_;
};

// x [outer, n, inner] -> y = x / ||x||_p along n (0 where the norm is 0).
template <class T>
class LpNormKernel final : public Kernel {
 public:
  explicit LpNormKernel(LpNormGeometry g) : g_(g) {}
  void run(const KernelArgs& args) const override {
    const T* x = args.in<T>(0);
    T* y = args.out<T>(0);
    for (int64_t o = 0; o < g_.outer; ++o) {
      for (int64_t i = 0; i < g_.inner; ++i) {
        const int64_t base = o * g_.n * g_.inner + i;
        T norm = 0;
        for (int64_t k = 0; k < g_.n; ++k) {
          const T v = x[base + k * g_.inner];
          norm += g_.p == 1 ? std::abs(v) : v * v;
        }
        if (g_.p == 2) norm = std::sqrt(norm);
        for (int64_t k = 0; k < g_.n; ++k) {
          const int64_t at = base + k * g_.inner;
          y[at] = norm == T(0) ? T(0) : x[at] / norm;
        }
      }
    }
  }

 private:
  LpNormGeometry g_;
};

// Over each cell: y = (x - mean) / sqrt(mean((x - mean)^2)).
template <class T>
class MvnKernel final : public Kernel {
 public:
  explicit MvnKernel(ReduceCells c) : c_(std::move(c)) {}
  void run(const KernelArgs& args) const override {
    const T* x = args.in<T>(0);
    T* y = args.out<T>(0);
    const T count = static_cast<T>(c_.red.size());
    for (int64_t base : c_.base) {
      T sum = 0, sum_sq = 0;
      for (int64_t r : c_.red) sum += x[base + r];
      const T mean = sum / count;
      for (int64_t r : c_.red) sum_sq += (x[base + r] - mean) * (x[base + r] - mean);
      const T inv = T(1) / std::sqrt(sum_sq / count);
      for (int64_t r : c_.red) y[base + r] = (x[base + r] - mean) * inv;
    }
  }

 private:
  ReduceCells c_;
};

// make<Kernel<T>> for the float type T of `dtype` (the OpDefs refuse the rest).
template <template <class> class KernelT, class Arg>
std::unique_ptr<Kernel> make_float_kernel(const Node& node, DType dtype, Arg arg) {
  return with_dtype(dtype, [&](auto t) -> std::unique_ptr<Kernel> {
    using T = decltype(t);
    if constexpr (std::is_floating_point_v<T>) {
      return std::make_unique<KernelT<T>>(std::move(arg));
    } else {
      node_fail<UnsupportedModelError>(node, std::string("input X must be a float type, got ") + dtype_name(dtype));
    }
  });
}

KernelChoice plan_rms_norm(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
  KernelChoice choice;
  choice.algorithm = "rows";
  choice.kernel = make_float_kernel<RmsNormKernel>(
      node, inputs[0].info.dtype, rms_norm_geometry(node, inputs[0].info.shape, inputs[1].info.shape));
  return choice;
}

KernelChoice plan_lp_norm(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
  KernelChoice choice;
  choice.algorithm = "rows";
  choice.kernel =
      make_float_kernel<LpNormKernel>(node, inputs[0].info.dtype, lp_norm_geometry(node, inputs[0].info.shape));
  return choice;
}

KernelChoice plan_mvn(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
  const Shape& x = inputs[0].info.shape;
  KernelChoice choice;
  choice.algorithm = "cells";
  choice.kernel = make_float_kernel<MvnKernel>(node, inputs[0].info.dtype, reduce_cells(x, mvn_reduced_axes(node, x)));
  return choice;
}

}  // namespace

void register_cpu_moment_norms_kernels(KernelRegistry& r) {
  r.add("RMSNormalization", plan_rms_norm);
  r.add("LpNormalization", plan_lp_norm);
  r.add("MeanVarianceNormalization", plan_mvn);
}

}  // namespace dnnx
