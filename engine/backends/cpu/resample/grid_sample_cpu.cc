// GridSample on the CPU (ops/resample/grid_sample.h): per output position, each spatial dim's
// taps (index and weight; index -1 reads 0) from the grid, then the sum over their tensor product
// for every channel.
#include <cmath>

#include "ops/resample/grid_sample.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

constexpr int kMaxTaps = 4, kMaxDims = 3;

template <class T>
struct DimTaps {
  int count = 0;
  int64_t index[kMaxTaps];
  T weight[kMaxTaps];
};

template <class T>
class GridSampleKernel final : public Kernel {
 public:
  explicit GridSampleKernel(GridSampleParams p) : p_(std::move(p)) {}

  void run(const KernelArgs& args) const override {
    const T* x = args.in<T>(0);
    const T* grid = args.in<T>(1);
    T* y = args.out<T>(0);
    const int64_t rank = static_cast<int64_t>(p_.x.size()) - 2;
    const int64_t channels = p_.x[1];
    int64_t in_size = 1, out_size = 1;
    for (int64_t d = 0; d < rank; ++d) {
      in_size *= p_.x[2 + d];
      out_size *= p_.grid[1 + d];
    }
    int64_t strides[kMaxDims];  // X's spatial strides
    for (int64_t d = rank, s = 1; d-- > 0;) {
      strides[d] = s;
      s *= p_.x[2 + d];
    }
    DimTaps<T> taps[kMaxDims];
    for (int64_t n = 0; n < p_.x[0]; ++n) {
      for (int64_t o = 0; o < out_size; ++o) {
        const T* g = grid + (n * out_size + o) * rank;
        // The grid lists the innermost dim first.
        for (int64_t d = 0; d < rank; ++d) dim_taps(g[rank - 1 - d], p_.x[2 + d], taps[d]);
        for (int64_t c = 0; c < channels; ++c) {
          y[(n * channels + c) * out_size + o] = sample(x + (n * channels + c) * in_size, taps, strides, rank);
        }
      }
    }
  }

 private:
  T sample(const T* x, const DimTaps<T>* taps, const int64_t* strides, int64_t rank) const {
    int k[kMaxDims] = {0, 0, 0};
    T sum = 0;
    while (true) {
      T w = 1;
      int64_t at = 0;
      bool zero = false;
      for (int64_t d = 0; d < rank; ++d) {
        w *= taps[d].weight[k[d]];
        zero = zero || taps[d].index[k[d]] < 0;
        at += taps[d].index[k[d]] * strides[d];
      }
      if (!zero) sum += w * x[at];
      int64_t d = rank;
      while (d-- > 0 && ++k[d] == taps[d].count) k[d] = 0;
      if (d < 0) return sum;
    }
  }

  // Mirrors v into [lo, hi] at its borders, as often as it takes.
  static T reflect(T v, T lo, T hi) {
    const T range = hi - lo;
    if (v < lo) {
      const T dv = lo - v;
      const int64_t n = static_cast<int64_t>(dv / range);
      const T r = dv - static_cast<T>(n) * range;
      return n % 2 == 0 ? lo + r : hi - r;
    }
    if (v > hi) {
      const T dv = v - hi;
      const int64_t n = static_cast<int64_t>(dv / range);
      const T r = dv - static_cast<T>(n) * range;
      return n % 2 == 0 ? hi - r : lo + r;
    }
    return v;
  }

  // The index tap i reads through padding_mode (-1: reads 0).
  int64_t pixel(int64_t i, int64_t size, T lo, T hi) const {
    switch (p_.padding) {
      case GridPadding::Zeros:
        return i >= 0 && i < size ? i : -1;
      case GridPadding::Border:
        return std::min(std::max<int64_t>(i, 0), size - 1);
      case GridPadding::Reflection:
        return std::min(std::max<int64_t>(static_cast<int64_t>(reflect(static_cast<T>(i), lo, hi)), 0), size - 1);
    }
    return -1;
  }

  static void cubic_coeffs(T t, T* c) {
    const T a = T(-0.75);
    const T x0 = t + 1, x1 = t, x2 = 1 - t, x3 = 2 - t;
    c[0] = ((a * x0 - 5 * a) * x0 + 8 * a) * x0 - 4 * a;
    c[1] = ((a + 2) * x1 - (a + 3)) * x1 * x1 + 1;
    c[2] = ((a + 2) * x2 - (a + 3)) * x2 * x2 + 1;
    c[3] = ((a * x3 - 5 * a) * x3 + 8 * a) * x3 - 4 * a;
  }

  void dim_taps(T normalized, int64_t size, DimTaps<T>& t) const {
    const T len = static_cast<T>(size);
    T v = p_.align_corners ? (normalized + 1) / 2 * (len - 1) : ((normalized + 1) * len - 1) / 2;
    const T lo = p_.align_corners ? T(0) : T(-0.5), hi = p_.align_corners ? len - 1 : len - T(0.5);
    if (p_.mode == GridMode::Nearest) v = std::nearbyint(v);
    if (v < lo || v > hi) {  // NaN stays NaN, and reads as index 0 below
      // onnxruntime clamps a cubic position's taps, not the position (its border cases rely on it).
      if (p_.padding == GridPadding::Border && p_.mode != GridMode::Cubic) v = std::min(std::max(v, T(0)), len - 1);
      if (p_.padding == GridPadding::Reflection) v = reflect(v, lo, hi);
    }
    if (std::isnan(v)) v = 0;
    if (p_.mode == GridMode::Nearest) {
      t.count = 1;
      t.index[0] = pixel(static_cast<int64_t>(v), size, lo, hi);
      t.weight[0] = 1;
      return;
    }
    const T floor = std::floor(v);
    const int64_t i0 = static_cast<int64_t>(floor);
    const T frac = v - floor;
    if (p_.mode == GridMode::Linear) {
      t.count = 2;
      t.index[0] = pixel(i0, size, lo, hi);
      t.index[1] = pixel(i0 + 1, size, lo, hi);
      t.weight[0] = 1 - frac;
      t.weight[1] = frac;
      return;
    }
    t.count = 4;
    cubic_coeffs(frac, t.weight);
    for (int j = 0; j < 4; ++j) t.index[j] = pixel(i0 - 1 + j, size, lo, hi);
  }

  GridSampleParams p_;
};

KernelChoice plan_grid_sample(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
  GridSampleParams p = grid_sample_params(node, inputs);
  KernelChoice choice;
  choice.algorithm = p.mode == GridMode::Nearest ? "nearest taps" : p.mode == GridMode::Linear ? "linear taps" : "cubic taps";
  choice.kernel = std::make_unique<GridSampleKernel<float>>(std::move(p));
  return choice;
}

}  // namespace

void register_cpu_grid_sample_kernels(KernelRegistry& r) { r.add("GridSample", plan_grid_sample); }

}  // namespace dnnx
