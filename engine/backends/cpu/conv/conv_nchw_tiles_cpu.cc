// Note [nchw convs on the tiles]
// The channels_last pass (Note [channels last]) keeps 2-D conv regions channels-last; a 3-D conv
// stays in ONNX's layout, where im2col+gemm unrolled r3d_18's 3x3x3 layers over [64, 16, 56, 56]
// into a col of [1728 x 50176] floats (347 MB, written and read again per call) and ran at ~58
// GMAC/s against onnxruntime's ~100 (1 thread, this AVX-512 Xeon); so do the 1-D and 2-D convs
// of a narrow region (Note [narrow regions]: speech_gru's 11x11 ones). So such a conv (but a
// 1x1 one, a GEMM over X already, and a 1-D or 2-D one of few channels) runs on the
// packed tiles (Note [packed nhwc filter]; 3-D windows in their pointer tables) through
// channels-last copies in the workspace:
//   X [N, C, S] -> X' [N, S, C]    (S = D*H*W; a blocked transpose, split across the pool)
//   Y' [N, OS, K] = the tiles over X' (the filter permuted to [K, KD, KH, KW, Cg] and packed at
//                   plan time; the bias added with the last channel block)
//   Y [N, K, OS] <- Y' (+ z), Relu, then the activation: the unfused ops' order, in the copy back.
// The copies cost two passes over X and Y (~1 ms each on the [64, 16, 56, 56] layers), the
// im2col col's 347 MB none. The tiles' sums do not depend on the thread split (Note [packed
// nhwc filter]) and the copies are exact, so neither do the results.
#include "backends/cpu/conv/conv_nchw_tiles_cpu.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "backends/cpu/conv/conv_nhwc_cpu.h"
#include "backends/cpu/conv/conv_nhwc_tiles_cpu.h"
#include "backends/cpu/runtime/thread_pool.h"
#include "runtime/mutable_constants.h"

namespace dnnx {

namespace {

constexpr size_t kResidualInput = 3;  // Conv+Add+Relu's z
constexpr int64_t kBlock = 64;        // spatial positions per copy item: a [64 x C] block of X' or Y'
// A 1-D or 2-D conv left in ONNX's layout (a narrow region: Note [narrow regions]) runs on the
// tiles from this many channels per group: speech_gru's 16 -> 16 11x11 conv 1.42 -> 0.67 ms,
// while its 1 -> 16 stem, 121 taps of one channel, took 0.155 ms in im2col+gemm and 0.23 on the
// tiles (gathered rows, Note [gathered rows]). A 3-D conv's col is the larger cost: all of them.
constexpr int64_t kMinChannels2d = 16;

size_t aligned_floats(int64_t n) { return (static_cast<size_t>(n) * sizeof(float) + 63) / 64 * 64; }

NhwcConv nhwc_geometry(const ConvShape& s) {
  const ConvGeometry& g = s.g;  // expanded to (D, H, W)
  NhwcConv c;
  c.n = s.batch, c.c = s.channels, c.k = s.filters, c.group = g.group;
  c.d = g.input[0], c.h = g.input[1], c.w = g.input[2];
  c.od = g.output[0], c.oh = g.output[1], c.ow = g.output[2];
  c.rd = g.kernel[0], c.r = g.kernel[1], c.s = g.kernel[2];
  c.sd = g.strides[0], c.sh = g.strides[1], c.sw = g.strides[2];
  c.pd = g.pads_begin[0], c.ph = g.pads_begin[1], c.pw = g.pads_begin[2];
  c.dd = g.dilations[0], c.dh = g.dilations[1], c.dw = g.dilations[2];
  return c;
}

class NchwTilesConv final : public Kernel {
 public:
  NchwTilesConv(const ConvShape& s, const float* filter, bool has_bias, bool relu, bool residual,
                const ConvActivation& act)
      : s_(s), has_bias_(has_bias), relu_(relu), residual_(residual), act_(act),
        in_size_(s.g.input_size()), out_size_(s.g.output_size()) {
    // [M, Cg, taps] -> [M, taps, Cg]: the channels-last filter the tiles pack
    const int64_t cg = s.group_channels(), taps = s.g.kernel_size();
    std::vector<float> w(static_cast<size_t>(s.filters * cg * taps));
    for (int64_t m = 0; m < s.filters; ++m)
      for (int64_t c = 0; c < cg; ++c)
        for (int64_t t = 0; t < taps; ++t) w[(m * taps + t) * cg + c] = filter[(m * cg + c) * taps + t];
    DenseNhwc dense = make_dense_nhwc_conv(nhwc_geometry(s), has_bias, w.data());
    tiles_ = std::move(dense.kernel);
    tiles_algorithm_ = dense.algorithm;
    tiles_workspace_ = dense.workspace_bytes;
    in_items_ = s.batch * ((in_size_ + kBlock - 1) / kBlock);
    out_items_ = s.batch * ((out_size_ + kBlock - 1) / kBlock);
    in_workers_ = plan_workers(in_items_, kBlock * s.channels);
    out_workers_ = plan_workers(out_items_, kBlock * s.filters);
  }

