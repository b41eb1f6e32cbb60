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

}  // namespace dnnx
