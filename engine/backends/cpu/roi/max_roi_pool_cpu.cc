// MaxRoiPool on the CPU (ops/roi/max_roi_pool.cc), float32 and float64; the halves run through
// the float32 kernel (Note [cpu dtypes]). onnxruntime's meaning, to its float operations: the box
// corners scaled by spatial_scale and rounded half away from zero; a box of fewer than one pixel
// widened to 1x1; bin (ph, pw) covers rows [floor(ph * bin_h), ceil((ph + 1) * bin_h)) from the
// box's first row (bin_h = box rows / pooled_height, in float32), and likewise columns, clipped
// to X; an empty window gives 0. The batch index is the first roi column truncated to an integer.
#include <algorithm>
#include <cmath>
#include <limits>

#include "ops/roi/max_roi_pool.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

// A rounded box corner, kept within int32 as onnxruntime's int arithmetic is (past that the
// window is clipped to X either way).
int64_t box_corner(double v) {
  if (std::isnan(v)) return 0;
  return static_cast<int64_t>(std::clamp(std::round(v), -2147483648.0, 2147483647.0));
}

template <class T>
class MaxRoiPoolKernel final : public Kernel {
 public:
  MaxRoiPoolKernel(MaxRoiPoolAttrs attrs, Shape x, int64_t rois, std::string where)
      : a_(attrs), x_(std::move(x)), rois_(rois), where_(std::move(where)) {}

  // x [N, C, H, W], rois [R, 5] -> y [R, C, PH, PW].
  void run(const KernelArgs& args) const override {
    const T* x = args.in<T>(0);
    const T* boxes = args.in<T>(1);
    T* y = args.out<T>(0);
    const int64_t channels = x_[1], height = x_[2], width = x_[3], plane = height * width;
    const int64_t ph_count = a_.pooled_height, pw_count = a_.pooled_width;
    for (int64_t n = 0; n < rois_; ++n) {
      const T* box = boxes + n * 5;
      const double batch = std::trunc(static_cast<double>(box[0]));
      if (!(batch >= 0 && batch < static_cast<double>(x_[0]))) {
        throw InputError(where_ + ": rois[" + std::to_string(n) + ", 0] = " +
                         std::to_string(static_cast<double>(box[0])) +
                         " is not a batch index of X's " + std::to_string(x_[0]));
      }
      const int64_t start_w = box_corner(static_cast<double>(box[1] * static_cast<T>(a_.spatial_scale)));
      const int64_t start_h = box_corner(static_cast<double>(box[2] * static_cast<T>(a_.spatial_scale)));
      const int64_t end_w = box_corner(static_cast<double>(box[3] * static_cast<T>(a_.spatial_scale)));
      const int64_t end_h = box_corner(static_cast<double>(box[4] * static_cast<T>(a_.spatial_scale)));
      const float bin_h = static_cast<float>(std::max<int64_t>(end_h - start_h + 1, 1)) / static_cast<float>(ph_count);
      const float bin_w = static_cast<float>(std::max<int64_t>(end_w - start_w + 1, 1)) / static_cast<float>(pw_count);
      const T* image = x + static_cast<int64_t>(batch) * channels * plane;
      for (int64_t c = 0; c < channels; ++c) {
        const T* in = image + c * plane;
        T* out = y + (n * channels + c) * ph_count * pw_count;
        for (int64_t ph = 0; ph < ph_count; ++ph) {
          const int64_t h0 = std::clamp<int64_t>(window_start(ph, bin_h) + start_h, 0, height);
          const int64_t h1 = std::clamp<int64_t>(window_end(ph, bin_h) + start_h, 0, height);
          for (int64_t pw = 0; pw < pw_count; ++pw) {
            const int64_t w0 = std::clamp<int64_t>(window_start(pw, bin_w) + start_w, 0, width);
            const int64_t w1 = std::clamp<int64_t>(window_end(pw, bin_w) + start_w, 0, width);
            const bool empty = h1 <= h0 || w1 <= w0;
            T best = empty ? T(0) : std::numeric_limits<T>::lowest();
            for (int64_t h = h0; h < h1; ++h) {
              for (int64_t w = w0; w < w1; ++w) best = std::max(in[h * width + w], best);
            }
            out[ph * pw_count + pw] = best;
          }
        }
      }
    }
  }

 private:
  // Bin p's window, [floor(p * bin), ceil((p + 1) * bin)) from the box's start, in float32.
  static int64_t window_start(int64_t p, float bin) {
    return static_cast<int64_t>(std::floor(static_cast<float>(p) * bin));
  }
  static int64_t window_end(int64_t p, float bin) {
    return static_cast<int64_t>(std::ceil(static_cast<float>(p + 1) * bin));
  }

  MaxRoiPoolAttrs a_;
  Shape x_;
  int64_t rois_;
  std::string where_;
};

KernelChoice plan_max_roi_pool(const Node& node, const std::vector<ValueInfo>& inputs,
                               const std::vector<TensorInfo>& outputs) {
  const MaxRoiPoolAttrs attrs = max_roi_pool_attrs(node);
  const Shape& x = inputs[0].info.shape;
  const int64_t rois = inputs[1].info.shape[0];
  KernelChoice choice;
  choice.algorithm = "direct";
  if (outputs[0].dtype == DType::Float64) {
    choice.kernel = std::make_unique<MaxRoiPoolKernel<double>>(attrs, x, rois, node.where());
  } else {
    choice.kernel = std::make_unique<MaxRoiPoolKernel<float>>(attrs, x, rois, node.where());
  }
  return choice;
}

}  // namespace

void register_cpu_max_roi_pool_kernels(KernelRegistry& r) {
  r.add("MaxRoiPool", plan_max_roi_pool).with_dtypes({DType::Float32, DType::Float64});
}

}  // namespace dnnx
