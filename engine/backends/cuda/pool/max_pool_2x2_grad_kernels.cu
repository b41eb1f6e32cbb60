// Note [2x2 pool gradient]: the gradient of the common MaxPool (2x2 windows, stride 2, no pads,
// even planes: every input in exactly one window) by one thread per window: it reads the window's
// four X (two 8-byte loads), gives dY to the first maximum in row order, as the CPU does, and
// writes the four dX (two 8-byte stores). cudnnPoolingBackward, which also reads Y and dY per
// input, took 31 us on LeNet's pool1 at batch 256 (256x20x24x24) for 27 MB of traffic.
#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/runtime/grid_loop.cuh"
#include "backends/cuda/runtime/launch.cuh"
#include "backends/cuda/train/grad_kernels.h"

namespace dnnx::cuda {

namespace {

// x, dx [planes, h, w]; dy [planes, h / 2, w / 2]; w even (8-byte aligned pairs).
__global__ void max_pool_2x2_grad(const float* __restrict__ x, const float* __restrict__ dy, float* __restrict__ dx,
                                  int64_t windows, int ow, int w) {
  DNNX_GRID_LOOP(i, windows) {
    const int64_t row = i / ow;  // planes * oh rows of windows
    const int col = static_cast<int>(i - row * ow);
    const int64_t top = 2 * row * w + 2 * col;  // input (2 oy, 2 ox) of plane p: row = p * oh + oy
    const float2 a = *reinterpret_cast<const float2*>(x + top);
    const float2 b = *reinterpret_cast<const float2*>(x + top + w);
    int at = 0;  // the first maximum in (0,0), (0,1), (1,0), (1,1) order: x > best moves it
    float best = a.x;
    if (a.y > best) best = a.y, at = 1;
    if (b.x > best) best = b.x, at = 2;
    if (b.y > best) at = 3;
    const float g = dy[i];
    *reinterpret_cast<float2*>(dx + top) = make_float2(at == 0 ? g : 0.0f, at == 1 ? g : 0.0f);
    *reinterpret_cast<float2*>(dx + top + w) = make_float2(at == 2 ? g : 0.0f, at == 3 ? g : 0.0f);
  }
}

}  // namespace

bool max_pool_2x2_grad_fits(const Window3d& w) {
  return w.in[0] == 1 && w.kernel[1] == 2 && w.kernel[2] == 2 && w.stride[1] == 2 && w.stride[2] == 2 &&
         w.dilation[1] == 1 && w.dilation[2] == 1 && w.pad_begin[1] == 0 && w.pad_begin[2] == 0 &&
         w.in[1] % 2 == 0 && w.in[2] % 2 == 0 && w.out[1] == w.in[1] / 2 && w.out[2] == w.in[2] / 2 &&
         w.in[2] < (int64_t{1} << 30);
}

void launch_max_pool_2x2_grad(const float* x, const float* dy, float* dx, const Window3d& w, cudaStream_t stream) {
  const int64_t windows = w.planes * w.out[1] * w.out[2];
  if (windows == 0) return;
  max_pool_2x2_grad<<<grid_for(windows), kBlock, 0, stream>>>(x, dy, dx, windows, static_cast<int>(w.out[2]),
                                                              static_cast<int>(w.in[2]));
  check_launch("2x2 max-pool gradient kernel");
}

}  // namespace dnnx::cuda
