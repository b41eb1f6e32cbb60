// Note [direct conv]
// LeNet's convs are small GEMMs per image: conv1 [20x25]x[25x576], conv2 [50x500]x[500x64].
// Through im2col and OpenBLAS's sgemm they took, at batch 64 on 1 thread on this project's 2-core
// CI machine (AMD EPYC, AVX2), 1.64 and 6.96 ms (22 and 29 GFLOP/s): im2col's copies of 8- and
// 24-float rows, sgemm packing both operands per image, and a ragged 50-row edge. onnxruntime
// (MLAS, NCHWc) took 1.05 (with its reorder) and 3.24 ms. This kernel reads the operands where
// they are (a TapGemm, Note [tap gemm] in tap_gemm_cpu.cc): for a tile of up to 6 filters x 24
// outputs of one output row, for every tap k = (c, kd, kh, kw), the tap's input vectors come
// straight from X (for a unit stride, one row's outputs read consecutive inputs). Each output's
// sum runs over k in W's order in one lane, whatever the tile or the thread that computes it,
// so results do not depend on the threads.
// Measured (same machine, batch 64, 1 thread): conv1 0.53 ms, conv2 2.11 ms (48 GMAC/s).
//
// Note [padded direct conv]: a padded conv (the LeNet-5 exports' conv1, 5x5 with pads 2 on
// 28x28) copies each image-group into a zero-padded [Cg, D', H', W'] in the workspace and runs on
// that copy as on an unpadded image: the copy is one pass over a cache-sized image, against
// im2col's 25 copies of it. Rows as short as 10 outputs (LeNet-5's conv2: 10 of 16 lanes) still
// beat im2col+gemm there. Measured on this project's Xeon (AVX-512, 1 thread), LeNet-5 at batch
// 10: conv1 (1 -> 6 channels, padded) 68 -> 36 us, conv2 (6 -> 16, rows of 10) 124 -> 82 us.
// A padded 3x3 kernel keeps Winograd (conv_cpu.cc asks it first).
#include "backends/cpu/conv/conv_direct_cpu.h"

#include <algorithm>
#include <vector>

namespace dnnx {

namespace {

constexpr int64_t kLanes = 8;  // the kernel's vectors
// The largest image-group (Cg*D*H*W floats) taken: it is read once per panel of filters, so it
// should stay in the 512 KB L2 beside the panel's weights.
constexpr int64_t kMaxInputFloats = int64_t{1} << 16;

enum Dim { kD = 0, kH = 1, kW = 2 };

// The spatial dims the TapGemm reads: the input's, plus the pads (Note [padded direct conv]).
int64_t padded_dim(const ConvGeometry& g, size_t d) { return g.input[d] + g.pads_begin[d] + g.pads_end[d]; }

int64_t padded_image_size(const ConvGeometry& g) { return padded_dim(g, kD) * padded_dim(g, kH) * padded_dim(g, kW); }

}  // namespace

std::string why_not_direct_conv(const ConvShape& s) {
  const ConvGeometry& g = s.g;
  if (!tap_gemm_vectorized()) return "the CPU has no AVX2 and FMA";
  for (size_t d = 0; d < g.rank(); ++d) {
    if (g.strides[d] != 1) return "strides are " + shape_str(g.strides);
    if (g.dilations[d] != 1) return "dilations are " + shape_str(g.dilations);
  }
  // Short rows leave most of a vector's lanes idle: at most a quarter of them, here.
  const int64_t out_w = g.output[kW];
  const int64_t vectors = (out_w + kLanes - 1) / kLanes;
  if (8 * out_w < 5 * kLanes * vectors) return "output rows of " + std::to_string(out_w) + " fill vectors poorly";
  if (s.group_channels() * padded_image_size(g) > kMaxInputFloats) return "an image is larger than the cache";
  return "";
}

TapGemm direct_conv_gemm(const ConvShape& s) {
  const ConvGeometry& g = s.g;
  const int64_t in_h = padded_dim(g, kH), in_w = padded_dim(g, kW), image = padded_image_size(g);
  std::vector<int32_t> taps;
  for (int64_t c = 0; c < s.group_channels(); ++c) {
    for (int64_t kd = 0; kd < g.kernel[kD]; ++kd) {
      for (int64_t kh = 0; kh < g.kernel[kH]; ++kh) {
        for (int64_t kw = 0; kw < g.kernel[kW]; ++kw) {
          taps.push_back(static_cast<int32_t>(c * image + (kd * in_h + kh) * in_w + kw));
        }
      }
    }
  }
  const int64_t out_h = g.output[kH], out_w = g.output[kW];
  // 16-wide tiles where the CPU has AVX-512 (Note [tap gemm in avx512] in tap_gemm_cpu.cc).
  const int lanes = tap_gemm_avx512() ? 16 : 8;
  TapTileBuilder tiles(TapGemm::max_vectors(s.group_filters(), lanes), lanes);
  for (int64_t od = 0; od < g.output[kD]; ++od) {
    for (int64_t oh = 0; oh < out_h; ++oh) tiles.add_run((od * in_h + oh) * in_w, (od * out_h + oh) * out_w, out_w);
  }
  return TapGemm(s.group_filters(), std::move(taps), tiles.finish(), lanes);
}

int64_t direct_padded_floats(const ConvShape& s) {
  return s.g.has_padding() ? s.group_channels() * padded_image_size(s.g) : 0;
}

void pad_direct_input(const ConvShape& s, const float* x_g, float* dst) {
  const ConvGeometry& g = s.g;
  const int64_t d = g.input[kD], h = g.input[kH], w = g.input[kW];
  const int64_t ph = padded_dim(g, kH), pw = padded_dim(g, kW);
  std::fill(dst, dst + direct_padded_floats(s), 0.0f);
  for (int64_t c = 0; c < s.group_channels(); ++c) {
    float* image = dst + c * padded_image_size(g);
    for (int64_t z = 0; z < d; ++z) {
      for (int64_t y = 0; y < h; ++y) {
        const float* src = x_g + ((c * d + z) * h + y) * w;
        float* row = image + ((z + g.pads_begin[kD]) * ph + y + g.pads_begin[kH]) * pw + g.pads_begin[kW];
        std::copy(src, src + w, row);
      }
    }
  }
}

}  // namespace dnnx
