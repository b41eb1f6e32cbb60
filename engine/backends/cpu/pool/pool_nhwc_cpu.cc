// The window pools on channels-last data (Note [channels-last conv on the cpu] in
// conv/conv_nhwc_cpu.cc): X [N, H, W, C] -> Y [N, OH, OW, C], each output pixel one pass over its
// window's input rows, every channel at once (the loops over C vectorize). The values are the
// NCHW kernels' (pool_cpu.cc, avg_pool_cpu.cc, global_pool_cpu.cc): padding never wins a max, an
// average divides by the taps ONNX's count_include_pad counts, and a global average sums the
// pixels in order before one division.
#include <algorithm>
#include <limits>
#include <vector>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "backends/cpu/pool/window_taps_cpu.h"
#include "backends/cpu/runtime/fast_math.h"
#include "backends/cpu/runtime/thread_pool.h"
#include "ops/layout/channels_last.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

enum class WindowPool { Max, Average };

// Note [nhwc max pool rows]: one output row of a max pool in one function: per pixel and block
// of 16 channels the running max stays in a register, over the window's taps. The per-pixel loop
// cost a std::fill (a memset call) and a call per tap: crnn's first pool, [1, 32, 128, 32] -> 2x2
// windows at stride 2, took 24.6 us on this project's Xeon (1 thread), onnxruntime 11. (The same
// loops in plain C++ under target_clones, a local array of 64 running maxima, took 312 us: GCC
// kept the array in memory.) The maxima are taken in the same order from the same -inf
// (std::max(acc, x) per tap is _mm512_max_ps(x, acc): a NaN never wins), so the results are the
// same bits as the per-pixel loop's, which runs where the CPU has no AVX-512.
#if defined(__x86_64__) && defined(__GNUC__)
#define DNNX_POOL_NHWC_AVX512 1
__attribute__((target("avx512f"))) void max_row_avx512(const float* x, const WindowTaps& th, const WindowTaps* cols,
                                                       int64_t ow, int64_t row_stride, int64_t tap_stride_h,
                                                       int64_t tap_stride_w, int64_t c, float* y) {
  const __m512 lowest = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  for (int64_t col = 0; col < ow; ++col, y += c) {
    const WindowTaps& tw = cols[col];
    const int64_t window = th.start * row_stride + tw.start * c;  // may lie in the padding
    for (int64_t c0 = 0; c0 < c; c0 += 16) {
      const __mmask16 lanes = c - c0 >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << (c - c0)) - 1u);
      __m512 acc = lowest;
      for (int64_t kh = th.lo; kh < th.hi; ++kh) {
        for (int64_t kw = tw.lo; kw < tw.hi; ++kw) {
          const __m512 in = _mm512_maskz_loadu_ps(lanes, x + (window + kh * tap_stride_h + kw * tap_stride_w + c0));
          acc = _mm512_mask_max_ps(acc, static_cast<__mmask16>(0xFFFF), in, acc);  // masked form: GCC 12's warning
        }
      }
      _mm512_mask_storeu_ps(y + c0, lanes, acc);
    }
  }
}

bool pool_nhwc_avx512() {
  static const bool has = __builtin_cpu_supports("avx512f");
  return has;
}
#endif

DNNX_VECTOR_CLONES_AVX512 void max_into(const float* x, float* y, int64_t c) {
  for (int64_t i = 0; i < c; ++i) y[i] = std::max(y[i], x[i]);
}

DNNX_VECTOR_CLONES_AVX512 void add_into(const float* x, float* y, int64_t c) {
  for (int64_t i = 0; i < c; ++i) y[i] += x[i];
}

DNNX_VECTOR_CLONES_AVX512 void divide(float* y, int64_t c, float divisor) {
  for (int64_t i = 0; i < c; ++i) y[i] = y[i] / divisor;
}

class WindowPoolNhwcKernel final : public Kernel {
 public:
  WindowPoolNhwcKernel(WindowPool kind, const Shape& x, ConvGeometry g, bool count_include_pad, int workers)
      : kind_(kind), n_(x[0]), h_(x[1]), w_(x[2]), c_(x[3]), g_(std::move(g)), workers_(workers),
        rows_(window_table(g_, 0, count_include_pad)), cols_(window_table(g_, 1, count_include_pad)) {}

  void run(const KernelArgs& args) const override {
    const float* x = args.in(0);
    float* y = args.out(0);
    const int64_t oh = g_.output[0], ow = g_.output[1];
    cpu_thread_pool().parallel_for(n_ * oh, [&](int64_t begin, int64_t end, int) {
      for (int64_t row = begin; row < end; ++row) {
        const int64_t image = row / oh, r = row % oh;
#ifdef DNNX_POOL_NHWC_AVX512
        if (kind_ == WindowPool::Max && pool_nhwc_avx512()) {  // Note [nhwc max pool rows]
          max_row_avx512(x + image * h_ * w_ * c_, rows_[static_cast<size_t>(r)], cols_.data(), ow, w_ * c_,
                         g_.dilations[0] * w_ * c_, g_.dilations[1] * c_, c_, y + row * ow * c_);
          continue;
        }
#endif
        for (int64_t col = 0; col < ow; ++col) pool_pixel(x + image * h_ * w_ * c_, r, col, y + (row * ow + col) * c_);
      }
    }, workers_);
  }

