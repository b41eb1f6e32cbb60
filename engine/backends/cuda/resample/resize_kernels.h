// The Resize kernels' launchers (resize_kernels.cu), for resize_cuda.cc: nearest and linear,
// float32, up to kMaxResizeDims dims. Each thread takes one output element and computes its taps
// per dim on the device with ops/resample/resize_coords.h, the formulas the CPU's tap tables come from.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "ops/resample/resize_coords.h"

namespace dnnx::cuda {

constexpr int kMaxResizeDims = 8;

// One Resize as the kernels read it (passed by value: a few hundred bytes).
struct ResizeLaunch {
  int rank = 0;
  ResizeMode mode = ResizeMode::Nearest;  // Nearest or Linear
  ResizeCoord coord = ResizeCoord::HalfPixel;
  ResizeNearest nearest = ResizeNearest::RoundPreferFloor;
  float extrapolation = 0.0f;
  ResizeDim dims[kMaxResizeDims];
  int64_t in_strides[kMaxResizeDims] = {};  // X's packed strides
};

// y [n] from x.
void launch_resize(const ResizeLaunch& p, const float* x, float* y, int64_t n, cudaStream_t stream);

// The gradient: train/separable_adjoint.h, over lists from the CPU's tap tables (resize_cuda.cc).

}  // namespace dnnx::cuda
