// The AveragePool kernel (avg_pool_cuda.cc), a small window kernel with ONNX's divisor. One
// thread per output element, grid-stride loops, arithmetic as the CPU kernels do it. The kernel
// takes float32, float16 or bfloat16 elements (element_dispatch.cuh: float arithmetic either
// way). A channels-last X ([N, H, W, C], AveragePool@NHWC) takes the channel as the innermost index:
// adjacent threads read adjacent channels of one pixel.
#include "backends/cuda/pool/avg_pool_divisor.cuh"
#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/runtime/element_dispatch.cuh"
#include "backends/cuda/runtime/grid_loop.cuh"
#include "backends/cuda/layout/glue_kernels.h"
#include "backends/cuda/runtime/launch.cuh"

namespace dnnx::cuda {

namespace {

// Taps of one dim for output index o: [lo, hi) inside X; `counted` enter the divisor.
__device__ __forceinline__ void taps(int64_t o, int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe,
                                     bool include_pad, int64_t& start, int64_t& counted) {
  start = o * s - pb;
  counted = avg_pool_counted(o, in, k, s, d, pb, pe, include_pad);
}

template <class T>
__global__ void avg_pool(const T* __restrict__ x, T* __restrict__ y, Window3d w, int64_t pe0, int64_t pe1,
                         int64_t pe2, bool include_pad, int64_t channels, int64_t n) {
  const int64_t out_plane = w.out[0] * w.out[1] * w.out[2];
  const int64_t in_plane = w.in[0] * w.in[1] * w.in[2];
  DNNX_GRID_LOOP(i, n) {
    const int64_t c = i % channels, q = i / channels;  // channels = 1: c = 0, q = i
    const int64_t p = q / out_plane;
    const int64_t o = q % out_plane;
    const int64_t od = o / (w.out[1] * w.out[2]), oh = o / w.out[2] % w.out[1], ow = o % w.out[2];
    int64_t sd, sh, sw, cd, ch, cw;
    taps(od, w.in[0], w.kernel[0], w.stride[0], w.dilation[0], w.pad_begin[0], pe0, include_pad, sd, cd);
    taps(oh, w.in[1], w.kernel[1], w.stride[1], w.dilation[1], w.pad_begin[1], pe1, include_pad, sh, ch);
    taps(ow, w.in[2], w.kernel[2], w.stride[2], w.dilation[2], w.pad_begin[2], pe2, include_pad, sw, cw);
    const T* plane = x + p * in_plane * channels + c;
    float sum = 0.0f;
    for (int64_t kd = 0; kd < w.kernel[0]; ++kd) {
      const int64_t id = sd + kd * w.dilation[0];
      if (id < 0 || id >= w.in[0]) continue;
      for (int64_t kh = 0; kh < w.kernel[1]; ++kh) {
        const int64_t ih = sh + kh * w.dilation[1];
        if (ih < 0 || ih >= w.in[1]) continue;
        for (int64_t kw = 0; kw < w.kernel[2]; ++kw) {
          const int64_t iw = sw + kw * w.dilation[2];
          if (iw < 0 || iw >= w.in[2]) continue;
          sum += float(plane[((id * w.in[1] + ih) * w.in[2] + iw) * channels]);
        }
      }
    }
    y[i] = T(sum / static_cast<float>(cd * ch * cw));
  }
}

}  // namespace

void launch_avg_pool(const void* x, void* y, const Window3d& w, const int64_t pad_end[3], bool count_include_pad,
                     DType dtype, cudaStream_t stream, int64_t channels) {
  const int64_t n = w.planes * w.out[0] * w.out[1] * w.out[2] * channels;
  if (n == 0) return;
  with_element(dtype, [&](auto e) {
    using T = decltype(e);
    avg_pool<T><<<grid_for(n), kBlock, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), w, pad_end[0],
                                                     pad_end[1], pad_end[2], count_include_pad, channels, n);
  });
  check_launch("average pool kernel");
}

}  // namespace dnnx::cuda