 private:
  void pool_pixel(const float* x, int64_t r, int64_t col, float* y) const {
    const WindowTaps& th = rows_[static_cast<size_t>(r)];
    const WindowTaps& tw = cols_[static_cast<size_t>(col)];
    const bool max = kind_ == WindowPool::Max;
    std::fill(y, y + c_, max ? -std::numeric_limits<float>::infinity() : 0.0f);
    for (int64_t kh = th.lo; kh < th.hi; ++kh) {
      const float* in_row = x + (th.start + kh * g_.dilations[0]) * w_ * c_;
      for (int64_t kw = tw.lo; kw < tw.hi; ++kw) {
        const float* in = in_row + (tw.start + kw * g_.dilations[1]) * c_;
        max ? max_into(in, y, c_) : add_into(in, y, c_);
      }
    }
    if (max) return;
    const int64_t divisor = th.counted * tw.counted;
    if (divisor > 0) {
      divide(y, c_, static_cast<float>(divisor));
    } else {
      std::fill(y, y + c_, 0.0f);
    }
  }

  WindowPool kind_;
  int64_t n_, h_, w_, c_;
  ConvGeometry g_;
  int workers_;
  std::vector<WindowTaps> rows_, cols_;  // per output row and column
};

// X [N, H, W, C] -> Y [N, 1, 1, C]: per image the pixels summed in order, then divided by H * W.
// Items are (image, block of kGlobalBlock channels): each sums its channels over every pixel,
// the same order whatever the split.
constexpr int64_t kGlobalBlock = 64;

class GlobalAverageNhwcKernel final : public Kernel {
 public:
  GlobalAverageNhwcKernel(const Shape& x, int workers)
      : n_(x[0]), pixels_(x[1] * x[2]), c_(x[3]), blocks_((x[3] + kGlobalBlock - 1) / kGlobalBlock), workers_(workers) {}

  int64_t items() const { return n_ * blocks_; }

  void run(const KernelArgs& args) const override {
    const float* x = args.in(0);
    float* y = args.out(0);
    cpu_thread_pool().parallel_for(items(), [&](int64_t begin, int64_t end, int) {
      for (int64_t item = begin; item < end; ++item) {
        const int64_t image = item / blocks_, c0 = item % blocks_ * kGlobalBlock, width = std::min(kGlobalBlock, c_ - c0);
        float* out = y + image * c_ + c0;
        std::fill(out, out + width, 0.0f);
        const float* in = x + image * pixels_ * c_ + c0;
        for (int64_t p = 0; p < pixels_; ++p, in += c_) add_into(in, out, width);
        divide(out, width, static_cast<float>(pixels_));  // an empty image: 0 / 0, NaN, as the NCHW kernel
      }
    }, workers_);
  }

 private:
  int64_t n_, pixels_, c_, blocks_;
  int workers_;
};

KernelFactory window_pool_factory(WindowPool kind) {
  return [kind](const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
    const Shape& x = inputs[0].info.shape;  // [N, H, W, C]
    if (x.size() != 4) node_fail<UnsupportedModelError>(node, "the CPU's channels-last pools are 2-D only");
    Node base = node;
    base.op_type = channels_first_op(node.op_type);
    const ConvGeometry g = make_conv_geometry(base, WindowOp::Pool, {x[1], x[2]}, base.attr_ints("kernel_shape", {}));
    const int workers = plan_workers(x[0] * g.output[0], g.output[1] * g.kernel_size() * x[3]);
    KernelChoice choice;
    choice.algorithm = with_threads("nhwc direct", workers);
    choice.kernel = std::make_unique<WindowPoolNhwcKernel>(kind, x, g, base.attr_int("count_include_pad", 0) != 0,
                                                           workers);
    return choice;
  };
}

KernelChoice plan_global_average_nhwc(const Node& node, const std::vector<ValueInfo>& inputs,
                                      const std::vector<TensorInfo>&) {
  const Shape& x = inputs[0].info.shape;
  if (x.size() != 4) node_fail<UnsupportedModelError>(node, "the CPU's channels-last pools are 2-D only");
  const int64_t items = x[0] * ((x[3] + kGlobalBlock - 1) / kGlobalBlock);
  const int workers = plan_workers(items, x[1] * x[2] * kGlobalBlock);
  KernelChoice choice;
  choice.algorithm = with_threads("nhwc pixel sum", workers);
  choice.kernel = std::make_unique<GlobalAverageNhwcKernel>(x, workers);
  return choice;
}

}  // namespace

void register_cpu_pool_nhwc_kernels(KernelRegistry& r) {
  const std::string suffix = kChannelsLastSuffix;
  r.add("MaxPool" + suffix, window_pool_factory(WindowPool::Max));
  r.add("AveragePool" + suffix, window_pool_factory(WindowPool::Average));
  r.add("GlobalAveragePool" + suffix, plan_global_average_nhwc);
}

}  // namespace dnnx
