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
// onnxruntime fails on an integer overflow. onnxruntime weighs every sample of a box at once;
// here a box of more than kSampleChunk samples goes a bin (and at most kSampleChunk samples) at
// a time, each adding to its bins in the same order, so a huge box needs no huge scratch; one
// past 2^30 samples is refused (InputError).
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

// One box in X's pixels: its first corner, bin size and sampling grid per bin.
template <class T>
struct BoxGrid {
  T start_h, start_w, bin_h, bin_w;
  int64_t grid_h, grid_w;  // samples per bin along each axis (0 on a reversed half_pixel axis)
};

// Samples are weighed in chunks of at most this many per bin, so that the scratch stays small
// whatever the box's size; each chunk adds to the bin's running value in onnxruntime's order.
constexpr int64_t kSampleChunk = 4096;
// The most samples one box may take (every bin together): a box past this (billions of
// pixels at adaptive sampling) is an InputError, not an endless loop.
constexpr double kMaxSamplesPerBox = 1 << 30;

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
    std::vector<BoxGrid<T>> grids(static_cast<size_t>(rois_));
    for (int64_t n = 0; n < rois_; ++n) {
      if (batch[n] < 0 || batch[n] >= g_.batch) {
        throw InputError(where_ + ": batch_indices[" + std::to_string(n) + "] = " + std::to_string(batch[n]) +
                         " is outside X's batch [0, " + std::to_string(g_.batch) + ")");
      }
      grids[static_cast<size_t>(n)] = box_grid(boxes + n * 4, n);
    }
    const int64_t plane = g_.height * g_.width, out_plane = a_.output_height * a_.output_width;
    cpu_thread_pool().parallel_for(rois_, [&](int64_t begin, int64_t end, int) {
      std::vector<Sample<T>> samples;
      for (int64_t n = begin; n < end; ++n) {
        pool_box(grids[static_cast<size_t>(n)], x + batch[n] * g_.channels * plane, samples,
                 y + n * g_.channels * out_plane);
      }
    }, workers_);
  }

 private:
  BoxGrid<T> box_grid(const T* box, int64_t n) const {
    const T offset = a_.half_pixel ? T(0.5) : T(0);
    BoxGrid<T> b;
    b.start_w = box[0] * a_.spatial_scale - offset;
    b.start_h = box[1] * a_.spatial_scale - offset;
    const T end_w = box[2] * a_.spatial_scale - offset;
    const T end_h = box[3] * a_.spatial_scale - offset;
    T roi_w = end_w - b.start_w, roi_h = end_h - b.start_h;
    if (!a_.half_pixel) {
      roi_w = std::max(roi_w, T(1));
      roi_h = std::max(roi_h, T(1));
    }
    const T oh = static_cast<T>(a_.output_height), ow = static_cast<T>(a_.output_width);
    b.bin_h = roi_h / oh;
    b.bin_w = roi_w / ow;
    double grid_h = static_cast<double>(a_.sampling_ratio), grid_w = grid_h;
    if (a_.sampling_ratio == 0) {
      grid_h = std::max(0.0, static_cast<double>(std::ceil(roi_h / oh)));
      grid_w = std::max(0.0, static_cast<double>(std::ceil(roi_w / ow)));
    }
    const double total = grid_h * grid_w * static_cast<double>(a_.output_height * a_.output_width);
    if (!(total <= kMaxSamplesPerBox)) {  // NaN too
      throw InputError(where_ + ": rois[" + std::to_string(n) + "] needs " + std::to_string(total) +
                       " samples (more than 2^30): is the box in X's pixels before spatial_scale?");
    }
    b.grid_h = static_cast<int64_t>(grid_h);
    b.grid_w = static_cast<int64_t>(grid_w);
    return b;
  }

  // One box: out [C, OH, OW] from image [C, H, W]. A box of at most kSampleChunk samples (the
  // common case) weighs all of them once and then runs channel by channel, as onnxruntime; a
  // larger one goes bin by bin, a chunk of samples at a time, each channel adding to its bin.
  void pool_box(const BoxGrid<T>& b, const T* image, std::vector<Sample<T>>& samples, T* out) const {
    const int64_t per_bin = b.grid_h * b.grid_w, plane = g_.height * g_.width;
    const int64_t bins = a_.output_height * a_.output_width;
    if (per_bin * bins <= kSampleChunk) {
      samples.resize(static_cast<size_t>(per_bin * bins));
      for (int64_t ph = 0; ph < a_.output_height; ++ph) {
        for (int64_t pw = 0; pw < a_.output_width; ++pw) {
          bin_samples(b, ph, pw, 0, per_bin, samples.data() + (ph * a_.output_width + pw) * per_bin);
        }
      }
      for (int64_t c = 0; c < g_.channels; ++c) {
        for (int64_t i = 0; i < bins; ++i) {
          const T value = weigh(image + c * plane, samples.data() + i * per_bin, per_bin, true, T(0));
          out[c * bins + i] = finish(value, per_bin);
        }
      }
      return;
    }
    for (int64_t ph = 0; ph < a_.output_height; ++ph) {
      for (int64_t pw = 0; pw < a_.output_width; ++pw) {
        const int64_t i = ph * a_.output_width + pw;
        for (int64_t first = 0; first < per_bin; first += kSampleChunk) {
          const int64_t taken = std::min(kSampleChunk, per_bin - first);
          samples.resize(static_cast<size_t>(taken));
          bin_samples(b, ph, pw, first, taken, samples.data());
          for (int64_t c = 0; c < g_.channels; ++c) {
            out[c * bins + i] = weigh(image + c * plane, samples.data(), taken, first == 0, out[c * bins + i]);
          }
        }
        for (int64_t c = 0; c < g_.channels; ++c) out[c * bins + i] = finish(out[c * bins + i], per_bin);
      }
    }
  }

  // The bin's value from its running one: avg divides by the samples (at least 1).
  T finish(T value, int64_t per_bin) const {
    return a_.mode == RoiAlignMode::Avg ? value / static_cast<T>(std::max<int64_t>(per_bin, 1)) : value;
  }

  // Samples [first, first + taken) of bin (ph, pw), in (iy, ix) order.
  void bin_samples(const BoxGrid<T>& b, int64_t ph, int64_t pw, int64_t first, int64_t taken,
                   Sample<T>* samples) const {
    for (int64_t k = 0; k < taken; ++k) {
      const int64_t iy = (first + k) / b.grid_w, ix = (first + k) % b.grid_w;
      const T yy = b.start_h + static_cast<T>(ph) * b.bin_h +
                   static_cast<T>(static_cast<float>(iy) + .5f) * b.bin_h / static_cast<T>(b.grid_h);
      const T xx = b.start_w + static_cast<T>(pw) * b.bin_w +
                   static_cast<T>(static_cast<float>(ix) + .5f) * b.bin_w / static_cast<T>(b.grid_w);
      samples[k] = bilinear(yy, xx);
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

  // The bin's running value after `count` more samples of one channel x [H, W]: avg adds each
  // sample's interpolation, max keeps the largest weighted corner (`fresh`: the bin's first
  // samples, which start it: 0 for avg, the first sample for max; no samples at all leave 0).
  T weigh(const T* x, const Sample<T>* samples, int64_t count, bool fresh, T value) const {
    if (fresh) value = T(0);
    if (a_.mode == RoiAlignMode::Avg) {
      for (int64_t k = 0; k < count; ++k) {
        const Sample<T>& s = samples[k];
        value += s.w[0] * x[s.pos[0]] + s.w[1] * x[s.pos[1]] + s.w[2] * x[s.pos[2]] + s.w[3] * x[s.pos[3]];
      }
      return value;
    }
    for (int64_t k = 0; k < count; ++k) {
      const Sample<T>& s = samples[k];
      const T v = std::max(std::max(std::max(s.w[0] * x[s.pos[0]], s.w[1] * x[s.pos[1]]), s.w[2] * x[s.pos[2]]),
                           s.w[3] * x[s.pos[3]]);
      value = fresh && k == 0 ? v : std::max(value, v);
    }
    return value;
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
