// RoiAlign's and MaxRoiPool's kernels (roi_kernels.h): one thread per output element (roi,
// channel, bin), each working out its roi's box from the roi's row and walking its bin's samples
// or window. The arithmetic is the CPU kernels' (backends/cpu/roi/), operation for operation and
// in their order, with the rounding intrinsics (__fmul_rn, __fadd_rn, __fdiv_rn) so that nvcc
// contracts nothing into a fused multiply-add: the sample positions, and so the pixels each bin
// reads, are the CPU's, and the outputs are the CPU's float32 values.
#include <cmath>
#include <cstdint>

#include "backends/cuda/roi/roi_kernels.h"
#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/runtime/grid_loop.cuh"
#include "backends/cuda/runtime/launch.cuh"

namespace dnnx::cuda {

namespace {

// The most samples one RoiAlign box may take, every bin together (the CPU's kMaxSamplesPerBox).
constexpr double kMaxSamplesPerBox = 1 << 30;

// std::max(a, b) as the CPU kernels call it: b where a < b, else a (so a NaN `a` is kept and a
// NaN `b` is not).
__device__ inline float std_max(float a, float b) { return a < b ? b : a; }

// One bilinear sample of plane [h, w] at (y, x), the CPU's bilinear() and its use by weigh():
// avg mode: the weighted sum of the four pixels; max mode: the largest weighted pixel.
__device__ inline float sample(const float* plane, int64_t h, int64_t w, float y, float x, bool max_mode) {
  if (!(y >= -1.0f && y <= static_cast<float>(h) && x >= -1.0f && x <= static_cast<float>(w))) {
    // Outside: the CPU weighs pixel 0 four times by 0 (0, or NaN where that pixel is infinite
    // or NaN; the sum and the maximum of four such are the same).
    return __fmul_rn(0.0f, plane[0]);
  }
  if (y <= 0) y = 0;
  if (x <= 0) x = 0;
  int64_t y_low = static_cast<int64_t>(y), x_low = static_cast<int64_t>(x), y_high, x_high;
  if (y_low >= h - 1) {
    y_high = y_low = h - 1;
    y = static_cast<float>(y_low);
  } else {
    y_high = y_low + 1;
  }
  if (x_low >= w - 1) {
    x_high = x_low = w - 1;
    x = static_cast<float>(x_low);
  } else {
    x_high = x_low + 1;
  }
  const float ly = __fadd_rn(y, -static_cast<float>(y_low)), lx = __fadd_rn(x, -static_cast<float>(x_low));
  const float hy = __fadd_rn(1.0f, -ly), hx = __fadd_rn(1.0f, -lx);
  const float p0 = __fmul_rn(__fmul_rn(hy, hx), plane[y_low * w + x_low]);
  const float p1 = __fmul_rn(__fmul_rn(hy, lx), plane[y_low * w + x_high]);
  const float p2 = __fmul_rn(__fmul_rn(ly, hx), plane[y_high * w + x_low]);
  const float p3 = __fmul_rn(__fmul_rn(ly, lx), plane[y_high * w + x_high]);
  if (max_mode) return std_max(std_max(std_max(p0, p1), p2), p3);
  return __fadd_rn(__fadd_rn(__fadd_rn(p0, p1), p2), p3);
}

// Output element i = ((roi * C + c) * OH + ph) * OW + pw.
__global__ void roi_align_kernel(const float* __restrict__ x, const float* __restrict__ rois,
                                 const int64_t* __restrict__ batch, float* __restrict__ y, RoiDims d, bool half_pixel,
                                 bool max_mode, int64_t sampling_ratio) {
  const int64_t bins = d.out_h * d.out_w, total = d.rois * d.channels * bins;
  DNNX_GRID_LOOP(i, total) {
    const int64_t n = i / (d.channels * bins), c = i / bins % d.channels, ph = i % bins / d.out_w,
                  pw = i % d.out_w;
    y[i] = 0.0f;
    const int64_t b = batch[n];
    if (b < 0 || b >= d.batch) continue;  // Note [device roi range]
    // The box in X's pixels (the CPU's box_grid).
    const float offset = half_pixel ? 0.5f : 0.0f;
    const float* box = rois + n * 4;
    const float start_w = __fadd_rn(__fmul_rn(box[0], d.spatial_scale), -offset);
    const float start_h = __fadd_rn(__fmul_rn(box[1], d.spatial_scale), -offset);
    const float end_w = __fadd_rn(__fmul_rn(box[2], d.spatial_scale), -offset);
    const float end_h = __fadd_rn(__fmul_rn(box[3], d.spatial_scale), -offset);
    float roi_w = __fadd_rn(end_w, -start_w), roi_h = __fadd_rn(end_h, -start_h);
    if (!half_pixel) {
      roi_w = std_max(roi_w, 1.0f);
      roi_h = std_max(roi_h, 1.0f);
    }
    const float oh = static_cast<float>(d.out_h), ow = static_cast<float>(d.out_w);
    const float bin_h = __fdiv_rn(roi_h, oh), bin_w = __fdiv_rn(roi_w, ow);
    double grid_h = static_cast<double>(sampling_ratio), grid_w = grid_h;
    if (sampling_ratio == 0) {
      grid_h = fmax(0.0, static_cast<double>(ceilf(__fdiv_rn(roi_h, oh))));
      grid_w = fmax(0.0, static_cast<double>(ceilf(__fdiv_rn(roi_w, ow))));
    }
    if (!(grid_h * grid_w * static_cast<double>(bins) <= kMaxSamplesPerBox)) continue;  // NaN too
    const int64_t gh = static_cast<int64_t>(grid_h), gw = static_cast<int64_t>(grid_w);
    // The bin's samples in (iy, ix) order, as the CPU adds them.
    const float* plane = x + (b * d.channels + c) * d.height * d.width;
    const float row0 = __fadd_rn(start_h, __fmul_rn(static_cast<float>(ph), bin_h));
    const float col0 = __fadd_rn(start_w, __fmul_rn(static_cast<float>(pw), bin_w));
    float value = 0.0f;
    for (int64_t iy = 0; iy < gh; ++iy) {
      const float yy = __fadd_rn(row0, __fdiv_rn(__fmul_rn(static_cast<float>(iy) + 0.5f, bin_h),
                                                 static_cast<float>(gh)));
      for (int64_t ix = 0; ix < gw; ++ix) {
        const float xx = __fadd_rn(col0, __fdiv_rn(__fmul_rn(static_cast<float>(ix) + 0.5f, bin_w),
                                                   static_cast<float>(gw)));
        const float v = sample(plane, d.height, d.width, yy, xx, max_mode);
        if (max_mode) {
          value = iy == 0 && ix == 0 ? v : std_max(value, v);
        } else {
          value = __fadd_rn(value, v);
        }
      }
    }
    const int64_t per_bin = gh * gw;
    y[i] = max_mode ? value : __fdiv_rn(value, static_cast<float>(per_bin > 1 ? per_bin : 1));
  }
}

// A rounded box corner (the CPU's box_corner): half away from zero, within int32, NaN gives 0.
__device__ inline int64_t box_corner(double v) {
  if (isnan(v)) return 0;
  return static_cast<int64_t>(fmin(fmax(round(v), -2147483648.0), 2147483647.0));
}

__device__ inline int64_t clamp_to(int64_t v, int64_t hi) { return v < 0 ? 0 : v > hi ? hi : v; }

__global__ void max_roi_pool_kernel(const float* __restrict__ x, const float* __restrict__ rois,
                                    float* __restrict__ y, RoiDims d) {
  const int64_t bins = d.out_h * d.out_w, total = d.rois * d.channels * bins;
  DNNX_GRID_LOOP(i, total) {
    const int64_t n = i / (d.channels * bins), c = i / bins % d.channels, ph = i % bins / d.out_w,
                  pw = i % d.out_w;
    y[i] = 0.0f;
    const float* box = rois + n * 5;
    const double b = trunc(static_cast<double>(box[0]));
    if (!(b >= 0 && b < static_cast<double>(d.batch))) continue;  // Note [device roi range]
    const int64_t start_w = box_corner(__fmul_rn(box[1], d.spatial_scale));
    const int64_t start_h = box_corner(__fmul_rn(box[2], d.spatial_scale));
    const int64_t end_w = box_corner(__fmul_rn(box[3], d.spatial_scale));
    const int64_t end_h = box_corner(__fmul_rn(box[4], d.spatial_scale));
    const int64_t rows = end_h - start_h + 1, cols = end_w - start_w + 1;
    const float bin_h = __fdiv_rn(static_cast<float>(rows > 1 ? rows : 1), static_cast<float>(d.out_h));
    const float bin_w = __fdiv_rn(static_cast<float>(cols > 1 ? cols : 1), static_cast<float>(d.out_w));
    // Bin p's window: [floor(p * bin), ceil((p + 1) * bin)) from the box's start, clipped to X.
    const int64_t h0 = clamp_to(static_cast<int64_t>(floorf(__fmul_rn(static_cast<float>(ph), bin_h))) + start_h, d.height);
    const int64_t h1 = clamp_to(static_cast<int64_t>(ceilf(__fmul_rn(static_cast<float>(ph + 1), bin_h))) + start_h, d.height);
    const int64_t w0 = clamp_to(static_cast<int64_t>(floorf(__fmul_rn(static_cast<float>(pw), bin_w))) + start_w, d.width);
    const int64_t w1 = clamp_to(static_cast<int64_t>(ceilf(__fmul_rn(static_cast<float>(pw + 1), bin_w))) + start_w, d.width);
    if (h1 <= h0 || w1 <= w0) continue;  // an empty window gives 0
    const float* plane = x + (static_cast<int64_t>(b) * d.channels + c) * d.height * d.width;
    float best = -3.402823466e+38f;  // the float's lowest, as the CPU starts
    for (int64_t h = h0; h < h1; ++h) {
      for (int64_t w = w0; w < w1; ++w) best = std_max(plane[h * d.width + w], best);
    }
    y[i] = best;
  }
}

}  // namespace

void launch_roi_align(const float* x, const float* rois, const int64_t* batch, float* y, const RoiDims& d,
                      bool half_pixel, bool max_mode, int64_t sampling_ratio, cudaStream_t stream) {
  const int64_t total = d.rois * d.channels * d.out_h * d.out_w;
  if (total == 0) return;
  roi_align_kernel<<<grid_for(total), kBlock, 0, stream>>>(x, rois, batch, y, d, half_pixel, max_mode,
                                                             sampling_ratio);
  check_launch("RoiAlign kernel");
}

void launch_max_roi_pool(const float* x, const float* rois, float* y, const RoiDims& d, cudaStream_t stream) {
  const int64_t total = d.rois * d.channels * d.out_h * d.out_w;
  if (total == 0) return;
  max_roi_pool_kernel<<<grid_for(total), kBlock, 0, stream>>>(x, rois, y, d);
  check_launch("MaxRoiPool kernel");
}

}  // namespace dnnx::cuda
