// Det on the CPU: per matrix, an LU factorisation with partial pivoting in float64 (a copy of the
// matrix), the determinant the product of the pivots with the permutation's sign; float32 out.
#include <cmath>
#include <utility>
#include <vector>

#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

class DetKernel final : public Kernel {
 public:
  DetKernel(int64_t matrices, int64_t m) : matrices_(matrices), m_(m) {}
  void run(const KernelArgs& args) const override {
    const float* x = args.in(0);
    float* y = args.out(0);
    std::vector<double> a(static_cast<size_t>(m_ * m_));
    for (int64_t b = 0; b < matrices_; ++b) {
      for (int64_t i = 0; i < m_ * m_; ++i) a[i] = x[b * m_ * m_ + i];
      y[b] = static_cast<float>(determinant(a));
    }
  }

 private:
  double determinant(std::vector<double>& a) const {
    const int64_t m = m_;
    double det = 1.0;
    for (int64_t c = 0; c < m; ++c) {
      int64_t pivot = c;
      for (int64_t r = c + 1; r < m; ++r) {
        if (std::fabs(a[r * m + c]) > std::fabs(a[pivot * m + c])) pivot = r;
      }
      if (a[pivot * m + c] == 0.0) return 0.0;  // singular
      if (pivot != c) {
        for (int64_t k = 0; k < m; ++k) std::swap(a[c * m + k], a[pivot * m + k]);
        det = -det;
      }
      const double p = a[c * m + c];
      det *= p;
      for (int64_t r = c + 1; r < m; ++r) {
        const double f = a[r * m + c] / p;
        for (int64_t k = c + 1; k < m; ++k) a[r * m + k] -= f * a[c * m + k];
      }
    }
    return det;
  }

  int64_t matrices_, m_;
};

KernelChoice plan_det(const Node&, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
  const Shape& x = inputs[0].info.shape;
  const int64_t m = x.back();
  KernelChoice choice;
  choice.algorithm = "lu (partial pivoting, float64)";
  choice.kernel = std::make_unique<DetKernel>(numel(Shape(x.begin(), x.end() - 2)), m);
  return choice;
}

}  // namespace

void register_cpu_det_kernels(KernelRegistry& r) { r.add("Det", plan_det); }

}  // namespace dnnx
