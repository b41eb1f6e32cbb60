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

// A 2-D conv on X [N, H, W, C] -> Y [N, OH, OW, K], filter [K, R, S, C / group].
struct NhwcConv {
  int64_t n = 0, h = 0, w = 0, c = 0, k = 0, oh = 0, ow = 0, r = 1, s = 1;
  int64_t sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1, group = 1;
  int64_t pixels() const { return n * oh * ow; }
  int64_t taps() const { return r * s; }
  int64_t group_channels() const { return c / group; }
  int64_t group_filters() const { return k / group; }
  bool depthwise() const { return group > 1 && group == c && k == c; }
};

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
