// RoiAlign on the CPU (ops/roi/roi_align.cc), float32 and float64; float16 and bfloat16 run
// through the float32 kernel (Note [cpu dtypes]). The rois are split across the thread pool.
//
// Note [roi align]: onnxruntime's kernel (the one the node suite and the tests judge against), to
// the order of its float operations. Per roi: the box scaled by spatial_scale and, in half_pixel,
// shifted by -0.5; in output_half_pixel a box is widened to at least 1x1 (in half_pixel a
// reversed box keeps its negative size). Each of the output_height x output_width bins holds a
// grid of sampling_ratio (or, for 0, ceil(box size / output size) per axis) samples at the grid
// cells' centres; a sample more than one pixel outside X counts as 0, one inside the border band
// is clamped to the edge, and the rest interpolate bilinearly between four pixels with weights
// w1..w4. avg: the samples' mean, over max(1, grid cells). max: onnxruntime's (and onnx's
// reference's) meaning, not the spec's text: the maximum over the samples of the largest of the
// four weighted pixels w_i * X_i of each, not of the interpolated values. A box whose grid is
// empty on one axis (a reversed box with adaptive sampling) has no samples and gives 0, where
// onnxruntime fails on an integer overflow.
#include <algorithm>
#include <cmath>
#include <vector>

#include "backends/cpu/runtime/thread_pool.h"
#include "ops/roi/roi_align.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

// One sample: the four pixels (offsets in an H x W plane) and their bilinear weights.
template <class T>
struct Sample {
  int64_t pos[4] = {0, 0, 0, 0};
  T w[4] = {0, 0, 0, 0};
};

struct RoiAlignGeometry {
  int64_t channels, height, width, batch;
};

template <class T>
class RoiAlignKernel final : public Kernel {
 public:
  RoiAlignKernel(RoiAlignAttrs attrs, RoiAlignGeometry g, int64_t rois, int workers, std::string where)
      : a_(attrs), g_(g), rois_(rois), workers_(workers), where_(std::move(where)) {}

  // x [N, C, H, W], rois [R, 4], batch_indices [R] -> y [R, C, OH, OW].
  void run(const KernelArgs& args) const override {
    const T* x = args.in<T>(0);
    const T* boxes = args.in<T>(1);
    const int64_t* batch = args.in<int64_t>(2);
    T* y = args.out<T>(0);
    for (int64_t n = 0; n < rois_; ++n) {
      if (batch[n] < 0 || batch[n] >= g_.batch) {
        throw InputError(where_ + ": batch_indices[" + std::to_string(n) + "] = " + std::to_string(batch[n]) +
                         " is outside X's batch [0, " + std::to_string(g_.batch) + ")");
      }
    }
    const int64_t plane = g_.height * g_.width, out_plane = a_.output_height * a_.output_width;
    cpu_thread_pool().parallel_for(rois_, [&](int64_t begin, int64_t end, int) {
      std::vector<Sample<T>> samples;
      for (int64_t n = begin; n < end; ++n) {
        int64_t grid_h = 0, grid_w = 0;
        sample_roi(boxes + n * 4, samples, grid_h, grid_w);
        const T* image = x + batch[n] * g_.channels * plane;
        T* out = y + n * g_.channels * out_plane;
        for (int64_t c = 0; c < g_.channels; ++c) {
          pool_plane(image + c * plane, samples, grid_h, grid_w, out + c * out_plane);
        }
      }
    }, workers_);
  }

 private:
  // The samples of one box, bin by bin (ph, pw, iy, ix), and its grid per bin.
  void sample_roi(const T* box, std::vector<Sample<T>>& samples, int64_t& grid_h, int64_t& grid_w) const {
    const T offset = a_.half_pixel ? T(0.5) : T(0);
    const T start_w = box[0] * a_.spatial_scale - offset;
    const T start_h = box[1] * a_.spatial_scale - offset;
    const T end_w = box[2] * a_.spatial_scale - offset;
    const T end_h = box[3] * a_.spatial_scale - offset;
    T roi_w = end_w - start_w, roi_h = end_h - start_h;
    if (!a_.half_pixel) {
      roi_w = std::max(roi_w, T(1));
      roi_h = std::max(roi_h, T(1));
    }
    const int64_t oh = a_.output_height, ow = a_.output_width;
    const T bin_h = roi_h / static_cast<T>(oh), bin_w = roi_w / static_cast<T>(ow);
    grid_h = a_.sampling_ratio > 0 ? a_.sampling_ratio : static_cast<int64_t>(std::ceil(roi_h / static_cast<T>(oh)));
    grid_w = a_.sampling_ratio > 0 ? a_.sampling_ratio : static_cast<int64_t>(std::ceil(roi_w / static_cast<T>(ow)));
    grid_h = std::max<int64_t>(grid_h, 0);
    grid_w = std::max<int64_t>(grid_w, 0);
    samples.assign(static_cast<size_t>(oh * ow * grid_h * grid_w), Sample<T>{});
    size_t i = 0;
    for (int64_t ph = 0; ph < oh; ++ph) {
      for (int64_t pw = 0; pw < ow; ++pw) {
        for (int64_t iy = 0; iy < grid_h; ++iy) {
          const T yy = start_h + static_cast<T>(ph) * bin_h +
                       static_cast<T>(static_cast<float>(iy) + .5f) * bin_h / static_cast<T>(grid_h);
          for (int64_t ix = 0; ix < grid_w; ++ix, ++i) {
            const T xx = start_w + static_cast<T>(pw) * bin_w +
                         static_cast<T>(static_cast<float>(ix) + .5f) * bin_w / static_cast<T>(grid_w);
            samples[i] = bilinear(yy, xx);
          }
        }
      }
    }
  }

