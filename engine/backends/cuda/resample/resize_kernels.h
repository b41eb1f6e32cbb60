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

// dx [x_size] = the adjoint: zeroed, then each output element adds w * dy to each tap it read
// (atomicAdd: the order of the additions, so the last bits, may differ from run to run).
void launch_resize_grad(const ResizeLaunch& p, const float* dy, float* dx, int64_t n, int64_t x_size,
                        cudaStream_t stream);

}  // namespace dnnx::cuda