  const std::string& tiles_algorithm() const { return tiles_algorithm_; }
  size_t workspace_bytes() const {
    return aligned_floats(s_.batch * in_size_ * s_.channels) + aligned_floats(s_.batch * out_size_ * s_.filters) +
           tiles_workspace_;
  }

  void run(const KernelArgs& args) const override {
    char* ws = static_cast<char*>(args.workspace);
    float* xt = reinterpret_cast<float*>(ws);
    float* yt = reinterpret_cast<float*>(ws + aligned_floats(s_.batch * in_size_ * s_.channels));
    void* tiles_ws = ws + aligned_floats(s_.batch * in_size_ * s_.channels) + aligned_floats(s_.batch * out_size_ * s_.filters);
    cpu_thread_pool().parallel_for(in_items_, [&](int64_t begin, int64_t end, int) {
      for (int64_t item = begin; item < end; ++item) to_channels_last(args.in(0), xt, item);
    }, in_workers_);
    const void* inputs[3] = {xt, nullptr, has_bias_ ? args.in(2) : nullptr};
    void* outputs[1] = {yt};
    KernelArgs tile_args{inputs, outputs, tiles_ws, args.strings};
    tiles_->run(tile_args);
    cpu_thread_pool().parallel_for(out_items_, [&](int64_t begin, int64_t end, int) {
      for (int64_t item = begin; item < end; ++item) from_channels_last(args, yt, item);
    }, out_workers_);
  }

 private:
  // Block `item` of X [N, C, S] into X' [N, S, C].
  void to_channels_last(const float* x, float* xt, int64_t item) const {
    const int64_t blocks = (in_size_ + kBlock - 1) / kBlock, n = item / blocks;
    const int64_t s0 = item % blocks * kBlock, s1 = std::min(in_size_, s0 + kBlock), c_count = s_.channels;
    const float* xn = x + n * c_count * in_size_;
    float* out = xt + n * in_size_ * c_count;
    for (int64_t c = 0; c < c_count; ++c) {
      const float* row = xn + c * in_size_;
      for (int64_t i = s0; i < s1; ++i) out[i * c_count + c] = row[i];
    }
  }

  // Block `item` of Y' [N, OS, K] into Y [N, K, OS] with the epilogue after the bias.
  void from_channels_last(const KernelArgs& args, const float* yt, int64_t item) const {
    const int64_t blocks = (out_size_ + kBlock - 1) / kBlock, n = item / blocks;
    const int64_t s0 = item % blocks * kBlock, s1 = std::min(out_size_, s0 + kBlock), k_count = s_.filters;
    const float* in = yt + n * out_size_ * k_count;
    float* yn = args.out(0) + n * k_count * out_size_;
    const float* zn = residual_ ? args.in(kResidualInput) + n * k_count * out_size_ : nullptr;
    for (int64_t k = 0; k < k_count; ++k) {
      float* row = yn + k * out_size_;
      const float* z = zn ? zn + k * out_size_ : nullptr;
      for (int64_t i = s0; i < s1; ++i) {
        float v = in[i * k_count + k];
        if (z) v += z[i];
        if (relu_) v = v < 0.0f ? 0.0f : v;  // NaN passes through
        row[i] = v;
      }
      apply_conv_activation(act_, row + s0, s1 - s0);
    }
  }

  ConvShape s_;
  bool has_bias_, relu_, residual_;
  ConvActivation act_;
  int64_t in_size_, out_size_;  // S, OS
  std::unique_ptr<Kernel> tiles_;
  std::string tiles_algorithm_;
  size_t tiles_workspace_ = 0;
  int64_t in_items_ = 0, out_items_ = 0;
  int in_workers_ = 1, out_workers_ = 1;
};

}  // namespace

std::string why_not_nchw_tiles(const ConvShape& s, size_t rank, bool constant_filter) {
  const char* mode = std::getenv("DNNX_CONV_NHWC");
  if (mode && std::strcmp(mode, "off") == 0) return "DNNX_CONV_NHWC=off";
  if (!nhwc_tiles_vectorized()) return "no AVX-512 or AVX2 (the packed tiles' path)";
  if (rank < 3 && s.group_channels() < kMinChannels2d) {
    return std::to_string(s.group_channels()) + " channels per group in a " + std::to_string(rank) + "-D conv, under " +
           std::to_string(kMinChannels2d) + " (im2col+gemm's product runs better)";
  }
  if (!constant_filter || planning_mutable_constants()) return "the filter is not a constant (Note [mutable constants])";
  if (s.g.group > 1 && s.group_channels() == 1) return "one channel per group";
  if (s.g.kernel_size() == 1) return "a 1x1x1 kernel: a GEMM over X or its strided gather, no copies";
  return "";
}

KernelChoice make_nchw_tiles_conv(const ConvShape& s, const float* filter, bool has_bias, bool relu, bool residual,
                                  const ConvActivation& act) {
  auto kernel = std::make_unique<NchwTilesConv>(s, filter, has_bias, relu, residual, act);
  KernelChoice choice;
  choice.algorithm = "nchw->nhwc " + kernel->tiles_algorithm();
  choice.workspace_bytes = kernel->workspace_bytes();
  choice.kernel = std::move(kernel);
  return choice;
}

}  // namespace dnnx
