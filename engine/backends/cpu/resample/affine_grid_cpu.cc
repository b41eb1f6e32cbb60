// AffineGrid on the CPU (ops/resample/affine_grid.cc): grid[n, p, :] = theta[n] (coords(p), 1).
#include <vector>

#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

template <class T>
class AffineGridKernel final : public Kernel {
 public:
  // spatial: (H, W) or (D, H, W).
  AffineGridKernel(int64_t batch, Shape spatial, bool align_corners)
      : batch_(batch), spatial_(std::move(spatial)), align_(align_corners) {}

  void run(const KernelArgs& args) const override {
    const T* theta = args.in<T>(0);
    T* grid = args.out<T>(0);
    const int64_t r = static_cast<int64_t>(spatial_.size());
    const int64_t positions = numel(spatial_);
    std::vector<T> coord(r + 1);  // (x, y[, z], 1): innermost dim first
    coord[r] = 1;
    std::vector<int64_t> at(r, 0);
    for (int64_t n = 0; n < batch_; ++n) {
      const T* th = theta + n * r * (r + 1);
      std::fill(at.begin(), at.end(), 0);
      for (int64_t p = 0; p < positions; ++p) {
        for (int64_t d = 0; d < r; ++d) coord[r - 1 - d] = normalized(at[d], spatial_[d]);
        T* out = grid + (n * positions + p) * r;
        for (int64_t i = 0; i < r; ++i) {
          T sum = 0;
          for (int64_t j = 0; j <= r; ++j) sum += th[i * (r + 1) + j] * coord[j];
          out[i] = sum;
        }
        for (int64_t d = r; d-- > 0;) {
          if (++at[d] < spatial_[d]) break;
          at[d] = 0;
        }
      }
    }
  }

 private:
  T normalized(int64_t i, int64_t len) const {
    // A single position sits at 1, as onnxruntime places it (Eigen LinSpaced(1, -1, 1) is {1}).
    if (align_) return len > 1 ? T(-1) + T(2) * static_cast<T>(i) / static_cast<T>(len - 1) : T(1);
    return T(-1) + (T(2) * static_cast<T>(i) + T(1)) / static_cast<T>(len);
  }

  int64_t batch_;
  Shape spatial_;
  bool align_;
};

KernelChoice plan_affine_grid(const Node& node, const std::vector<ValueInfo>&, const std::vector<TensorInfo>& outputs) {
  const Shape& grid = outputs[0].shape;  // [N, spatial..., r]
  KernelChoice choice;
  choice.algorithm = "direct";
  choice.kernel = std::make_unique<AffineGridKernel<float>>(grid[0], Shape(grid.begin() + 1, grid.end() - 1),
                                                            node.attr_int("align_corners", 0) != 0);
  return choice;
}

}  // namespace

void register_cpu_affine_grid_kernels(KernelRegistry& r) { r.add("AffineGrid", plan_affine_grid); }

}  // namespace dnnx
