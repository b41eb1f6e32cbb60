// The channels-last conv kernels' one entry point outside the conv files (Note [channels-last
// conv on the cpu] in conv_nhwc_cpu.cc): a product with a constant right operand,
// Y [M, N] = A [M, K] x B [K, N] (+ bias [N], Relu), is a 1x1 conv over M pixels of K channels,
// so MatMul and Gemm with constant weights run on the same packed tiles (Note [packed product]).
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "runtime/backend.h"

namespace dnnx {

// A 2-D conv on X [N, H, W, C] -> Y [N, OH, OW, K], filter [K, R, S, C / group]; or a 3-D one
// on X [N, D, H, W, C] -> Y [N, OD, OH, OW, K], filter [K, RD, R, S, C / group] (Note [nchw
// convs on the tiles] in conv_nchw_tiles_cpu.cc), its depth's fields 1 and 0 for a 2-D conv.
struct NhwcConv {
  int64_t n = 0, h = 0, w = 0, c = 0, k = 0, oh = 0, ow = 0, r = 1, s = 1;
  int64_t sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1, group = 1;
  int64_t d = 1, od = 1, rd = 1, sd = 1, pd = 0, dd = 1;  // the depth: input, output, taps, stride, pad, dilation
  int64_t pixels() const { return n * od * oh * ow; }
  int64_t window_rows() const { return rd * r; }  // the (depth, row) pairs of a window
  int64_t taps() const { return rd * r * s; }
  int64_t group_channels() const { return c / group; }
  int64_t group_filters() const { return k / group; }
  bool depthwise() const { return group > 1 && group == c && k == c; }
};

// A dense (not depthwise) conv on the packed tiles, X [N, (D,) H, W, C] and Y channels-last:
// inputs X, the filter [K, (RD,) R, S, Cg] (read at each run unless `constant_filter`, packed at
// plan time, is given) and, with has_bias, the bias [K]; y = sum + bias, no other epilogue. The
// algorithm reads "packed gemm [RDx]RxS PxW ...".
struct DenseNhwc {
  std::unique_ptr<Kernel> kernel;
  std::string algorithm;
  size_t workspace_bytes = 0;
  bool residual_in_place = false;  // Note [residual in place] in conv_nhwc_cpu.cc
};
DenseNhwc make_dense_nhwc_conv(const NhwcConv& g, bool has_bias, const float* constant_filter);

struct PackedProduct {
  std::unique_ptr<Kernel> kernel;
  std::string algorithm;
  size_t workspace_bytes = 0;
};

// Note [packed product]: whether the packed tiles take this product ("" when they do): on a CPU
// with the channels-last path, M rows enough to fill their strips, K and N past a tile.
std::string why_not_packed_product(int64_t m, int64_t k, int64_t n);

// b: the constant B, [K, N] (b_nk false) or [N, K] (b_nk true, Gemm's transB). The kernel reads
// A as input 0 and, with has_bias, a bias [N] as input 2.
PackedProduct make_packed_product(int64_t m, int64_t k, int64_t n, const float* b, bool b_nk, bool has_bias, bool relu);

// MatMul's and Gemm's choice: where B (input 1) is a float32 constant that no tuner changes (Note
// [mutable constants]) and the tiles take the product, fills `choice` (`replaced`, the library
// path, among its rejected) and returns true; else records why not in `choice` and returns false.
bool choose_packed_product(KernelChoice& choice, int64_t m, int64_t k, int64_t n, const ValueInfo& b, bool b_nk,
                           bool has_bias, bool relu, const std::string& replaced);

}  // namespace dnnx
