// Resize's coordinate arithmetic for one dim, written once for the host (ops/resample/resize.cc builds
// the CPU's tap tables from it) and the device (the CUDA nearest/linear kernel calls it per
// output element): plain structs and inline functions, in double as onnx's reference computes
// them, so that a nearest tie or a floor at an integer lands on the same side everywhere.
#pragma once
#include <cstdint>

#ifdef __CUDACC__
#define DNNX_HOST_DEVICE __host__ __device__
#else
#define DNNX_HOST_DEVICE
#endif

namespace dnnx {

enum class ResizeMode : int32_t { Nearest, Linear, Cubic };
enum class ResizeCoord : int32_t {
  HalfPixel,           // (o + 0.5) / scale - 0.5
  HalfPixelSymmetric,  // half_pixel, re-centred when the output size was rounded (opset 19)
  PytorchHalfPixel,    // half_pixel, but source -0.5 (clamped: index 0) for a 1-long output
  AlignCorners,        // o * (in - 1) / (out - 1)
  Asymmetric,          // o / scale (Resize-10 and Upsample)
  TfCropAndResize,     // inside roi [start, end] of the input, extrapolation outside
};
enum class ResizeNearest : int32_t {
  RoundPreferFloor,
  RoundPreferCeil,
  Floor,
  Ceil,
  Simple,  // Resize-10 and Upsample (onnxruntime): floor when upsampling, ceil when downsampling
};

// One dim of X as the coordinate formulas read it.
struct ResizeDim {
  int64_t in = 1;
  int64_t out = 1;
  double scale = 1;      // out / in, or the given scale (as float32, widened)
  double roi_start = 0;  // tf_crop_and_resize only: the crop, in [0, 1] of the input
  double roi_end = 1;
  bool identity = true;  // out == in at scale 1 (and the whole roi): read straight through
};

// The floor of a double as an integer, for both sides (std::floor is not device code).
DNNX_HOST_DEVICE inline int64_t resize_floor(double x) {
  const int64_t t = static_cast<int64_t>(x);
  return (static_cast<double>(t) > x) ? t - 1 : t;
}

// Output index o's source coordinate in X along dim `d` (onnx's reference, _compute_x_ori):
// the float output width scale * in (not the rounded out) is what align_corners and the
// 1-long-output cases read, as the reference does.
DNNX_HOST_DEVICE inline double resize_source(ResizeCoord mode, const ResizeDim& d, int64_t o) {
  const double x = static_cast<double>(o);
  const double width = d.scale * static_cast<double>(d.in);
  const double in = static_cast<double>(d.in);
  switch (mode) {
    case ResizeCoord::AlignCorners:
      return width == 1 ? 0.0 : x * (in - 1) / (width - 1);
    case ResizeCoord::Asymmetric:
      return x / d.scale;
    case ResizeCoord::TfCropAndResize: {
      const double span = (d.roi_end - d.roi_start) * (in - 1);
      return (width == 1 ? span / 2 : x * span / (width - 1)) + d.roi_start * (in - 1);
    }
    case ResizeCoord::PytorchHalfPixel:
      return width == 1 ? -0.5 : (x + 0.5) / d.scale - 0.5;
    case ResizeCoord::HalfPixelSymmetric: {
      const double adjustment = static_cast<double>(d.out) / width;
      const double offset = in / 2 * (1 - adjustment);
      return offset + (x + 0.5) / d.scale - 0.5;
    }
    case ResizeCoord::HalfPixel:
    default:
      return (x + 0.5) / d.scale - 0.5;
  }
}

// Whether a tf_crop_and_resize source lies outside X (the output takes extrapolation_value).
DNNX_HOST_DEVICE inline bool resize_outside(ResizeCoord mode, const ResizeDim& d, double src) {
  return mode == ResizeCoord::TfCropAndResize && (src < 0 || src > static_cast<double>(d.in - 1));
}

DNNX_HOST_DEVICE inline int64_t resize_clamp(int64_t i, int64_t in) { return i < 0 ? 0 : (i >= in ? in - 1 : i); }

// The nearest input index to `src` under the rounding mode, clamped into X.
DNNX_HOST_DEVICE inline int64_t resize_nearest(ResizeNearest mode, const ResizeDim& d, double src) {
  const int64_t lo = resize_floor(src);
  const double frac = src - static_cast<double>(lo);
  int64_t i = lo;
  if (frac != 0) {
    switch (mode) {
      case ResizeNearest::RoundPreferFloor: i = frac <= 0.5 ? lo : lo + 1; break;
      case ResizeNearest::RoundPreferCeil: i = frac < 0.5 ? lo : lo + 1; break;
      case ResizeNearest::Floor: i = lo; break;
      case ResizeNearest::Ceil: i = lo + 1; break;
      case ResizeNearest::Simple: i = d.scale < 1 ? lo + 1 : lo; break;
    }
  }
  return resize_clamp(i, d.in);
}

}  // namespace dnnx
