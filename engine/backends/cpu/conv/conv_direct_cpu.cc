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
#include "backends/cpu/conv/conv_direct_cpu.h"

#include <vector>

namespace dnnx {

namespace {

constexpr int64_t kLanes = 8;  // the kernel's vectors
// The largest image-group (Cg*D*H*W floats) taken: it is read once per panel of filters, so it
// should stay in the 512 KB L2 beside the panel's weights.
constexpr int64_t kMaxInputFloats = int64_t{1} << 16;

enum Dim { kD = 0, kH = 1, kW = 2 };

}  // namespace

std::string why_not_direct_conv(const ConvShape& s) {
  const ConvGeometry& g = s.g;
  if (!tap_gemm_vectorized()) return "the CPU has no AVX2 and FMA";
  if (g.has_padding()) return "padded";
  for (size_t d = 0; d < g.rank(); ++d) {
    if (g.strides[d] != 1) return "strides are " + shape_str(g.strides);
    if (g.dilations[d] != 1) return "dilations are " + shape_str(g.dilations);
  }
  // Short rows leave most of a vector's lanes idle: at most a quarter of them, here.
  const int64_t out_w = g.output[kW];
  const int64_t vectors = (out_w + kLanes - 1) / kLanes;
  if (4 * out_w < 3 * kLanes * vectors) return "output rows of " + std::to_string(out_w) + " fill vectors poorly";
  if (s.group_channels() * g.input_size() > kMaxInputFloats) return "an image is larger than the cache";
  return "";
}

TapGemm direct_conv_gemm(const ConvShape& s) {
  const ConvGeometry& g = s.g;
  const int64_t in_h = g.input[kH], in_w = g.input[kW];
  std::vector<int32_t> taps;
  for (int64_t c = 0; c < s.group_channels(); ++c) {
    for (int64_t kd = 0; kd < g.kernel[kD]; ++kd) {
      for (int64_t kh = 0; kh < g.kernel[kH]; ++kh) {
        for (int64_t kw = 0; kw < g.kernel[kW]; ++kw) {
          taps.push_back(static_cast<int32_t>(c * g.input_size() + (kd * in_h + kh) * in_w + kw));
        }
      }
    }
  }
  const int64_t out_h = g.output[kH], out_w = g.output[kW];
  TapTileBuilder tiles(TapGemm::max_vectors(s.group_filters()));
  for (int64_t od = 0; od < g.output[kD]; ++od) {
    for (int64_t oh = 0; oh < out_h; ++oh) tiles.add_run((od * in_h + oh) * in_w, (od * out_h + oh) * out_w, out_w);
  }
  return TapGemm(s.group_filters(), std::move(taps), tiles.finish());
}

}  // namespace dnnx