  Sample<T> bilinear(T y, T x) const {
    Sample<T> s;
    const int64_t h = g_.height, w = g_.width;
    if (!(y >= T(-1) && y <= static_cast<T>(h) && x >= T(-1) && x <= static_cast<T>(w))) return s;  // reads 0
    if (y <= 0) y = 0;
    if (x <= 0) x = 0;
    int64_t y_low = static_cast<int64_t>(y), x_low = static_cast<int64_t>(x), y_high, x_high;
    if (y_low >= h - 1) {
      y_high = y_low = h - 1;
      y = static_cast<T>(y_low);
    } else {
      y_high = y_low + 1;
    }
    if (x_low >= w - 1) {
      x_high = x_low = w - 1;
      x = static_cast<T>(x_low);
    } else {
      x_high = x_low + 1;
    }
    const T ly = y - static_cast<T>(y_low), lx = x - static_cast<T>(x_low);
    const T hy = T(1) - ly, hx = T(1) - lx;
    s.pos[0] = y_low * w + x_low;
    s.pos[1] = y_low * w + x_high;
    s.pos[2] = y_high * w + x_low;
    s.pos[3] = y_high * w + x_high;
    s.w[0] = hy * hx;
    s.w[1] = hy * lx;
    s.w[2] = ly * hx;
    s.w[3] = ly * lx;
    return s;
  }

  // One channel of one box: x [H, W] -> out [OH, OW].
  void pool_plane(const T* x, const std::vector<Sample<T>>& samples, int64_t grid_h, int64_t grid_w, T* out) const {
    const int64_t per_bin = grid_h * grid_w;
    const T count = static_cast<T>(std::max<int64_t>(per_bin, 1));
    const int64_t bins = a_.output_height * a_.output_width;
    for (int64_t b = 0; b < bins; ++b) {
      const Sample<T>* s = samples.data() + b * per_bin;
      T value = 0;
      if (a_.mode == RoiAlignMode::Avg) {
        for (int64_t k = 0; k < per_bin; ++k) {
          value += s[k].w[0] * x[s[k].pos[0]] + s[k].w[1] * x[s[k].pos[1]] + s[k].w[2] * x[s[k].pos[2]] +
                   s[k].w[3] * x[s[k].pos[3]];
        }
        value /= count;
      } else {
        for (int64_t k = 0; k < per_bin; ++k) {
          const T v = std::max(std::max(std::max(s[k].w[0] * x[s[k].pos[0]], s[k].w[1] * x[s[k].pos[1]]),
                                        s[k].w[2] * x[s[k].pos[2]]),
                               s[k].w[3] * x[s[k].pos[3]]);
          value = k == 0 ? v : std::max(value, v);
        }
      }
      out[b] = value;
    }
  }

  RoiAlignAttrs a_;
  RoiAlignGeometry g_;
  int64_t rois_;
  int workers_;
  std::string where_;
};

KernelChoice plan_roi_align(const Node& node, const std::vector<ValueInfo>& inputs,
                            const std::vector<TensorInfo>& outputs) {
  const RoiAlignAttrs attrs = roi_align_attrs(node);
  const Shape& x = inputs[0].info.shape;
  const RoiAlignGeometry g{x[1], x[2], x[3], x[0]};
  const int64_t rois = inputs[1].info.shape[0];
  const int workers = plan_workers(rois, x[1] * attrs.output_height * attrs.output_width * 16);
  KernelChoice choice;
  choice.algorithm = with_threads("bilinear samples", workers);
  if (outputs[0].dtype == DType::Float64) {
    choice.kernel = std::make_unique<RoiAlignKernel<double>>(attrs, g, rois, workers, node.where());
  } else {
    choice.kernel = std::make_unique<RoiAlignKernel<float>>(attrs, g, rois, workers, node.where());
  }
  return choice;
}

}  // namespace

void register_cpu_roi_align_kernels(KernelRegistry& r) {
  r.add("RoiAlign", plan_roi_align).with_dtypes({DType::Float32, DType::Float64});
}

}  // namespace dnnx
