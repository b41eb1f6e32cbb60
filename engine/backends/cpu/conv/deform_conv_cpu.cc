// DeformConv on the CPU (ops/conv/deform_conv.h): per image, the sampled columns
// cols [C * kH * kW, oH * oW] (bilinear reads times the mask), then per group one GEMM
// Y_g [M/group, oH*oW] = W_g [M/group, C/group * kH * kW] cols_g, plus the bias.
#include <algorithm>
#include <cmath>

#include "backends/cpu/dense/blas.h"
#include "ops/conv/deform_conv.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

constexpr size_t kOffset = 2, kBias = 3, kMask = 4;

template <class T>
class DeformConvKernel final : public Kernel {
 public:
  explicit DeformConvKernel(DeformConvGeometry g) : g_(g) {}

  size_t workspace_bytes() const { return static_cast<size_t>(g_.channels * taps() * positions()) * sizeof(T); }

  void run(const KernelArgs& args) const override {
    T* cols = static_cast<T*>(args.workspace);
    const int64_t cg = g_.channels / g_.group, mg = g_.filters / g_.group, rows = cg * taps();
    for (int64_t n = 0; n < g_.batch; ++n) {
      sample_columns(args, n, cols);
      T* y = args.out<T>(0) + n * g_.filters * positions();
      for (int64_t grp = 0; grp < g_.group; ++grp) {
        sgemm_serial(false, false, static_cast<int>(mg), static_cast<int>(positions()), static_cast<int>(rows), 1.0f,
                     args.in<T>(1) + grp * mg * rows, static_cast<int>(rows), cols + grp * rows * positions(),
                     static_cast<int>(positions()), 0.0f, y + grp * mg * positions(), static_cast<int>(positions()));
      }
      if (g_.has_bias) {
        for (int64_t m = 0; m < g_.filters; ++m) {
          T* row = y + m * positions();
          for (int64_t p = 0; p < positions(); ++p) row[p] += args.in<T>(kBias)[m];
        }
      }
    }
  }

 private:
  int64_t taps() const { return g_.k_h * g_.k_w; }
  int64_t positions() const { return g_.out_h * g_.out_w; }

  // X's plane at (h, w), bilinear, reading 0 outside.
  T bilinear(const T* plane, T h, T w) const {
    const T fh = std::floor(h), fw = std::floor(w);
    const int64_t h0 = static_cast<int64_t>(fh), w0 = static_cast<int64_t>(fw);
    const T lh = h - fh, lw = w - fw;
    T sum = 0;
    for (int dy = 0; dy < 2; ++dy) {
      const int64_t hy = h0 + dy;
      if (hy < 0 || hy >= g_.in_h) continue;
      for (int dx = 0; dx < 2; ++dx) {
        const int64_t wx = w0 + dx;
        if (wx < 0 || wx >= g_.in_w) continue;
        sum += (dy ? lh : 1 - lh) * (dx ? lw : 1 - lw) * plane[hy * g_.in_w + wx];
      }
    }
    return sum;
  }

  void sample_columns(const KernelArgs& args, int64_t n, T* cols) const {
    const int64_t per_offset_group = g_.channels / g_.offset_group;
    const T* x = args.in<T>(0) + n * g_.channels * g_.in_h * g_.in_w;
    const T* offset = args.in<T>(kOffset) + n * g_.offset_group * 2 * taps() * positions();
    const T* mask = g_.has_mask ? args.in<T>(kMask) + n * g_.offset_group * taps() * positions() : nullptr;
    for (int64_t c = 0; c < g_.channels; ++c) {
      const int64_t og = c / per_offset_group;
      const T* plane = x + c * g_.in_h * g_.in_w;
      for (int64_t k = 0; k < taps(); ++k) {
        const T* dh = offset + ((og * taps() + k) * 2) * positions();
        const T* dw = dh + positions();
        const T* mk = mask ? mask + (og * taps() + k) * positions() : nullptr;
        T* col = cols + (c * taps() + k) * positions();
        const int64_t kh = k / g_.k_w, kw = k % g_.k_w;
        for (int64_t i = 0; i < g_.out_h; ++i) {
          for (int64_t j = 0; j < g_.out_w; ++j) {
            const int64_t p = i * g_.out_w + j;
            const T h = static_cast<T>(i * g_.stride_h - g_.pad_top + kh * g_.dil_h) + dh[p];
            const T w = static_cast<T>(j * g_.stride_w - g_.pad_left + kw * g_.dil_w) + dw[p];
            col[p] = bilinear(plane, h, w) * (mk ? mk[p] : T(1));
          }
        }
      }
    }
  }

  DeformConvGeometry g_;
};

KernelChoice plan_deform_conv(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
  auto kernel = std::make_unique<DeformConvKernel<float>>(deform_conv_geometry(node, inputs));
  KernelChoice choice;
  choice.algorithm = "bilinear columns+gemm";
  choice.workspace_bytes = kernel->workspace_bytes();
  choice.kernel = std::move(kernel);
  return choice;
}

}  // namespace

void register_cpu_deform_conv_kernels(KernelRegistry& r) { r.add("DeformConv", plan_deform_conv); }

}  // namespace dnnx
